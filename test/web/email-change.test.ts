import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findUserByUsername, updateUser } from '../../src/modules/accounts/accounts.repository.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { MAIL_LIMIT_PER_HOUR } from '../../src/modules/mail/mail.service.js';
import { MailWorker } from '../../src/modules/mail/mail.worker.js';
import { createMailTransport } from '../../src/modules/mail/transport.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFields, hiddenFieldsOf, unescapeHtml } from '../helpers/browser.js';
import { usingPostgres } from '../helpers/database.js';
import { TestSmtpServer } from '../modules/mail/smtp.js';

/*
 * Changing the e-mail address (`/account/email`): the new address takes effect only
 * when verified through a link sent to it, and the old address is told. The mail worker sends what
 * the outbox holds to a real SMTP server in this process.
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

let userCount = 0;
/** A signed-in user whose address (when given) is verified, as an operator may set it. */
async function signedInUser(email: string | undefined, emailVerified = true) {
  userCount += 1;
  const username = `mailer_${userCount}`;
  const user = await createUser(t.database.db, ctx(), { username, password: PASSWORD, email, emailVerified });
  const browser = new Browser(t.app);
  await browser.signIn({ username, password: PASSWORD });
  return { id: user.id, username, browser };
}

/** Asks for a change on the page (in `lang` when given). */
function requestChange(browser: Browser, newEmail: string, lang?: string, password = PASSWORD) {
  const page = lang ? `/account/email?lang=${lang}` : '/account/email';
  return browser.submit(page, '/account/email', { new_email: newEmail, current_password: password });
}

/** Sends what the outbox holds; the messages received for `to`. */
async function deliveredTo(to: string) {
  await worker.drain();
  return smtp.received.filter((mail) => mail.rcptTo.includes(to));
}

/** The link of a received message, from its plain-text part. */
function linkIn(text: string | undefined): string {
  const match = /https:\/\/\S+/.exec(text ?? '');
  expect(match).not.toBeNull();
  return match?.[0] ?? '';
}

/**
 * Opens the link in a fresh browser (no session) and presses the confirm button; a link that no
 * longer works answers with its error page already.
 */
async function confirm(link: string): Promise<LightMyRequestResponse> {
  const browser = new Browser(t.app);
  const page = await browser.get(link.slice(PUBLIC_URL.length));
  if (page.statusCode !== 200) return page;
  const form = forms(page.body).find((each) => each.action === '/email/verify');
  expect(form).toBeDefined();
  return browser.post('/email/verify', hiddenFieldsOf(form?.html ?? ''));
}

async function addressOf(username: string) {
  const user = await findUserByUsername(t.database.db, username);
  return { email: user?.email, emailVerified: user?.emailVerified };
}

async function audit(action: string, userId: number) {
  return t.database.db
    .selectFrom('audit_events')
    .select(['actor', 'subject', 'details'])
    .where('action', '=', action)
    .where('subject', '=', `user:${userId}`)
    .execute();
}

