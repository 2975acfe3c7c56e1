import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findUserByUsername, updateUser } from '../../src/modules/accounts/accounts.repository.js';
import { disableUser } from '../../src/modules/accounts/accounts.service.js';
import { sendPasswordResetByOperator } from '../../src/modules/accounts/password-reset.service.js';
import { MAIL_LIMIT_PER_HOUR } from '../../src/modules/mail/mail.service.js';
import { MailWorker } from '../../src/modules/mail/mail.worker.js';
import { createMailTransport } from '../../src/modules/mail/transport.js';
import { listConsentsOfUser, saveConsent } from '../../src/modules/oauth/consents.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, forms, hiddenFieldsOf, unescapeHtml } from '../helpers/browser.js';
import { usingPostgres } from '../helpers/database.js';
import {
  depsOf,
  makeClient,
  makeOfficialApp,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';
import { TestSmtpServer } from '../modules/mail/smtp.js';

/*
 * Password recovery: `/password/forgot` answers alike whether an account matches
 * or not, and a match gets a `pr_` link through the outbox and a real SMTP server in this process;
 * `/password/reset` shows its form on GET (using nothing) and on POST sets the password once,
 * within 30 minutes, with the newest link only, ending sessions, devices and, when asked, apps.
 */

const PUBLIC_URL = 'https://id.example.test';
const NEW_PASSWORD = 'a brand new passphrase';
const smtp = new TestSmtpServer();
let t: TestApp;
let worker: MailWorker;
let officialApp: TestClient;
let site: TestClient;
const quiet = { info: () => undefined, warn: () => undefined };

beforeAll(async () => {
  await smtp.start();
  t = await createTestApp({ env: { PUBLIC_URL, SMTP_URL: smtp.url() } });
  worker = new MailWorker(t.database.db, depsOf(t).ctx, createMailTransport(t.config, quiet), quiet, {
    pollIntervalMs: 20,
  });
  officialApp = await makeOfficialApp(t);
  site = await makeClient(t, { name: 'Site' });
});

afterAll(async () => {
  await worker?.stop();
  await t?.close();
  await smtp.stop();
});

beforeEach(() => {
  smtp.received.length = 0;
});

/** Submits the forgot form (in `lang` when given), waits for the work after the answer, sends the outbox. */
async function forgot(login: string, lang?: string) {
  const browser = new Browser(t.app);
  const page = lang ? `/password/forgot?lang=${lang}` : '/password/forgot';
  const res = await browser.submit(page, '/password/forgot', { login });
  await t.app.afterResponse.idle();
  await worker.drain();
  return res;
}

/** The messages an address received. */
const mailTo = (address: string) => smtp.received.filter((mail) => mail.rcptTo.includes(address));

/** The reset link of a received message, from its plain-text part. */
function linkIn(text: string | undefined): string {
  const match = /https:\/\/\S+/.exec(text ?? '');
  expect(match).not.toBeNull();
  return match?.[0] ?? '';
}

async function linkFor(who: TestUser, email = `${who.username}@example.com`): Promise<string> {
  await forgot(who.username);
  const [mail, ...more] = mailTo(email);
  expect(more).toEqual([]);
  return linkIn(mail?.parsed.text);
}

const pathOf = (link: string) => link.slice(PUBLIC_URL.length);

/** Opens the link in a fresh browser and submits the form with `fields` (new password twice, revoke_apps ticked). */
async function reset(link: string, fields: Record<string, string> = {}, keepApps = false) {
  const browser = new Browser(t.app);
  const page = await browser.get(pathOf(link));
  if (page.statusCode !== 200) return page;
  const form = forms(page.body).find((each) => each.action === '/password/reset');
  expect(form).toBeDefined();
  const hidden = hiddenFieldsOf(form?.html ?? '');
  const body: Record<string, string> = {
    ...hidden,
    password: NEW_PASSWORD,
    password_confirm: NEW_PASSWORD,
    ...(keepApps ? {} : { revoke_apps: '1' }),
    ...fields,
  };
  return browser.post('/password/reset', body);
}

async function signsIn(who: { username: string }, password: string): Promise<boolean> {
  const browser = new Browser(t.app);
  const res = await browser.submit('/signin', '/signin', { username: who.username, password });
  return res.statusCode === 303;
}

const usedLinks = () =>
  t.database.db.selectFrom('password_resets').select('id').where('used_at', 'is not', null).execute();

/** A phone of the official app signs `who` in, keeping its key to refresh later. */
async function signInPhone(who: TestUser) {
  const keys = generateKeyPairSync('ed25519');
  const deviceId = `device-${Math.random().toString(36).slice(2, 12)}`;
  const res = await mobile('/api/v1/mobile/verify', keys.privateKey, deviceId, {
    public_key: keys.publicKey.export({ format: 'jwk' }).x as string,
    username: who.username,
    password: who.password,
  });
  expect(res.statusCode, res.body).toBe(200);
  return {
    deviceId,
    key: keys.privateKey,
    refreshToken: (res.json() as { refresh_token: string }).refresh_token,
  };
}

/** A mobile route that takes a fresh challenge signed by `key`. */
async function mobile(url: string, key: KeyObject, deviceId: string, body: Record<string, string>) {
  const post = (path: string, payload: unknown) =>
    t.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify(payload),
    });
  const base = { client_id: officialApp.clientId, device_id: deviceId };
  const { challenge } = (await post('/api/v1/mobile/challenge', base)).json() as { challenge: string };
  const signature = sign(null, Buffer.from(`${challenge}.${deviceId}`), key).toString('base64url');
  return post(url, { ...base, challenge, signature, ...body });
}

