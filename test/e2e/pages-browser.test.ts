import { mkdir } from 'node:fs/promises';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, updateUserProfile } from '../../src/modules/accounts/accounts.service.js';
import { resendEmailVerification } from '../../src/modules/accounts/email-verification.service.js';
import { sendPasswordResetByOperator } from '../../src/modules/accounts/password-reset.service.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { saveConsent } from '../../src/modules/oauth/consents.repository.js';
import type { Locale } from '../../src/web/i18n/index.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import {
  describeViolations,
  runAxe,
  SCREENSHOTS,
  saveScreenshot,
  WIDTHS,
  type Width,
} from './helpers/page-checks.js';

/**
 * Every page in Chromium, in both languages, on a 360 px phone and a 1280 px desktop: the page is
 * in the expected language, nothing scrolls sideways, axe-core finds no serious or critical
 * accessibility problem (in the light and the dark color scheme), and the page is photographed
 * into docs/screenshots/ (light scheme).
 *
 * The pages keep their real CSP (`script-src 'self'`: the service's own show-password script, nothing
 * inline): axe is evaluated through the DevTools protocol (`page.evaluate`), which the page's CSP
 * does not govern, so no CSP is bypassed. The show-password toggle is tried with the script, and
 * the sign-in without any script at all.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

/** What the browser sends as Accept-Language for each locale (Chromium's own form). */
const BROWSER_LOCALES: Record<Locale, string> = { en: 'en-GB', ru: 'ru-RU' };

/** A text each page shows in each language: proof that it is the page asked for, translated. */
const HEADINGS: Record<string, Record<Locale, RegExp>> = {
  signin: { en: /^Sign in$/, ru: /^Вход$/ },
  'signin-error': { en: /^Sign in$/, ru: /^Вход$/ },
  signup: { en: /^Create an account$/, ru: /^Создание аккаунта$/ },
  'signup-error': { en: /^Create an account$/, ru: /^Создание аккаунта$/ },
  consent: { en: /^Allow Northwind Games to use/, ru: /^Разрешить «Northwind Games» доступ/ },
  account: { en: /^Your account$/, ru: /^Ваш аккаунт$/ },
  error: { en: /^This sign-in link is not valid$/, ru: /^Ссылка для входа недействительна$/ },
  'error-redirect-uri': { en: /^This sign-in link is not valid$/, ru: /^Ссылка для входа недействительна$/ },
  forgot: { en: /^Forgot your password\?$/, ru: /^Забыли пароль\?$/ },
  'forgot-sent': { en: /^Check your e-mail$/, ru: /^Проверьте почту$/ },
  reset: { en: /^Choose a new password$/, ru: /^Выберите новый пароль$/ },
  verify: { en: /^Confirm your e-mail address$/, ru: /^Подтвердите адрес электронной почты$/ },
  verified: { en: /^Your e-mail address is confirmed$/, ru: /^Адрес электронной почты подтверждён$/ },
  'signed-out': { en: /^You are signed out$/, ru: /^Вы вышли из аккаунта$/ },
  logout: { en: /^Sign out\?$/, ru: /^Выйти из аккаунта\?$/ },
};

/** Pages photographed into docs/screenshots/ (the others are checked only). */
const PHOTOGRAPHED = new Set([
  'signin',
  'signin-error',
  'signup',
  'consent',
  'account',
  'profile',
  'password',
  'email',
  'forgot',
  'forgot-sent',
  'reset',
  'verify',
  'verified',
  'export',
  'delete',
  'error',
  'error-redirect-uri',
  'logout',
  'signed-out',
]);
/** Pages longer than a screen, photographed whole. */
const LONG_PAGES = new Set(['consent', 'account']);

const user = { username: 'alice', password: 'correct horse battery', displayName: 'Alice Liddell' };

let t: TestApp;
let base: string;
/** The path and query of a live reset link for alice; a GET uses nothing, so it serves every visit. */
let resetLink: string;
/** One confirmation link per visit of the confirmation pages (its POST uses it). */
const verifyLinks: string[] = [];
let browser: Browser;
let clientId: string;
const redirectUri = 'https://games.example/callback';
const contexts: BrowserContext[] = [];