describe(`changing the e-mail address on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends the link to the new address only, changes nothing until it is used, then tells the old address', async () => {
    const { id, username, browser } = await signedInUser('old@example.org');
    const page = await browser.get('/account/email');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('old@example.org (confirmed)');
    // A verified address has nothing to re-send.
    expect(forms(page.body).map((form) => form.action)).toEqual(['/account/email']);

    const res = await requestChange(browser, 'new@example.org');
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=email_change_sent');
    expect((await browser.get(res.headers.location as string)).body).toContain(
      'A link was sent to the new address.',
    );

    await worker.drain();
    // The link goes to the new address; the confirmed old one is told of the request at once.
    expect(smtp.received.map((mail) => mail.rcptTo)).toEqual([['new@example.org'], ['old@example.org']]);
    const [mail, told] = smtp.received;
    expect(told?.parsed.subject).toBe('A new e-mail address was asked for your account');
    expect(told?.parsed.text).toContain('n…@example.org');
    expect(told?.parsed.text).not.toContain('new@example.org');
    expect(mail?.parsed.subject).toBe('Confirm your new e-mail address');
    expect(mail?.parsed.headers.get('content-language')).toBe('en');
    expect(mail?.parsed.text).toContain(`Hello, ${username}!`);
    const link = linkIn(mail?.parsed.text);
    expect(link).toMatch(/^https:\/\/id\.example\.test\/email\/verify\?token=ev_[A-Za-z0-9_-]{43}&lang=en$/);
    expect(mail?.parsed.html).toContain(`href="${link.replace('&', '&amp;')}"`);

    // Nothing changed yet; the page says where the link went.
    expect(await addressOf(username)).toEqual({ email: 'old@example.org', emailVerified: true });
    expect((await browser.get('/account/email')).body).toContain('A link was sent to new@example.org.');
    expect(await audit('email_change_requested', id)).toEqual([
      { actor: `user:${id}`, subject: `user:${id}`, details: { to: 'n…@example.org' } },
    ]);

    smtp.received.length = 0;
    const done = await confirm(link);
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('Thank you: new@example.org is now your confirmed address.');
    expect(await addressOf(username)).toEqual({ email: 'new@example.org', emailVerified: true });
    expect(await audit('email_changed', id)).toEqual([
      {
        actor: `user:${id}`,
        subject: `user:${id}`,
        details: { from: 'o…@example.org', to: 'n…@example.org' },
      },
    ]);

    // The old address is told, with the new one masked and where to reset the password.
    await worker.drain();
    expect(smtp.received.map((each) => each.rcptTo)).toEqual([['old@example.org']]);
    const notice = smtp.received[0];
    expect(notice?.parsed.subject).toBe('Your e-mail address was changed');
    expect(notice?.parsed.text).toContain('was changed to n…@example.org');
    expect(notice?.parsed.text).toContain(`${PUBLIC_URL}/password/forgot?lang=en`);
    expect(notice?.parsed.html).toContain(`href="${PUBLIC_URL}/password/forgot?lang=en"`);
    expect(`${notice?.parsed.text}${notice?.parsed.html}`).not.toContain('new@example.org');

    // Single use; nothing pending any more.
    expect((await confirm(link)).statusCode).toBe(400);
    expect((await browser.get('/account/email')).body).not.toContain('A link was sent to');
  });

  it('keeps only the newest change link working', async () => {
    const { username, browser } = await signedInUser('first@example.org');
    expect((await requestChange(browser, 'second@example.org')).statusCode).toBe(303);
    expect((await requestChange(browser, 'third@example.org')).statusCode).toBe(303);
    const [older] = await deliveredTo('second@example.org');
    const [newer] = await deliveredTo('third@example.org');
    expect((await browser.get('/account/email')).body).toContain('A link was sent to third@example.org.');

    const dead = await confirm(linkIn(older?.parsed.text));
    expect(dead.statusCode).toBe(400);
    expect(dead.body).toContain('This confirmation link does not work');
    expect(await addressOf(username)).toEqual({ email: 'first@example.org', emailVerified: true });

    expect((await confirm(linkIn(newer?.parsed.text))).statusCode).toBe(200);
    expect(await addressOf(username)).toEqual({ email: 'third@example.org', emailVerified: true });
  });

  it('does not let the sign-up link of the old address verify anything after the change', async () => {
    const browser = new Browser(t.app);
    const signUp = await browser.submit('/signup', '/signup', {
      username: 'switcher',
      password: PASSWORD,
      email: 'before@example.org',
    });
    expect(signUp.statusCode).toBe(303);
    const [verification] = await deliveredTo('before@example.org');
    const signUpLink = linkIn(verification?.parsed.text);

    expect((await requestChange(browser, 'after@example.org')).statusCode).toBe(303);
    const [change] = await deliveredTo('after@example.org');
    expect((await confirm(linkIn(change?.parsed.text))).statusCode).toBe(200);
    expect(await addressOf('switcher')).toEqual({ email: 'after@example.org', emailVerified: true });
    // The unverified old address is told all the same.
    expect(await deliveredTo('before@example.org')).toHaveLength(2);

    const old = await confirm(signUpLink);
    expect(old.statusCode).toBe(400);
    expect(await addressOf('switcher')).toEqual({ email: 'after@example.org', emailVerified: true });
  });

  it('adds an address to an account without one, with no notice to send', async () => {
    const { id, username, browser } = await signedInUser(undefined);
    const page = await browser.get('/account/email');
    expect(page.body).toContain('Your account has no e-mail address.');
    expect((await requestChange(browser, 'added@example.org')).statusCode).toBe(303);
    const [mail] = await deliveredTo('added@example.org');
    smtp.received.length = 0;
    expect((await confirm(linkIn(mail?.parsed.text))).statusCode).toBe(200);
    expect(await addressOf(username)).toEqual({ email: 'added@example.org', emailVerified: true });
    expect(await worker.drain()).toBe(0);
    expect(await audit('email_changed', id)).toEqual([
      { actor: `user:${id}`, subject: `user:${id}`, details: { from: null, to: 'a…@example.org' } },
    ]);
  });

  it('treats a change link for an address that became the user’s meanwhile as a confirmation', async () => {
    const { id, username, browser } = await signedInUser('was@example.org');
    expect((await requestChange(browser, 'set@example.org')).statusCode).toBe(303);
    const [mail] = await deliveredTo('set@example.org');
    // Another change (here an operator's) made it the user's address, unverified.
    await updateUser(t.database.db, id, {
      email: 'set@example.org',
      emailVerified: false,
      updatedAt: t.clock.now(),
    });
    smtp.received.length = 0;

    const res = await confirm(linkIn(mail?.parsed.text));
    expect(res.statusCode).toBe(200);
    expect(await addressOf(username)).toEqual({ email: 'set@example.org', emailVerified: true });
    expect(await worker.drain()).toBe(0);
    expect(await audit('email_changed', id)).toEqual([]);
    expect(await audit('email_verified', id)).toHaveLength(1);
  });

  it('re-sends the verification link of an unverified address', async () => {
    const { username, browser } = await signedInUser('unsure@example.org', false);
    const page = await browser.get('/account/email');
    expect(page.body).toContain('unsure@example.org (not confirmed)');
    const res = await browser.submit('/account/email', '/account/email/resend', {});
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account?notice=verification_sent');
    expect((await browser.get(res.headers.location as string)).body).toContain(
      'A new confirmation link was sent to your address.',
    );

    const [mail, ...more] = await deliveredTo('unsure@example.org');
    expect(more).toEqual([]);
    expect(mail?.parsed.subject).toBe('Confirm your e-mail address');
    const done = await confirm(linkIn(mail?.parsed.text));
    expect(done.statusCode).toBe(200);
    expect(done.body).toContain('unsure@example.org is now your confirmed address');
    expect(await addressOf(username)).toEqual({ email: 'unsure@example.org', emailVerified: true });

    // Verified now: nothing to re-send (the form is gone, a stale one is refused).
    const stale = await browser.post('/account/email/resend', {
      csrf_token: hiddenFields(page.body, '/account/email/resend').csrf_token as string,
    });
    expect(stale.statusCode).toBe(400);
    expect(await worker.drain()).toBe(0);
  });

  it('sends at most five links of each kind an hour; a sixth change leaves the fifth link working', async () => {
    const { username, browser } = await signedInUser('busy@example.org', false);
    for (let i = 1; i <= MAIL_LIMIT_PER_HOUR; i++)
      expect((await requestChange(browser, `busy${i}@example.org`)).statusCode).toBe(303);
    const refused = await requestChange(browser, 'busy6@example.org');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('We sent 5 links to new addresses in the last hour.');
    expect(await deliveredTo('busy6@example.org')).toEqual([]);
    const [fifth] = await deliveredTo('busy5@example.org');
    expect((await confirm(linkIn(fifth?.parsed.text))).statusCode).toBe(200);
    expect(await addressOf(username)).toEqual({ email: 'busy5@example.org', emailVerified: true });

    // Re-sent confirmation links are a kind of their own, limited alike.
    const other = await signedInUser('again@example.org', false);
    for (let i = 0; i < MAIL_LIMIT_PER_HOUR; i++)
      expect((await other.browser.submit('/account/email', '/account/email/resend', {})).statusCode).toBe(
        303,
      );
    const sixth = await other.browser.submit('/account/email', '/account/email/resend', {});
    expect(sixth.statusCode).toBe(429);
    expect(sixth.body).toContain('Too many e-mails for now');
    expect(await deliveredTo('again@example.org')).toHaveLength(MAIL_LIMIT_PER_HOUR);
  });

  it('refuses bad input by the field with a 400 page, queueing nothing', async () => {
    const { id, username, browser } = await signedInUser('stay@example.org');
    const cases: Array<[Record<string, string>, string]> = [
      [{ new_email: '   ' }, 'Enter the new e-mail address.'],
      [{ new_email: 'not an address' }, 'Enter a valid e-mail address.'],
      [{ new_email: `${'a'.repeat(250)}@example.org` }, 'The e-mail address must be at most 254 characters.'],
      [{ new_email: 'stay@example.org' }, 'This is already your address; enter another one.'],
      [{ new_email: 'next@example.org', current_password: '' }, 'Enter your current password.'],
      [
        { new_email: 'next@example.org', current_password: 'wrong password!' },
        'This is not your current password.',
      ],
    ];
    for (const [fields, problem] of cases) {
      const res = await browser.submit('/account/email', '/account/email', {
        current_password: PASSWORD,
        ...fields,
      });
      expect(res.statusCode, problem).toBe(400);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.body).toContain('Correct the fields marked below.');
      expect(unescapeHtml(res.body)).toContain(problem);
      expect(res.body).toContain('aria-invalid="true"');
      expect(res.body).not.toContain(PASSWORD);
    }
    expect(await audit('email_change_failed', id)).toHaveLength(1);
    expect(await audit('email_change_requested', id)).toEqual([]);
    expect(await worker.drain()).toBe(0);
    expect(await addressOf(username)).toEqual({ email: 'stay@example.org', emailVerified: true });

    // The hidden username must be the signed-in account's.
    const other = await browser.submit('/account/email', '/account/email', {
      username: 'someone_else',
      new_email: 'next@example.org',
      current_password: PASSWORD,
    });
    expect(other.statusCode).toBe(400);
    expect(await worker.drain()).toBe(0);
  });

  it('needs the CSRF token and a session', async () => {
    const { username, browser } = await signedInUser('guarded@example.org', false);
    for (const action of ['/account/email', '/account/email/resend']) {
      const forged = await browser.post(action, {
        username,
        new_email: 'x@example.org',
        current_password: PASSWORD,
      });
      expect(forged.statusCode, action).toBe(403);
      expect(forged.body).toContain('This form has expired');
    }
    expect(await worker.drain()).toBe(0);

    const stranger = new Browser(t.app);
    const page = await stranger.get('/account/email');
    expect(page.statusCode).toBe(302);
    expect(page.headers.location).toBe('/signin?return_to=/account');
    const csrf = hiddenFields((await stranger.get('/signin')).body, '/signin').csrf_token as string;
    for (const action of ['/account/email', '/account/email/resend']) {
      const post = await stranger.post(action, { csrf_token: csrf, new_email: 'x@example.org' });
      expect(post.statusCode, action).toBe(303);
      expect(post.headers.location).toBe('/signin?return_to=/account');
    }
    expect(await worker.drain()).toBe(0);
    expect(await addressOf(username)).toEqual({ email: 'guarded@example.org', emailVerified: false });
  });

  it('speaks Russian: the page, the link’s message and the notice', async () => {
    const { username, browser } = await signedInUser('staryj@example.org', false);
    const page = await browser.get('/account/email?lang=ru');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-language']).toBe('ru');
    expect(page.body).toContain('<h1>Адрес электронной почты</h1>');
    expect(page.body).toContain('staryj@example.org (не подтверждён)');
    expect(page.body).toContain('Отправить новую ссылку');

    const refused = await requestChange(browser, '', 'ru');
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Введите новый адрес электронной почты.');

    expect((await requestChange(browser, 'novyj@example.org', 'ru')).statusCode).toBe(303);
    const [mail] = await deliveredTo('novyj@example.org');
    expect(mail?.parsed.subject).toBe('Подтвердите новый адрес электронной почты');
    expect(mail?.parsed.headers.get('content-language')).toBe('ru');
    const link = linkIn(mail?.parsed.text);
    expect(link).toMatch(/&lang=ru$/);
    expect((await browser.get('/account/email')).body).toContain('Ссылка отправлена на novyj@example.org.');

    smtp.received.length = 0;
    const done = await confirm(link);
    expect(done.body).toContain('Спасибо: теперь ваш подтверждённый адрес — novyj@example.org.');
    expect(await addressOf(username)).toEqual({ email: 'novyj@example.org', emailVerified: true });
    const [notice] = await deliveredTo('staryj@example.org');
    expect(notice?.parsed.subject).toBe('Адрес электронной почты изменён');
    expect(notice?.parsed.text).toContain('изменён на n…@example.org');
    expect(notice?.parsed.text).toContain(`${PUBLIC_URL}/password/forgot?lang=ru`);
  });

  it('stores each link’s purpose: `verify` unless said otherwise, nothing but `verify` or `change`', async () => {
    const { id } = await signedInUser('rows@example.org');
    const row = {
      user_id: id,
      email: 'rows@example.org',
      created_at: t.clock.now(),
      expires_at: t.clock.now(),
    };
    const stored = await t.database.db
      .insertInto('email_verifications')
      .values({ ...row, token_hash: 'hash-default' })
      .returning('purpose')
      .executeTakeFirst();
    expect(stored?.purpose).toBe('verify');
    await expect(
      t.database.db
        .insertInto('email_verifications')
        // @ts-expect-error: not a purpose, which the check constraint refuses too.
        .values({ ...row, token_hash: 'hash-other', purpose: 'other' })
        .execute(),
    ).rejects.toThrow(/check constraint/);
  });
});