/** The site, remembered as allowed by `who` (as the consent page would). */
async function allowSite(who: TestUser): Promise<void> {
  const client = await t.database.db
    .selectFrom('clients')
    .select('id')
    .where('client_id', '=', site.clientId)
    .executeTakeFirstOrThrow();
  await saveConsent(t.database.db, {
    userId: who.id,
    clientPk: client.id,
    scopes: ['openid'],
    at: t.clock.now(),
  });
}

async function appToken(who: TestUser): Promise<string> {
  const res = await exchangeCode(t.app, site, await mintCode(t, site, who));
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { access_token: string }).access_token;
}

const userinfo = (token: string) =>
  t.app.inject({
    method: 'GET',
    url: '/api/v1/oauth/userinfo',
    headers: { authorization: `Bearer ${token}` },
  });

describe(`password recovery on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('the sign-in page links to the forgot page, which has a login field', async () => {
    const signin = await t.app.inject({ method: 'GET', url: '/signin' });
    expect(signin.body).toContain('<a href="/password/forgot">Forgot your password?</a>');
    const page = await t.app.inject({ method: 'GET', url: '/password/forgot' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('name="login"');
    expect(page.body).toContain('name="csrf_token"');
  });

  it('sends a link with both parts; GET uses nothing; the reset works once', async () => {
    const rita = await makeUser(t, { username: 'rita' });
    await forgot('rita');
    const [mail, ...more] = mailTo('rita@example.com');
    expect(more).toEqual([]);
    expect(mail?.parsed.subject).toBe('Reset your password');
    expect(mail?.parsed.headers.get('content-language')).toBe('en');
    expect(mail?.parsed.text).toContain('Hello, rita!');
    const link = linkIn(mail?.parsed.text);
    expect(link).toMatch(
      /^https:\/\/id\.example\.test\/password\/reset\?token=pr_[A-Za-z0-9_-]{43}&lang=en$/,
    );
    expect(mail?.parsed.html).toContain(`href="${link.replace('&', '&amp;')}"`);

    // Only the token's hash is stored.
    const token = new URL(link).searchParams.get('token') ?? '';
    const stored = await t.database.db.selectFrom('password_resets').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain(token);

    // A scanner opening the link twice: the form, and nothing used.
    for (let i = 0; i < 2; i++) {
      const page = await new Browser(t.app).get(pathOf(link));
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('Choose a new password');
      expect(page.body).toMatch(
        /<input type="checkbox" id="revoke_apps" name="revoke_apps" value="1" checked/,
      );
      expect(unescapeHtml(page.body)).toContain(token);
    }
    expect(await usedLinks()).toEqual([]);

    const res = await reset(link);
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('Your password is changed');
    expect(res.body).toContain('<a href="/signin">');
    expect(await signsIn(rita, NEW_PASSWORD)).toBe(true);
    expect(await signsIn(rita, rita.password)).toBe(false);
    const events = await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'subject', 'details'])
      .where('action', 'in', ['password_reset', 'password_reset_sent'])
      .where('subject', '=', `user:${rita.id}`)
      .orderBy('id')
      .execute();
    expect(events.map((event) => event.action)).toEqual(['password_reset_sent', 'password_reset']);
    expect(events[1]?.details).toMatchObject({ via: 'email link', sessions_ended: 0, apps_revoked: true });

    // Single use: the page and the form both refuse it, pointing to a new link.
    const again = await new Browser(t.app).get(pathOf(link));
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('This password reset link does not work');
    expect(again.body).toContain('<a href="/password/forgot">Ask for a new link</a>');
    const replay = await new Browser(t.app).post('/password/reset', {
      csrf_token: 'x',
      token,
      password: NEW_PASSWORD,
      password_confirm: NEW_PASSWORD,
    });
    expect(replay.statusCode).toBe(403); // no CSRF cookie: refused before anything
  });

  it('refuses a second use of the form, even with a valid CSRF token', async () => {
    const sam = await makeUser(t, { username: 'sam_twice' });
    const link = await linkFor(sam);
    const browser = new Browser(t.app);
    const page = await browser.get(pathOf(link));
    const hidden = hiddenFieldsOf(forms(page.body).find((f) => f.action === '/password/reset')?.html ?? '');
    const body = { ...hidden, password: NEW_PASSWORD, password_confirm: NEW_PASSWORD };
    expect((await browser.post('/password/reset', body)).statusCode).toBe(200);
    const second = await browser.post('/password/reset', {
      ...body,
      password: 'another new secret',
      password_confirm: 'another new secret',
    });
    expect(second.statusCode).toBe(400);
    expect(second.body).toContain('This password reset link does not work');
    expect(await signsIn(sam, NEW_PASSWORD)).toBe(true);
  });

  it('writes the message and the pages in Russian', async () => {
    await makeUser(t, { username: 'ivan_r' });
    const res = await forgot('ivan_r', 'ru');
    expect(res.body).toContain('Проверьте почту');
    const [mail] = mailTo('ivan_r@example.com');
    expect(mail?.parsed.subject).toBe('Сброс пароля');
    expect(mail?.parsed.headers.get('content-language')).toBe('ru');
    expect(mail?.parsed.text).toContain('Здравствуйте, ivan_r!');
    expect(mail?.parsed.html).toContain('Выбрать новый пароль');
    const link = linkIn(mail?.parsed.text);
    expect(link).toMatch(/&lang=ru$/);
    const page = await new Browser(t.app).get(pathOf(link));
    expect(page.body).toContain('Выберите новый пароль');
    const done = await reset(link);
    expect(done.body).toContain('Пароль изменён');
    const dead = await new Browser(t.app).get(pathOf(link));
    expect(dead.body).toContain('Запросить новую ссылку');
  });

  it('answers alike whether an account matches or not, and sends only to a match', async () => {
    await makeUser(t, { username: 'known_one' });
    const off = await makeUser(t, { username: 'disabled_one' });
    await disableUser(t.database.db, depsOf(t).ctx, { username: off.username });
    await makeUser(t, { username: 'no_mail', bare: true });
    const answers = [];
    for (const login of [
      'known_one',
      'KNOWN_ONE',
      'known_one@example.com',
      'nobody_here',
      'nobody@example.com',
      'disabled_one',
      'no_mail',
    ]) {
      const res = await forgot(login);
      answers.push({ status: res.statusCode, body: res.body, type: res.headers['content-type'] });
    }
    for (const answer of answers) expect(answer).toEqual(answers[0]);
    expect(answers[0]?.status).toBe(200);
    expect(answers[0]?.body).toContain('Check your e-mail');
    // The username (any case) and the address found the account; nothing else sent anything.
    expect(smtp.received.map((mail) => mail.rcptTo)).toEqual([
      ['known_one@example.com'],
      ['known_one@example.com'],
      ['known_one@example.com'],
    ]);
  });

  it('sends a shared confirmed address ONE message listing its accounts, each with its own link', async () => {
    const one = await makeUser(t, { username: 'twin_one', email: 'Family@Example.org' });
    const two = await makeUser(t, { username: 'twin_two', email: 'family@example.org' });
    await forgot('family@EXAMPLE.org');
    const [mail, ...more] = smtp.received;
    expect(more).toEqual([]);
    const text = mail?.parsed.text ?? '';
    expect(text).toContain('Account twin_one:');
    expect(text).toContain('Account twin_two:');
    const links = [...text.matchAll(/https:\/\/\S+/g)].map((match) => match[0]);
    expect(links).toHaveLength(2);
    expect(new Set(links).size).toBe(2);
    expect(mail?.parsed.html).toContain('Choose a new password for twin_one');
    // Each link resets its own account.
    const forOne = links[text.indexOf('twin_one') < text.indexOf('twin_two') ? 0 : 1] ?? '';
    expect((await reset(forOne)).statusCode).toBe(200);
    expect(await signsIn(one, NEW_PASSWORD)).toBe(true);
    expect(await signsIn(two, two.password)).toBe(true);
  });

  it('works until 30 minutes have passed, and not after', async () => {
    const early = await makeUser(t, { username: 'early_bird' });
    const late = await makeUser(t, { username: 'late_bird' });
    const earlyLink = await linkFor(early);
    const lateLink = await linkFor(late);
    t.clock.advance(30 * 60 * 1000 - 1);
    expect((await reset(earlyLink)).statusCode).toBe(200);
    t.clock.advance(2);
    const res = await reset(lateLink);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This password reset link does not work');
    expect(await signsIn(late, late.password)).toBe(true);
  });

  it('ends an older link once a newer one is sent', async () => {
    const nora = await makeUser(t, { username: 'nora_n' });
    const older = await linkFor(nora);
    smtp.received.length = 0;
    const newer = await linkFor(nora);
    expect(newer).not.toBe(older);
    expect((await new Browser(t.app).get(pathOf(older))).statusCode).toBe(400);
    expect((await reset(older)).statusCode).toBe(400);
    expect((await reset(newer)).statusCode).toBe(200);
  });

  it('sends at most five links an hour to an account; the last one sent keeps working', async () => {
    const lena = await makeUser(t, { username: 'lena_l' });
    for (let i = 0; i < MAIL_LIMIT_PER_HOUR + 2; i++) await forgot(lena.username);
    const received = mailTo(`${lena.username}@example.com`);
    expect(received).toHaveLength(MAIL_LIMIT_PER_HOUR);
    const last = linkIn(received.at(-1)?.parsed.text);
    expect((await reset(last)).statusCode).toBe(200);
    t.clock.advance(3600 * 1000 + 1);
    smtp.received.length = 0;
    await forgot(lena.username);
    expect(mailTo(`${lena.username}@example.com`)).toHaveLength(1);
    // The operator's `idp users send-reset` counts under the same limit, and says so.
    const send = () =>
      sendPasswordResetByOperator(t.database.db, depsOf(t).ctx, { username: 'lena_l', locale: 'en' });
    for (let i = 1; i < MAIL_LIMIT_PER_HOUR; i++) await send();
    await expect(send()).rejects.toThrow(/5 reset links in the last hour/);
  });

  it('refuses to send a link from the CLI to an unknown, deleted or disabled user, or one without an address', async () => {
    const { db, ctx } = depsOf(t);
    const send = (username: string) => sendPasswordResetByOperator(db, ctx, { username, locale: 'en' });
    await expect(send('nobody_here')).rejects.toThrow(/no user named nobody_here/);
    await makeUser(t, { username: 'Nomail', bare: true });
    await expect(send('nomail')).rejects.toThrow(/Nomail has no e-mail address/);
    const dina = await makeUser(t, { username: 'Dina' });
    await updateUser(db, dina.id, { disabledAt: t.clock.now(), updatedAt: t.clock.now() });
    await expect(send('dina')).rejects.toThrow(/Dina is disabled/);
    const gone = await makeUser(t, { username: 'Gone' });
    await updateUser(db, gone.id, {
      disabledAt: t.clock.now(),
      deletedAt: t.clock.now(),
      updatedAt: t.clock.now(),
    });
    await expect(send('gone')).rejects.toThrow(/Gone was deleted/);
    const queued = await db
      .selectFrom('mail_outbox')
      .select('id')
      .where('recipient', 'in', ['Dina@example.com', 'Gone@example.com'])
      .execute();
    expect(queued).toEqual([]);
  });

  it('ends sessions, devices and app access, and marks the address verified', async () => {
    const vera = await makeUser(t, { username: 'vera_v', email: 'vera@example.org', bare: true });
    const browser = new Browser(t.app);
    await browser.signIn(vera);
    expect((await browser.get('/account')).statusCode).toBe(200);
    const phone = await signInPhone(vera);
    await allowSite(vera);
    const token = await appToken(vera);
    expect((await userinfo(token)).statusCode).toBe(200);

    const res = await reset(await linkFor(vera, 'vera@example.org'));
    expect(res.statusCode).toBe(200);

    const account = await browser.get('/account');
    expect(account.statusCode).toBe(302);
    expect(account.headers.location).toBe('/signin?return_to=/account');
    const refresh = await mobile('/api/v1/mobile/refresh', phone.key, phone.deviceId, {
      refresh_token: phone.refreshToken,
    });
    expect(refresh.statusCode).toBe(400);
    expect(refresh.json()).toMatchObject({ error: 'invalid_grant' });
    const info = await userinfo(token);
    expect(info.statusCode).toBe(401);
    expect(info.json()).toMatchObject({ error: 'invalid_token' });
    expect((await findUserByUsername(t.database.db, 'vera_v'))?.emailVerified).toBe(true);
    // Each app must be allowed again, as the form says.
    expect(await listConsentsOfUser(t.database.db, vera.id)).toEqual([]);
  });

  it('keeps app access when the box is unticked, still ending sessions and devices', async () => {
    const kim = await makeUser(t, { username: 'kim_k' });
    const browser = new Browser(t.app);
    await browser.signIn(kim);
    const phone = await signInPhone(kim);
    await allowSite(kim);
    const token = await appToken(kim);

    const res = await reset(await linkFor(kim), {}, true);
    expect(res.statusCode).toBe(200);

    expect((await browser.get('/account')).statusCode).toBe(302);
    const refresh = await mobile('/api/v1/mobile/refresh', phone.key, phone.deviceId, {
      refresh_token: phone.refreshToken,
    });
    expect(refresh.statusCode).toBe(400);
    expect((await userinfo(token)).statusCode).toBe(200);
    expect(await listConsentsOfUser(t.database.db, kim.id)).toHaveLength(1);
    const event = await t.database.db
      .selectFrom('audit_events')
      .select('details')
      .where('action', '=', 'password_reset')
      .where('subject', '=', `user:${kim.id}`)
      .executeTakeFirstOrThrow();
    expect(event.details).toMatchObject({ apps_revoked: false, sessions_ended: 1, devices_signed_out: 1 });
  });

  it('refuses a link mailed to an address the account has left', async () => {
    const mo = await makeUser(t, { username: 'mover_m', email: 'old@example.org', bare: true });
    const link = await linkFor(mo, 'old@example.org');
    await updateUser(t.database.db, mo.id, { email: 'new@example.org', updatedAt: t.clock.now() });
    const res = await reset(link);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This password reset link does not work');
    expect(await signsIn(mo, mo.password)).toBe(true);
    expect((await findUserByUsername(t.database.db, 'mover_m'))?.emailVerified).toBe(false);
  });

  it('lets the owner sign in at once, whatever failed attempts came before', async () => {
    const lou = await makeUser(t, { username: 'locked_lou' });
    for (let i = 0; i < t.config.SIGN_IN_MAX_ATTEMPTS + 1; i++) await signsIn(lou, 'wrong guess!');
    expect(await signsIn(lou, lou.password)).toBe(false);
    expect((await reset(await linkFor(lou))).statusCode).toBe(200);
    expect(await signsIn(lou, NEW_PASSWORD)).toBe(true);
  });

  it('re-renders the form for a weak or unconfirmed password, using nothing', async () => {
    const wes = await makeUser(t, { username: 'weak_wes' });
    const link = await linkFor(wes);
    const short = await reset(link, { password: 'short', password_confirm: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('The new password must be at least 8 characters.');
    const mismatch = await reset(link, { password_confirm: 'something else entirely' });
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.body).toContain('The two new passwords are not the same.');
    expect(mismatch.body).not.toContain(NEW_PASSWORD);
    expect((await reset(link)).statusCode).toBe(200);
  });

  it('refuses malformed and unknown tokens, and forms without a CSRF token or a login', async () => {
    const browser = new Browser(t.app);
    for (const url of [
      '/password/reset',
      '/password/reset?token=ev_nope',
      '/password/reset?token=pr_unknown',
    ]) {
      const res = await browser.get(url);
      expect(res.statusCode, url).toBe(400);
      expect(res.body).toContain('This password reset link does not work');
    }
    expect((await browser.post('/password/forgot', { login: 'known_one' })).statusCode).toBe(403);
    const empty = await browser.submit('/password/forgot', '/password/forgot', { login: '  ' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Enter your username or e-mail address.');
  });
});