/** The checks every page passes, and its screenshot. */
async function inspect(page: Page, name: string, locale: Locale, width: Width): Promise<void> {
  const label = `${name} (${locale}, ${width})`;
  expect(await page.locator('html').getAttribute('lang'), label).toBe(locale);
  expect((await page.locator('h1').textContent())?.trim(), label).toMatch(HEADINGS[name]?.[locale] ?? /./);

  // Nothing wider than the screen: no sideways scrolling on a phone.
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth, `${label}: scrollWidth`).toBeLessThanOrEqual(WIDTHS[width].width);

  const photograph = (file: string) => saveScreenshot(page, file, { fullPage: LONG_PAGES.has(name) });
  for (const colorScheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme });
    const violations = await runAxe(page);
    const blocking = violations.filter((violation) =>
      ['serious', 'critical'].includes(violation.impact ?? ''),
    );
    expect(describeViolations(blocking), `${label}, ${colorScheme}: axe`).toEqual([]);
    // Lesser findings are reported, not failed.
    for (const line of describeViolations(violations))
      console.error(`axe, ${label}, ${colorScheme}: ${line}`);
    // One page in the dark scheme, for the documentation.
    if (colorScheme === 'dark' && name === 'signin-error' && width === 'phone') {
      await photograph(`${name}-${locale}-${width}-dark`);
    }
  }
  if (PHOTOGRAPHED.has(name)) await photograph(`${name}-${locale}-${width}`);
}

async function signIn(page: Page): Promise<void> {
  await page.goto(`${base}/signin`);
  await page.locator('#username').fill(user.username);
  await page.locator('#password').fill(user.password);
  await Promise.all([
    page.waitForURL(`${base}/account`),
    page.locator('form[action="/signin"] button[type="submit"]').click(),
  ]);
}

function authorizeUrl(): string {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    scope: 'openid profile email offline_access',
    state: 'screenshot',
  });
  return `${base}/api/v1/oauth/authorize?${query}`;
}

function unregisteredRedirectUrl(): string {
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: 'https://games.example.evil.example/oauth/callback/after/a/long/path?next="<b>home</b>"',
    response_type: 'code',
    state: 'screenshot',
  });
  return `${base}/api/v1/oauth/authorize?${query}`;
}

/** A site's RP-initiated logout request naming the site, without a hint. */
function logoutUrl(): string {
  return `${base}/api/v1/oauth/logout?client_id=${encodeURIComponent(clientId)}`;
}

