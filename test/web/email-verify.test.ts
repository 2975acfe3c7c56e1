import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findUserByUsername, updateUser } from '../../src/modules/accounts/accounts.repository.js';
import { verificationMail } from '../../src/modules/accounts/verification-mail.js';
import { purgeExpired } from '../../src/modules/housekeeping/purge.service.js';
import { MailWorker } from '../../src/modules/mail/mail.worker.js';
import { createMailTransport } from '../../src/modules/mail/transport.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFieldsOf, unescapeHtml } from '../helpers/browser.js';
import { usingPostgres } from '../helpers/database.js';
import { TestSmtpServer } from '../modules/mail/smtp.js';

/*
 * E-mail verification: sign-up with an e-mail queues a link in the sign-up's
 * transaction; the mail worker sends it to a real SMTP server in this process; the link's page
 * shows a button (GET changes nothing) and its POST verifies, once, within 24 hours.
 */

const PUBLIC_URL = 'https://id.example.test';
const PASSWORD = 'correct horse battery';
const smtp = new TestSmtpServer();
let t: TestApp;
let worker: MailWorker;
const quiet = { info: () => undefined, warn: () => undefined };

const ctx = () => ({ config: t.config, clock: t.clock });

beforeAll(async () => {
  await smtp.start();
  t = await createTestApp({ env: { PUBLIC_URL, SMTP_URL: smtp.url() } });
  worker = new MailWorker(t.database.db, ctx(), createMailTransport(t.config, quiet), quiet);
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await smtp.stop();
});

beforeEach(() => {
  smtp.received.length = 0;
});

/** Signs up on the page (in `lang` when given) and sends what the outbox holds. */
async function signUp(username: string, email: string, lang?: string) {
  const browser = new Browser(t.app);
  const page = lang ? `/signup?lang=${lang}` : '/signup';
  const res = await browser.submit(page, '/signup', { username, password: PASSWORD, email });
  expect(res.statusCode).toBe(303);
  await worker.drain();
  return smtp.received.filter((mail) => mail.rcptTo.includes(email));
}

/** The verification link of a received message, from its plain-text part. */
function linkIn(text: string | undefined): string {
  const match = /https:\/\/\S+/.exec(text ?? '');
  expect(match).not.toBeNull();
  return match?.[0] ?? '';
}

/**
 * Opens the link in a fresh browser (no session) and presses the confirm button; a link that no
 * longer works answers with its error page already.
 */
async function confirm(link: string) {
  const browser = new Browser(t.app);
  const path = link.slice(PUBLIC_URL.length);
  const page = await browser.get(path);
  if (page.statusCode !== 200) return page;
  const form = forms(page.body).find((each) => each.action === '/email/verify');
  expect(form).toBeDefined();
  return browser.post('/email/verify', hiddenFieldsOf(form?.html ?? ''));
}

async function verified(username: string): Promise<boolean | undefined> {
  return (await findUserByUsername(t.database.db, username))?.emailVerified;
}

