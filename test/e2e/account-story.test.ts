import { readFile } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { MailWorker } from '../../src/modules/mail/mail.worker.js';
import { createMailTransport } from '../../src/modules/mail/transport.js';
import { verifyLedger } from '../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import type { TestClient } from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { type Received, TestSmtpServer } from '../modules/mail/smtp.js';
import { launchChromium } from './helpers/chromium.js';

/**
 * A person's whole life with their account, in Chromium, with the mail a real SMTP server in this
 * process receives: sign-up with an address, its link, `email_verified` in userinfo; a forgotten
 * password reset from its link; a changed address; a changed password; the export; the deletion, after which the site's tokens are dead, search has forgotten
 * them and the username stays taken. The tests run in order and build on each other.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

const person = {
  username: 'story_teller',
  email: 'story@example.org',
  newEmail: 'teller@example.net',
  password: 'once upon a time in the west',
  resetPassword: 'a door that was locked opens',
  newPassword: 'and they lived happily ever after',
};
const redirectUri = 'https://games.example/callback';

const smtp = new TestSmtpServer();
let t: TestApp;
let worker: MailWorker;
let base: string;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let site: TestClient;
let tokens: { access_token: string; refresh_token: string };

/** The messages to `to` so far, waiting (a short while) for `count` of them to arrive. */
async function mailTo(to: string, count: number): Promise<Received[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const received = smtp.received.filter((mail) => mail.rcptTo.includes(to));
    if (received.length >= count || Date.now() > deadline) return received;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The first link under PUBLIC_URL with `path` in a message's plain-text part. */
function linkIn(mail: Received, path: string): string {
  const link = (mail.parsed.text ?? '').match(new RegExp(`${base}${path}\\?\\S+`))?.[0];
  if (!link) throw new Error(`no ${path} link in: ${mail.parsed.text}`);
  return link;
}

async function submit(selector: string): Promise<void> {
  await Promise.all([page.waitForEvent('load'), page.locator(selector).click()]);
}

/** Signs in on the sign-in page of `tab` and lands on the account page. */
async function signInOn(tab: Page, password: string): Promise<void> {
  await tab.goto(`${base}/signin`);
  await tab.locator('#username').fill(person.username);
  await tab.locator('#password').fill(password);
  await Promise.all([
    tab.waitForURL(`${base}/account`),
    tab.locator('form[action="/signin"] button[type="submit"]').click(),
  ]);
}

async function userinfo(accessToken: string) {
  return t.app.inject({
    method: 'GET',
    url: '/api/v1/oauth/userinfo',
    headers: { authorization: `Bearer ${accessToken}` },
  });
}

/** Signs in to the site through the browser (consent when asked) and exchanges the code. */
async function signInToSite(): Promise<{ access_token: string; refresh_token: string }> {
  const query = new URLSearchParams({
    client_id: site.clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid profile email offline_access',
    state: 'story',
  });
  // The site is not running: its callback is caught on the way, and its code read from the URL.
  let reached: (url: string) => void = () => undefined;
  const callback = new Promise<string>((resolve) => {
    reached = resolve;
  });
  await page.route(`${redirectUri}**`, async (route) => {
    reached(route.request().url());
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'signed in' });
  });
  await page.goto(`${base}/api/v1/oauth/authorize?${query}`);
  if (await page.locator('button[value="allow"]').count())
    await page.locator('button[value="allow"]').click();
  const code = new URL(await callback).searchParams.get('code') ?? '';
  await page.unrouteAll();
  const res = await exchangeCode(t.app, site, code);
  expect(res.statusCode).toBe(200);
  return res.json();
}