/** Opens a page in `locale` (by Accept-Language alone) and checks every page at every width. */
async function visitAll(locale: Locale): Promise<PageLog> {
  const context = await browser.newContext({ locale: BROWSER_LOCALES[locale], viewport: WIDTHS.phone });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  const log = recordPage(page);

  const anonymous: Array<[string, () => Promise<unknown>]> = [
    ['signin', () => page.goto(`${base}/signin?return_to=/account`)],
    [
      'signin-error',
      async () => {
        await page.goto(`${base}/signin`);
        await page.locator('#username').fill(user.username);
        await page.locator('#password').fill('not the password');
        await Promise.all([
          page.waitForEvent('load'),
          page.locator('form[action="/signin"] button[type="submit"]').click(),
        ]);
        expect(await page.locator('[role="alert"]').count()).toBe(1);
        // The error is tied to the fields it is about.
        expect(await page.locator('#username').getAttribute('aria-describedby')).toBe('signin-error');
      },
    ],
    ['signup', () => page.goto(`${base}/signup`)],
    [
      'signup-error',
      async () => {
        await page.goto(`${base}/signup`);
        await page.locator('#username').fill('12345');
        await page.locator('#email').fill('bob@example.com');
        await page.locator('#password').fill('a long enough password');
        await Promise.all([
          page.waitForEvent('load'),
          page.locator('form[action="/signup"] button[type="submit"]').click(),
        ]);
        expect(await page.locator('#username').getAttribute('aria-describedby')).toBe(
          'username-hint username-error',
        );
      },
    ],
    ['error', () => page.goto(`${base}/api/v1/oauth/authorize?client_id=pk_unknown&response_type=code`)],
    // A redirect_uri the app never registered: shown as received (long, with markup), beside the
    // registered ones' host.
    ['error-redirect-uri', () => page.goto(unregisteredRedirectUrl())],
    ['forgot', () => page.goto(`${base}/password/forgot`)],
    // A site's logout request without a session: nothing to end, the signed-out page naming the site.
    ['signed-out', () => page.goto(logoutUrl())],
    [
      'forgot-sent',
      async () => {
        await page.goto(`${base}/password/forgot`);
        await page.locator('#login').fill('nobody@example.com');
        await Promise.all([page.waitForEvent('load'), page.locator('form button[type="submit"]').click()]);
      },
    ],
    ['reset', () => page.goto(`${base}${resetLink}`)],
    [
      'verify',
      async () => {
        const link = verifyLinks.pop();
        if (!link) throw new Error('no verification link left');
        await page.goto(`${base}${link}`);
      },
    ],
    [
      'verified',
      () =>
        Promise.all([page.waitForEvent('load'), page.locator('form[action="/email/verify"] button').click()]),
    ],
  ];
  const signedIn: Array<[string, () => Promise<unknown>]> = [
    ['consent', () => page.goto(authorizeUrl())],
    ['account', () => page.goto(`${base}/account`)],
    ['profile', () => page.goto(`${base}/account/profile`)],
    ['password', () => page.goto(`${base}/account/password`)],
    ['email', () => page.goto(`${base}/account/email`)],
    ['export', () => page.goto(`${base}/account/export`)],
    ['delete', () => page.goto(`${base}/account/delete`)],
    // The same request signed in, without an id_token_hint: the confirmation (a GET ends nothing).
    ['logout', () => page.goto(logoutUrl())],
  ];

  for (const width of ['phone', 'desktop'] as const) {
    await page.setViewportSize(WIDTHS[width]);
    for (const [name, open] of anonymous) {
      await open();
      await inspect(page, name, locale, width);
    }
  }
  await signIn(page);
  for (const width of ['phone', 'desktop'] as const) {
    await page.setViewportSize(WIDTHS[width]);
    for (const [name, open] of signedIn) {
      await open();
      await inspect(page, name, locale, width);
    }
  }
  return log;
}