describe(`e-mail verification on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends one message with both parts and an absolute link; GET shows a button and changes nothing; POST verifies once', async () => {
    const [mail, ...more] = await signUp('verity', 'verity@example.org');
    expect(more).toEqual([]);
    expect(mail?.parsed.subject).toBe('Confirm your e-mail address');
    expect(mail?.parsed.headers.get('content-language')).toBe('en');
    const link = linkIn(mail?.parsed.text);
    expect(link).toMatch(/^https:\/\/id\.example\.test\/email\/verify\?token=ev_[A-Za-z0-9_-]{43}&lang=en$/);
    expect(mail?.parsed.html).toContain(`href="${link.replace('&', '&amp;')}"`);
    expect(mail?.parsed.text).toContain('verity');

    // Only the token's hash is stored.
    const token = new URL(link).searchParams.get('token') ?? '';
    const stored = await t.database.db.selectFrom('email_verifications').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(token);

    // A scanner opening the link: a page with a button, nothing verified.
    const page = await new Browser(t.app).get(link.slice(PUBLIC_URL.length));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Confirm the address');
    expect(unescapeHtml(page.body)).toContain(token);
    expect(await verified('verity')).toBe(false);

    const res = await confirm(link);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Your e-mail address is confirmed');
    expect(await verified('verity')).toBe(true);
    const user = await findUserByUsername(t.database.db, 'verity');
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'subject'])
      .where('action', '=', 'email_verified')
      .execute();
    expect(events).toEqual([{ action: 'email_verified', subject: `user:${user?.id}` }]);

    // Single use.
    const again = await confirm(link);
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('This confirmation link does not work');
  });

  it('writes the message in the language of the sign-up page', async () => {
    const [mail] = await signUp('ivan', 'ivan@example.org', 'ru');
    expect(mail?.parsed.subject).toBe('Подтвердите адрес электронной почты');
    expect(mail?.parsed.headers.get('content-language')).toBe('ru');
    expect(mail?.parsed.text).toContain('Здравствуйте, ivan!');
    expect(mail?.parsed.html).toContain('Подтвердить адрес');
    const link = linkIn(mail?.parsed.text);
    expect(link.startsWith(`${PUBLIC_URL}/email/verify?token=ev_`)).toBe(true);
    const res = await confirm(link);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Адрес электронной почты подтверждён');
  });

  it('escapes the username in the HTML part', () => {
    const mail = verificationMail({
      to: 'a@example.org',
      username: '<b>&"x"',
      locale: 'en',
      link: `${PUBLIC_URL}/email/verify?token=ev_a&b`,
    });
    expect(mail.html).toContain('Hello, &lt;b&gt;&amp;&quot;x&quot;!');
    expect(mail.html).toContain(`href="${PUBLIC_URL}/email/verify?token=ev_a&amp;b"`);
    expect(mail.text).toContain('Hello, <b>&"x"!');
  });

  it('refuses a link 24 hours old', async () => {
    const [mail] = await signUp('late', 'late@example.org');
    t.clock.advance(24 * 3600 * 1000);
    const res = await confirm(linkIn(mail?.parsed.text));
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This confirmation link does not work');
    expect(await verified('late')).toBe(false);
    // Housekeeping removes expired links.
    t.clock.advance(1);
    const report = await purgeExpired(t.database.db, ctx(), { batchSize: 100, pauseMs: 0 });
    expect(report.email_verifications).toBeGreaterThanOrEqual(1);
    const left = await t.database.db
      .selectFrom('email_verifications')
      .select('id')
      .where('expires_at', '<', t.clock.now())
      .execute();
    expect(left).toEqual([]);
  });

  it('sends nothing for a sign-up without an e-mail', async () => {
    const browser = new Browser(t.app);
    const res = await browser.submit('/signup', '/signup', {
      username: 'nomail',
      password: PASSWORD,
      email: '',
    });
    expect(res.statusCode).toBe(303);
    expect(await worker.drain()).toBe(0);
    expect(smtp.received).toEqual([]);
  });

  it('sends nothing and keeps no link when the sign-up is refused', async () => {
    const before = await t.database.db.selectFrom('email_verifications').select('id').execute();
    const browser = new Browser(t.app);
    const res = await browser.submit('/signup', '/signup', {
      username: 'verity',
      password: PASSWORD,
      email: 'someone@example.org',
    });
    expect(res.statusCode).toBe(400);
    expect(await worker.drain()).toBe(0);
    expect(await t.database.db.selectFrom('email_verifications').select('id').execute()).toEqual(before);
  });

  it('does not verify an address the link was not sent to', async () => {
    const [mail] = await signUp('mover', 'old@example.org');
    const user = await findUserByUsername(t.database.db, 'mover');
    await updateUser(t.database.db, user?.id ?? 0, {
      email: 'new@example.org',
      emailVerified: false,
      updatedAt: t.clock.now(),
    });
    const res = await confirm(linkIn(mail?.parsed.text));
    expect(res.statusCode).toBe(400);
    expect(await verified('mover')).toBe(false);
  });

  it('refuses a link with an unknown or malformed token', async () => {
    const browser = new Browser(t.app);
    expect((await browser.get('/email/verify')).statusCode).toBe(400);
    expect((await browser.get('/email/verify?token=pr_nope')).statusCode).toBe(400);
    const res = await confirm(`${PUBLIC_URL}/email/verify?token=ev_unknown`);
    expect(res.statusCode).toBe(400);
  });
});