describe.skipIf(skipBrowserTests)('an account’s whole story, in Chromium, with real mail', () => {
  beforeAll(async () => {
    await smtp.start();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestApp({ env: { PUBLIC_URL: base, SMTP_URL: smtp.url() } });
    await t.app.listen({ host: '127.0.0.1', port });
    const ctx = { config: t.config, clock: t.clock };
    const quiet = { info: () => undefined, warn: () => undefined };
    worker = new MailWorker(t.database.db, ctx, createMailTransport(t.config, quiet), quiet);
    await worker.start(t.database.listen);
    const created = await createClient(t.database.db, ctx, {
      name: 'Northwind Games',
      siteUrl: 'https://games.example',
      redirectUris: [redirectUri],
    });
    site = { clientId: created.client_id, clientSecret: created.client_secret ?? '', redirectUri };
    browser = await launchChromium();
    context = await browser.newContext({ locale: 'en-GB', acceptDownloads: true });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
  }, 120_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await browser?.close();
    await worker?.stop();
    await t?.close();
    await smtp.stop();
  }, 60_000);

  it('signs up with an e-mail, confirms it from the link it receives, and the site sees it verified', async () => {
    await page.goto(`${base}/signup`);
    await page.locator('#username').fill(person.username);
    await page.locator('#email').fill(person.email);
    await page.locator('#password').fill(person.password);
    await submit('form[action="/signup"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/account');

    const [mail] = await mailTo(person.email, 1);
    expect(mail?.parsed.subject).toMatch(/confirm/i);
    await page.goto(linkIn(mail as Received, '/email/verify'));
    await submit('form[action="/email/verify"] button');
    expect(await page.locator('h1').textContent()).toMatch(/confirmed|verified/i);

    tokens = await signInToSite();
    const info = await userinfo(tokens.access_token);
    expect(info.json()).toMatchObject({ email: person.email, email_verified: true });
  });

  it('forgets the password and resets it from the mailed link: sessions and tokens end, the new one signs in', async () => {
    const elsewhere = await browser.newContext({ locale: 'en-GB' });
    const tab = await elsewhere.newPage();
    await signInOn(tab, person.password);

    const stranger = await browser.newContext({ locale: 'en-GB' });
    const asker = await stranger.newPage();
    await asker.goto(`${base}/signin`);
    await Promise.all([asker.waitForEvent('load'), asker.locator('a[href="/password/forgot"]').click()]);
    await asker.locator('#login').fill(person.email.toUpperCase());
    await Promise.all([asker.waitForEvent('load'), asker.locator('form button[type="submit"]').click()]);
    expect(await asker.locator('h1').textContent()).toBe('Check your e-mail');

    const [, mail] = await mailTo(person.email, 2);
    expect(mail?.parsed.subject).toMatch(/password/i);
    await asker.goto(linkIn(mail as Received, '/password/reset'));
    expect(await asker.locator('#revoke_apps').isChecked()).toBe(true);
    await asker.locator('#password').fill(person.resetPassword);
    await asker.locator('#passwordConfirm').fill(person.resetPassword);
    await Promise.all([asker.waitForEvent('load'), asker.locator('form button[type="submit"]').click()]);
    expect(await asker.locator('h1').textContent()).toBe('Your password is changed');
    await stranger.close();

    // Every session ended (this browser's and the other one's), and the site's tokens with them.
    for (const each of [page, tab]) {
      await each.goto(`${base}/account`);
      expect(new URL(each.url()).pathname).toBe('/signin');
    }
    await elsewhere.close();
    await t.sync();
    expectApiError(await userinfo(tokens.access_token), 401, 'invalid_token');
    await signInOn(page, person.resetPassword);
  });

  it('changes the address: the link goes to the new one, which then counts, and the old one is told', async () => {
    await page.goto(`${base}/account`);
    await Promise.all([page.waitForEvent('load'), page.locator('a[href="/account/email"]').first().click()]);
    await page.locator('#newEmail').fill(person.newEmail);
    await page.locator('#currentPassword').fill(person.resetPassword);
    await submit('form[action="/account/email"] button[type="submit"]');
    expect(page.url()).toBe(`${base}/account?notice=email_change_sent`);

    const [link] = await mailTo(person.newEmail, 1);
    await page.goto(linkIn(link as Received, '/email/verify'));
    await submit('form[action="/email/verify"] button');
    expect(await page.locator('main').textContent()).toContain(person.newEmail);

    // The confirmed address heard of the request at once, and of the change once it took effect.
    const [, , requested, notice] = await mailTo(person.email, 4);
    expect(requested?.parsed.subject).toBe('A new e-mail address was asked for your account');
    expect(requested?.parsed.text).toContain('t…@example.net');
    expect(notice?.parsed.text).toContain('t…@example.net');
    expect(notice?.parsed.text).toContain(`${base}/password/forgot`);

    tokens = await signInToSite();
    expect((await userinfo(tokens.access_token)).json()).toMatchObject({
      email: person.newEmail,
      email_verified: true,
    });
  });

  it('changes the password: the old one no longer signs in, the new one does', async () => {
    await page.goto(`${base}/account/password`);
    await page.locator('#currentPassword').fill(person.resetPassword);
    await page.locator('#newPassword').fill(person.newPassword);
    await page.locator('#passwordConfirm').fill(person.newPassword);
    // Both boxes come ticked; the person keeps the site signed in, and ends only the phones.
    expect(await page.locator('#sign_out_devices').isChecked()).toBe(true);
    expect(await page.locator('#revoke_apps').isChecked()).toBe(true);
    await page.locator('#revoke_apps').uncheck();
    await submit('form[action="/account/password"] button[type="submit"]');
    expect(page.url()).toBe(`${base}/account/password/changed?devices=1&apps=0`);
    expect(await page.locator('[role="status"]').textContent()).toMatch(/Every other browser is signed out/);

    const other = await browser.newContext({ locale: 'en-GB' });
    const tab = await other.newPage();
    await tab.goto(`${base}/signin`);
    await tab.locator('#username').fill(person.username);
    await tab.locator('#password').fill(person.resetPassword);
    await Promise.all([
      tab.waitForEvent('load'),
      tab.locator('form[action="/signin"] button[type="submit"]').click(),
    ]);
    expect(await tab.locator('[role="alert"]').textContent()).toMatch(/wrong/i);
    await signInOn(tab, person.newPassword);
    await other.close();
  });

  it('exports everything stored about the person as a JSON download', async () => {
    await page.goto(`${base}/account/export`);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('form[action="/account/export"] button').click(),
    ]);
    const data = JSON.parse(await readFile((await download.path()) as string, 'utf8'));
    expect(data.profile).toMatchObject({
      username: person.username,
      email: person.newEmail,
      email_verified: true,
    });
    expect(data.apps.map((app: { name: string }) => app.name)).toEqual(['Northwind Games']);
    expect(data.devices).toEqual([]);
    expect(data.wallet).toMatchObject({ currency: 'COIN', balance: 0, entries: [] });
  });

  it('deletes the account: the site’s tokens are dead, search has forgotten them, the name stays taken', async () => {
    // Minutes after the last sign-in, the deletion first asks the person to confirm it is them.
    t.clock.advance((t.config.REAUTH_MAX_AGE_SECONDS + 1) * 1000);
    await page.goto(`${base}/account/delete`);
    expect(new URL(page.url()).pathname).toBe('/account/reauthenticate');
    await page.locator('#password').fill(person.newPassword);
    await submit('form[action="/account/reauthenticate"] button[type="submit"]');
    expect(page.url()).toBe(`${base}/account/delete`);
    await page.locator('#password').fill(person.newPassword);
    await submit('form[action="/account/delete"] button[type="submit"]');
    expect(new URL(page.url()).pathname).toBe('/account/deleted');

    await t.sync();
    expectApiError(await userinfo(tokens.access_token), 401, 'invalid_token');
    const search = await t.app.inject({ method: 'GET', url: `/api/users/search?q=${person.username}` });
    expect(search.json().results).toEqual([]);

    await page.goto(`${base}/signup`);
    await page.locator('#username').fill(person.username);
    await page.locator('#password').fill('somebody else entirely');
    await submit('form[action="/signup"] button[type="submit"]');
    expect(await page.locator('#username-error').textContent()).toMatch(/already taken/);
    expect(await verifyLedger(t.database.db)).toMatchObject({ ok: true });
  });
});