describe.skipIf(skipBrowserTests)('the pages in Chromium: both languages, phone and desktop', () => {
  beforeAll(async () => {
    browser = await launchChromium();
    t = await createTestApp();
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    await mkdir(SCREENSHOTS, { recursive: true });

    const db = t.database.db;
    const ctx = { config: t.config, clock: t.clock };
    const alice = await createUser(
      db,
      { config: t.config, clock: t.clock },
      {
        username: user.username,
        password: user.password,
        email: 'alice@example.com',
        emailVerified: true,
        displayName: user.displayName,
      },
    );
    // The links the mail carries, read from the outbox (no mail is sent here).
    const linkTo = async (to: string, path: string) => {
      const mail = await db
        .selectFrom('mail_outbox')
        .select('text_body')
        .where('recipient', '=', to)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      const link = new RegExp(`https?://[^/\\s]+(${path}\\?\\S+)`).exec(mail.text_body)?.[1];
      if (!link) throw new Error(`no ${path} link in the message to ${to}`);
      // Without the message's language: each visit's browser chooses it.
      return link.replace(/&lang=[a-z]+$/, '');
    };
    await sendPasswordResetByOperator(db, ctx, { username: user.username, locale: 'en' });
    resetLink = await linkTo('alice@example.com', '/password/reset');
    for (let i = 0; i < 4; i++) {
      const email = `reader${i}@example.com`;
      const reader = await createUser(db, ctx, { username: `reader_${i}`, password: user.password, email });
      await resendEmailVerification(db, ctx, { userId: reader.id, locale: 'en' });
      verifyLinks.push(await linkTo(email, '/email/verify'));
    }
    const client = await createClient(
      db,
      { config: t.config, clock: t.clock },
      {
        name: 'Northwind Games',
        siteUrl: 'https://games.example',
        redirectUris: [redirectUri],
      },
    );
    clientId = client.client_id;
    // The account page shows the avatar: one of this service's own files, as the CSP allows.
    await updateUserProfile(
      db,
      { config: t.config, clock: t.clock },
      { username: user.username, avatarUrl: '/static/default-avatar.png' },
    );
    // The account page lists what alice allowed, and where the mobile app is signed in.
    const forum = await createClient(
      db,
      { config: t.config, clock: t.clock },
      {
        name: 'Tea Party Forum',
        siteUrl: 'https://forum.example',
        redirectUris: ['https://forum.example/callback'],
      },
    );
    const pkOf = async (id: string) =>
      (await db.selectFrom('clients').select('id').where('client_id', '=', id).executeTakeFirstOrThrow()).id;
    const forumPk = await pkOf(forum.client_id);
    await saveConsent(db, {
      userId: alice.id,
      clientPk: forumPk,
      scopes: ['openid', 'profile', 'email'],
      at: new Date('2026-05-20T10:00:00Z'),
    });
    const grant = await db
      .insertInto('grants')
      .values({
        user_id: alice.id,
        client_pk: forumPk,
        scopes: ['openid'],
        auth_time: new Date('2026-05-28T09:00:00Z'),
        created_at: new Date('2026-05-28T09:00:00Z'),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    await db
      .insertInto('mobile_devices')
      .values({
        client_pk: forumPk,
        device_id: 'screenshot-device',
        user_id: alice.id,
        public_key: 'A'.repeat(43),
        grant_id: grant.id,
        label: 'Pixel 9 (Android 16)',
        created_at: new Date('2026-05-28T09:00:00Z'),
        last_used_at: new Date('2026-05-31T18:30:00Z'),
      })
      .execute();
  }, 120_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  }, 60_000);

  for (const locale of ['en', 'ru'] as const) {
    it(`every page in ${locale}: language, no sideways scroll at 360 px, no serious axe finding, screenshots`, async () => {
      const log = await visitAll(locale);
      // The strict CSP held: no blocked resource, no error, nothing loaded from elsewhere.
      // (The error pages' own 4xx statuses are reported as console errors too: they are not failures.)
      const documentStatus = /^Failed to load resource: the server responded with a status of 40[01] /;
      expect(log.consoleErrors.filter((message) => !documentStatus.test(message))).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.failedRequests).toEqual([]);
      for (const url of log.requests) expect(new URL(url).origin).toBe(base);
    }, 240_000);
  }

  it('is used by keyboard in a sensible order, with a visible focus ring, from the username it opens on', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: WIDTHS.phone });
    contexts.push(context);
    const page = await context.newPage();
    const focused = () =>
      page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        return {
          name:
            element.id || element.getAttribute('hreflang') || element.textContent?.trim() || element.tagName,
          outline: `${style.outlineStyle} ${style.outlineWidth}`,
        };
      });
    /** The names of the elements `key` reaches, `count` presses in a row, each with its focus ring. */
    const walk = async (key: string, count: number) => {
      const order: string[] = [];
      for (let i = 0; i < count; i++) {
        await page.keyboard.press(key);
        const now = await focused();
        order.push(now.name);
        expect(now.outline, now.name).toMatch(/^solid [1-9]/);
      }
      return order;
    };
    // The browser applies autofocus at a rendering step after the load, not at the load itself:
    // a key pressed before it starts from the document instead of the username.
    const openSignIn = async () => {
      await page.goto(`${base}/signin`);
      await page.waitForFunction(() => document.activeElement?.id === 'username');
    };
    // The sign-in page opens with the focus in the username field (autofocus): type at once.
    await openSignIn();
    expect(await focused()).toEqual({ name: 'username', outline: expect.stringMatching(/^solid [1-9]/) });
    await page.keyboard.type('typed');
    expect(await page.locator('#username').inputValue()).toBe('typed');
    expect(await walk('Tab', 6)).toEqual([
      'password',
      // The show-password toggle, right after its field.
      'Show',
      'Sign in',
      // A passkey instead of the password, where the browser can use passkeys.
      'Sign in with a passkey',
      'Forgot your password?',
      'Create an account',
    ]);
    // Before the username, in the page's order: the language switch, the service's name (a link
    // to the landing page), and the skip link first.
    await openSignIn();
    expect(await walk('Shift+Tab', 4)).toEqual(['ru', 'en', 'idp', 'Skip to content']);
    // The skip link moves the focus to the page's content.
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
  });

  it('switches the language with the link of the page, and keeps the choice', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: WIDTHS.phone });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${base}/signin?return_to=/account`);
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    await page.locator('nav a[hreflang="ru"]').click();
    await page.waitForURL((url) => url.searchParams.get('lang') === 'ru');
    expect(await page.locator('html').getAttribute('lang')).toBe('ru');
    expect(new URL(page.url()).searchParams.get('return_to')).toBe('/account');
    expect(await page.locator('input[name="return_to"]').inputValue()).toBe('/account');
    // The choice outlives the link: the next page is in Russian too, despite Accept-Language.
    await page.goto(`${base}/signup`);
    expect(await page.locator('h1').textContent()).toBe('Создание аккаунта');
    const cookie = (await context.cookies()).find((each) => each.name === 'lang');
    expect(cookie).toMatchObject({ value: 'ru', path: '/', sameSite: 'Lax' });
  });

  it('reveals a password with the toggle, hides it again, and the form still signs in', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: WIDTHS.phone });
    contexts.push(context);
    const page = await context.newPage();
    const log = recordPage(page);
    await page.goto(`${base}/signin`);
    const password = page.locator('#password');
    const toggle = page.locator('#password + button.password-toggle');
    expect(await toggle.getAttribute('type')).toBe('button');
    expect(await toggle.textContent()).toBe('Show');
    expect(await toggle.getAttribute('aria-label')).toBe('Show: Password');

    await page.locator('#username').fill(user.username);
    await password.fill(user.password);
    await toggle.click();
    expect(await password.getAttribute('type')).toBe('text');
    expect(await password.inputValue()).toBe(user.password);
    expect(await toggle.textContent()).toBe('Hide');
    expect(await toggle.getAttribute('aria-label')).toBe('Hide: Password');
    // The toggle does not submit the form.
    expect(new URL(page.url()).pathname).toBe('/signin');
    await toggle.click();
    expect(await password.getAttribute('type')).toBe('password');
    expect(await toggle.textContent()).toBe('Show');

    // Revealed at the moment of submission: the form sends the password, hidden again.
    await toggle.click();
    await Promise.all([
      page.waitForURL(`${base}/account`),
      page.locator('form[action="/signin"] button[type="submit"]').click(),
    ]);
    expect((await page.locator('h1').textContent())?.trim()).toBe('Your account');

    // Every password field gets one, in the page's language: the three of the password page.
    await page.goto(`${base}/account/password?lang=ru`);
    expect(await page.locator('input[type="password"] + button.password-toggle').count()).toBe(3);
    const toggles = page.locator('button.password-toggle');
    expect(await toggles.allTextContents()).toEqual(['Показать', 'Показать', 'Показать']);
    await toggles.nth(1).click();
    expect(await page.locator('#newPassword').getAttribute('type')).toBe('text');
    expect(await page.locator('#currentPassword').getAttribute('type')).toBe('password');
    expect(await toggles.nth(1).textContent()).toBe('Скрыть');
    // Each names its field: three buttons, three different names.
    expect(await Promise.all([0, 1, 2].map((i) => toggles.nth(i).getAttribute('aria-label')))).toEqual([
      'Показать: Текущий пароль',
      'Скрыть: Новый пароль',
      'Показать: Повторите новый пароль',
    ]);
    // The script ran under the pages' CSP without a violation.
    expect(log.consoleErrors).toEqual([]);
    expect(log.pageErrors).toEqual([]);
  });

  it('signs in with JavaScript disabled: the plain form, no toggle', async () => {
    const context = await browser.newContext({
      locale: 'en-GB',
      viewport: WIDTHS.phone,
      javaScriptEnabled: false,
    });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${base}/signin`);
    expect(await page.locator('button.password-toggle').count()).toBe(0);
    expect(await page.locator('#password').getAttribute('type')).toBe('password');
    await signIn(page);
    expect((await page.locator('h1').textContent())?.trim()).toBe('Your account');
  });

  it('lines the consent page’s e-mail checkbox up with the list of the other scopes, at 390 px and 1280 px', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 390, height: 844 } });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page);
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 800 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto(authorizeUrl());
      const geometry = await page.evaluate(() => {
        const box = (selector: string) =>
          (document.querySelector(selector) as Element).getBoundingClientRect();
        const label = document.querySelector('label[for="share_email"]') as Element;
        const firstLine = document.createRange();
        firstLine.selectNodeContents(label);
        const line = firstLine.getClientRects()[0] as DOMRect;
        const checkbox = box('#share_email');
        return {
          list: box('ul.scopes').left,
          others: [...document.querySelectorAll('ul.scopes > li:not(.choice)')].map(
            (item) => item.getBoundingClientRect().left,
          ),
          label: box('label[for="share_email"]').left,
          checkbox: {
            left: checkbox.left,
            right: checkbox.right,
            middle: (checkbox.top + checkbox.bottom) / 2,
          },
          line: { top: line.top, bottom: line.bottom },
        };
      });
      const label = `${viewport.width}`;
      expect(geometry.others.length, label).toBeGreaterThan(1);
      // The label's text starts where every other scope's text does…
      for (const left of geometry.others)
        expect(Math.abs(geometry.label - left), label).toBeLessThanOrEqual(1);
      // …and the box stands before it, in the bullets' column, inside the list, beside its first line.
      expect(geometry.checkbox.right, label).toBeLessThan(geometry.label);
      expect(geometry.checkbox.left, label).toBeGreaterThanOrEqual(geometry.list - 0.5);
      expect(geometry.checkbox.middle, label).toBeGreaterThan(geometry.line.top);
      expect(geometry.checkbox.middle, label).toBeLessThan(geometry.line.bottom);
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(scrollWidth, label).toBeLessThanOrEqual(viewport.width);
    }
  });

  it('lays the account page out at 390 px and 1280 px, and its contents links lead to the sections', async () => {
    const context = await browser.newContext({ locale: 'en-GB', viewport: { width: 390, height: 844 } });
    contexts.push(context);
    const page = await context.newPage();
    await signIn(page);
    for (const viewport of [
      { width: 390, height: 844 },
      { width: 1280, height: 800 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto(`${base}/account`);
      const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      expect(scrollWidth, `${viewport.width}: scrollWidth`).toBeLessThanOrEqual(viewport.width);
      const blocking = (await runAxe(page)).filter((violation) =>
        ['serious', 'critical'].includes(violation.impact ?? ''),
      );
      expect(describeViolations(blocking), `${viewport.width}: axe`).toEqual([]);
      // The avatar is shown small, beside the profile's details.
      const avatar = await page.locator('#profile img.avatar').boundingBox();
      expect(avatar).toMatchObject({ width: 48, height: 48 });
      await page.locator('nav.contents a[href="#danger"]').click();
      await page.waitForURL(`${base}/account#danger`);
      await expect
        .poll(() =>
          page.locator('#danger-heading').evaluate((heading) => heading.getBoundingClientRect().top),
        )
        .toBeLessThan(viewport.height);
      expect(await page.locator('#danger-heading').isVisible()).toBe(true);
    }
  });
});
