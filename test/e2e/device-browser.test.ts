import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliDatabase,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';
import { FrontDoor } from './helpers/front-door.js';
import { saveScreenshot, seriousFindings, WIDTHS } from './helpers/page-checks.js';

/**
 * The device authorization grant (RFC 8628) as a TV or a command-line tool and its person live it:
 * the real server process (PGlite, or TEST_DATABASE_URL's PostgreSQL) behind a front door, a public
 * client registered with the real CLI (`idp clients create --public --device-grant`), openid-client
 * 6 as the device (`initiateDeviceAuthorization`, then `pollDeviceAuthorizationGrant` with its own
 * handling of authorization_pending and slow_down, and a DPoP key so that the public client gets a
 * refresh token), and Chromium as the person's phone: verification_uri_complete, the sign-in page,
 * back to /device with the code filled in, the confirmation naming the app and the device's
 * User-Agent, Allow (by keyboard), "Done". In English and in Russian (a Russian browser that types
 * the code itself, a wrong one first), and a Deny that ends the device's polling with
 * access_denied. Each page axe-clean at 390 px and on a desktop, light and dark.
 *
 * The stock interval is 5 seconds, and openid-client waits it before its first poll: each flow
 * takes that long. The tests run in order and build on each other.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';
/** A flow: the device's 5-second interval, a sign-in, and axe on several pages at two widths. */
const FLOW_MS = 150_000;

/** What the device says it is: openid-client sends it as the User-Agent of its requests. */
const DEVICE_AGENT = 'LanternTV/2.1 (living room; <b>model</b> LT-55)';
const SCOPE = 'openid profile offline_access';
/** RFC 8628 §6.1: the service's user codes, eight consonants shown as XXXX-XXXX. */
const USER_CODE = /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/;

const people = {
  en: { username: 'tv_owner', password: 'device e2e correct horse', displayName: 'Tess Owner' },
  ru: { username: 'olga_tv', password: 'пароль телевизора длинный', displayName: 'Ольга' },
};

const cleanup: Array<() => Promise<unknown>> = [];
let env: Record<string, string>;
let server: RunningServer;
let browser: Browser;
let issuer: string;
let clientId: string;
let config: oidc.Configuration;
const userIds: Record<keyof typeof people, string> = { en: '', ru: '' };

/** The device's token requests, as the service answered them: the time sent and the error, if any. */
const polls: Array<{ at: number; error: string | null }> = [];
/** Resolves on the next authorization_pending the device is told (a waiting person's signal). */
let nextPending: (() => void) | undefined;

interface Person {
  context: BrowserContext;
  page: Page;
  log: PageLog;
}

async function person(locale: 'en-GB' | 'ru-RU'): Promise<Person> {
  const context = await browser.newContext({ locale, viewport: WIDTHS.desktop });
  cleanup.push(() => context.close());
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  return { context, page, log: recordPage(page) };
}

/** The phone width these pages are checked at (above the older pages' 360). */
const PHONE_390 = { width: 390, height: 844 };

/**
 * No sideways scroll at 390 px and on a desktop, no serious axe finding in the light and the dark
 * scheme; with `photo`, docs/screenshots/<photo>-<390|desktop>.png when asked (UPDATE_SCREENSHOTS=1).
 */
async function checkPage(page: Page, name: string, photo?: string): Promise<void> {
  for (const [width, size] of [
    ['390', PHONE_390],
    ['desktop', WIDTHS.desktop],
  ] as const) {
    await page.setViewportSize(size);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `${name} ${width}`).toBeLessThanOrEqual(size.width);
    expect(await seriousFindings(page), `${name} ${width}`).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
    if (photo) await saveScreenshot(page, `${photo}-${width}`, { fullPage: true });
  }
}

/** Presses Tab from the top of the page until `selector` has the focus, which must be visible. */
async function tabTo(page: Page, selector: string): Promise<void> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const target = page.locator(selector);
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((element) => element === document.activeElement)) {
      expect(await target.evaluate((element) => getComputedStyle(element).outlineStyle), selector).not.toBe(
        'none',
      );
      return;
    }
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** The page's main text on one line, as it reads. */
async function mainText(page: Page): Promise<string> {
  return ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/** Does what leaves the page and waits until the browser is at `path`. */
async function leaveTo(page: Page, path: string, action: () => Promise<unknown>): Promise<void> {
  await Promise.all([page.waitForURL((url) => url.pathname === path), action()]);
}

async function signIn(page: Page, who: (typeof people)['en']): Promise<void> {
  await page.locator('#username').fill(who.username);
  await page.locator('#password').fill(who.password);
  await leaveTo(page, '/device', () => page.locator('form[action="/signin"] button[type="submit"]').click());
}

/** A device's request, as openid-client starts it, and its polling, started at once. */
async function startDevice(DPoP?: oidc.DPoPHandle) {
  const started = await oidc.initiateDeviceAuthorization(config, { scope: SCOPE });
  const tokens = oidc.pollDeviceAuthorizationGrant(config, started, undefined, DPoP ? { DPoP } : undefined);
  tokens.catch(() => undefined); // awaited by the test; a failing step before must not leave it unhandled
  return { started, tokens };
}

/** What the device is told when it polls with `deviceCode` by hand (no library, one request). */
async function pollOnce(deviceCode: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${issuer}/api/v1/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: deviceCode,
      client_id: clientId,
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** What a person would see as broken: script errors, CSP refusals, failed loads. */
function problemsOf(log: PageLog): string[] {
  return [...log.pageErrors, ...log.consoleErrors, ...log.failedRequests];
}

describe.skipIf(skipBrowserTests)(
  `device sign-in (RFC 8628) with openid-client and Chromium, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`,
  () => {
    beforeAll(async () => {
      browser = await launchChromium();
      cleanup.push(() => browser.close());
      const frontDoor = await FrontDoor.open();
      cleanup.push(() => frontDoor.close());
      issuer = frontDoor.url;
      const database = await cliDatabase('idp-device-browser-');
      cleanup.push(database.drop);
      env = { ...database.env, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', PUBLIC_URL: issuer };
      server = await startServer({ env });
      cleanup.push(() => server.stop());
      frontDoor.forwardTo(server.port);

      const idp = async (args: string[]) => succeeded(await runIdp([...args, '--json'], { env }));
      const [client, en, ru] = await Promise.all([
        // A TV app cannot keep a secret: a public client, allowed the device grant.
        idp([
          'clients',
          'create',
          '--name',
          'Lantern TV',
          '--site-url',
          'https://lantern.example',
          '--redirect-uri',
          'https://lantern.example/callback',
          '--public',
          '--device-grant',
        ]),
        ...Object.values(people).map((who) =>
          idp([
            'users',
            'create',
            '--username',
            who.username,
            '--password',
            who.password,
            '--display-name',
            who.displayName,
          ]),
        ),
      ]);
      expect(client).toMatchObject({ name: 'Lantern TV', device_grant: true });
      expect(client).not.toHaveProperty('client_secret');
      clientId = client.client_id as string;
      userIds.en = String(en?.id);
      userIds.ru = String(ru?.id);

      // openid-client as its documentation shows, for a public client (`None()`: client_id alone).
      config = await oidc.discovery(new URL(issuer), clientId, undefined, oidc.None(), {
        execute: [oidc.allowInsecureRequests],
      });
      // The device names itself in its User-Agent; its polls are recorded with what they were told.
      config[oidc.customFetch] = async (url, options) => {
        const headers = new Headers(options.headers as HeadersInit);
        headers.set('user-agent', DEVICE_AGENT);
        const at = Date.now();
        const response = await fetch(url, { ...(options as RequestInit), headers });
        if (
          new URL(url).pathname === '/api/v1/oauth/token' &&
          options.body?.toString().includes('device_code')
        ) {
          const body = (await response.clone().json()) as { error?: string };
          polls.push({ at, error: body.error ?? null });
          if (body.error === 'authorization_pending') nextPending?.();
        }
        return response;
      };
    }, 180_000);

    afterAll(async () => {
      for (const step of cleanup.reverse()) await step().catch((error: unknown) => console.error(error));
      await stopAllChildren();
    }, 60_000);

    it('discovery names the device authorization endpoint and the grant type', () => {
      const metadata = config.serverMetadata();
      expect(metadata.device_authorization_endpoint).toBe(`${issuer}/api/v1/oauth/device_authorization`);
      expect(metadata.grant_types_supported).toContain('urn:ietf:params:oauth:grant-type:device_code');
    });

    it('English: the code from verification_uri_complete, sign-in, Allow by keyboard; DPoP-bound tokens, an id_token, userinfo', {
      timeout: FLOW_MS,
    }, async () => {
      const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const { started, tokens } = await startDevice(DPoP);
      expect(started).toMatchObject({
        verification_uri: `${issuer}/device`,
        verification_uri_complete: `${issuer}/device?user_code=${started.user_code}`,
        expires_in: 600,
        interval: 5,
      });
      expect(started.device_code).toMatch(/^dc_/);
      expect(started.user_code).toMatch(USER_CODE);
      const pending = new Promise<void>((resolve) => {
        nextPending = resolve;
      });

      const { page, log } = await person('en-GB');
      // Not signed in: the sign-in page first, then back to /device with the code kept.
      await page.goto(started.verification_uri_complete as string);
      expect(new URL(page.url()).pathname).toBe('/signin');
      await signIn(page, people.en);
      expect(new URL(page.url()).searchParams.get('user_code')).toBe(started.user_code);
      expect(await page.locator('h1').textContent()).toBe('Sign in on a device');
      // The link filled the code in; it is still only a suggestion until the person continues.
      expect(await page.locator('#user_code').inputValue()).toBe(started.user_code);
      await checkPage(page, '/device', 'device-en');

      // By keyboard: to the field, the code typed again as people do (lower case, no dash), Enter.
      await tabTo(page, '#user_code');
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type(started.user_code.replace('-', '').toLowerCase());
      await Promise.all([page.waitForURL((url) => url.pathname === '/device'), page.keyboard.press('Enter')]);
      await page.locator('button[name="decision"][value="allow"]').waitFor();

      // The confirmation names the app, its site, the code, the device as it named itself, the account.
      expect(await page.locator('h1').textContent()).toBe('Lantern TV wants to sign in on a device');
      const confirmation = await mainText(page);
      expect(confirmation).toContain('Lantern TV is the site at https://lantern.example.');
      expect(confirmation).toContain(`Go on only if your device shows ${started.user_code}`);
      // The code in the warning does not break at its dash on a narrow screen.
      const inlineCode = page.locator('.warning .user-code-inline');
      expect(await inlineCode.textContent()).toBe(started.user_code);
      expect(await inlineCode.evaluate((el) => getComputedStyle(el).whiteSpace)).toBe('nowrap');
      expect(confirmation).toContain(`The device says it is: ${DEVICE_AGENT}`);
      expect(confirmation).toContain(`Signed in as @${people.en.username}.`);
      // What the device sent is text on the page, never markup.
      expect(await page.locator('code.device-label').textContent()).toBe(DEVICE_AGENT);
      expect(await page.locator('code.device-label b').count()).toBe(0);
      expect(await page.locator('ul.scopes li').count()).toBe(3);
      await checkPage(page, 'confirmation', 'device-confirm-en');

      // The device is waiting: at least one poll was answered authorization_pending before Allow.
      await pending;
      await tabTo(page, 'button[name="decision"][value="allow"]');
      await Promise.all([
        page.waitForURL((url) => url.pathname === '/device/decision'),
        page.keyboard.press('Enter'),
      ]);
      expect(await page.locator('h1').textContent()).toBe('Done');
      expect(await page.locator('p[role="status"]').textContent()).toBe(
        'Lantern TV is signed in on your device. You can go back to it now.',
      );
      await checkPage(page, 'done');

      const issued = await tokens;
      expect(issued.token_type).toBe('dpop');
      expect(issued.access_token).toMatch(/^at_/);
      expect(issued.refresh_token).toMatch(/^rt_/);
      expect((issued.scope ?? '').split(' ').sort()).toEqual(['offline_access', 'openid', 'profile']);
      expect(issued.expires_in).toBeGreaterThan(0);
      // openid-client checked the id_token (signature, iss, aud, exp, iat) before answering.
      const claims = issued.claims();
      expect(claims).toMatchObject({
        iss: issuer,
        sub: userIds.en,
        aud: clientId,
        amr: ['pwd'],
        preferred_username: people.en.username,
      });
      expect(typeof claims?.auth_time).toBe('number');
      expect(claims).not.toHaveProperty('nonce');

      const profile = await oidc.fetchUserInfo(config, issued.access_token, userIds.en, { DPoP });
      expect(profile).toMatchObject({ sub: userIds.en, preferred_username: people.en.username });
      // The public client's refresh token is bound to the device's key, and works with it.
      const refreshed = await oidc.refreshTokenGrant(config, issued.refresh_token as string, undefined, {
        DPoP,
      });
      expect(refreshed.access_token).toMatch(/^at_/);

      // The first proof of a new key fetches the DPoP nonce (RFC 9449 §8) before the grant runs;
      // then a device that honours the interval is never told slow_down, and gets its tokens once.
      expect(polls.map((poll) => poll.error)).toEqual([
        'use_dpop_nonce',
        ...polls.slice(1, -1).map(() => 'authorization_pending'),
        null,
      ]);
      expect(polls.length).toBeGreaterThanOrEqual(3);
      for (const [i, poll] of polls.entries())
        if (i > 0) expect(poll.at - (polls[i - 1]?.at ?? 0)).toBeGreaterThanOrEqual(5000);
      expect(await pollOnce(started.device_code)).toMatchObject({
        status: 400,
        body: { error: 'invalid_grant' },
      });
      expect(problemsOf(log)).toEqual([]);
    });

    it('Russian: the code typed on /device (a wrong one first), Allow; tokens and userinfo', {
      timeout: FLOW_MS,
    }, async () => {
      polls.length = 0;
      const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('ES256'));
      const { started, tokens } = await startDevice(DPoP);
      const { page, log } = await person('ru-RU');

      // verification_uri alone: the person reads the code off the screen and types it.
      await page.goto(started.verification_uri);
      expect(new URL(page.url()).pathname).toBe('/signin');
      expect(await page.locator('html').getAttribute('lang')).toBe('ru');
      expect(await page.locator('h1').textContent()).toBe('Вход');
      await signIn(page, people.ru);
      expect(await page.locator('h1').textContent()).toBe('Вход на устройстве');
      expect(await mainText(page)).toContain(
        'Введите код, который показывает ваша консоль, телевизор или программа в командной строке.',
      );
      expect(await page.locator('#user_code').inputValue()).toBe('');
      await checkPage(page, '/device ru', 'device-ru');

      // A code that is no device's: refused beside the field, counted as a wrong password is.
      await tabTo(page, '#user_code');
      await page.keyboard.type('BCDF-GHJK');
      await Promise.all([page.waitForURL((url) => url.pathname === '/device'), page.keyboard.press('Enter')]);
      expect(await page.locator('#code-error').textContent()).toBe(
        'Код неверный или устарел. Проверьте его на устройстве или начните там заново.',
      );
      expect(await page.locator('#user_code').getAttribute('aria-invalid')).toBe('true');
      await checkPage(page, '/device ru, wrong code');

      await page.locator('#user_code').fill(started.user_code);
      await leaveTo(page, '/device', () =>
        page.locator('form[action="/device"] button[type="submit"]').click(),
      );
      expect(await page.locator('h1').textContent()).toBe('Lantern TV хочет войти на устройстве');
      const confirmation = await mainText(page);
      expect(confirmation).toContain(`Устройство сообщает о себе: ${DEVICE_AGENT}`);
      expect(confirmation).toContain(
        `Продолжайте, только если ваше устройство показывает ${started.user_code}`,
      );
      expect(confirmation).toContain(`Вы вошли как @${people.ru.username}.`);
      expect(confirmation).toContain('Доступ, даже когда вы не на сайте (пока вы его не отзовёте)');
      expect(await page.locator('button[value="allow"]').textContent()).toBe('Разрешить');
      await checkPage(page, 'confirmation ru', 'device-confirm-ru');

      await leaveTo(page, '/device/decision', () => page.locator('button[value="allow"]').click());
      expect(await page.locator('h1').textContent()).toBe('Готово');
      expect(await page.locator('p[role="status"]').textContent()).toBe(
        'Lantern TV выполнил вход на вашем устройстве. Можно вернуться к нему.',
      );
      await checkPage(page, 'done ru');

      const issued = await tokens;
      expect(issued.refresh_token).toMatch(/^rt_/);
      expect(issued.claims()).toMatchObject({ sub: userIds.ru, aud: clientId });
      const profile = await oidc.fetchUserInfo(config, issued.access_token, userIds.ru, { DPoP });
      expect(profile).toMatchObject({ sub: userIds.ru, preferred_username: people.ru.username });
      expect(polls.some((poll) => poll.error === 'slow_down')).toBe(false);
      expect(problemsOf(log).filter((line) => !line.includes('400 (Bad Request)'))).toEqual([]);
    });

    it('Deny: the polling device is told access_denied, and the code cannot be decided again', {
      timeout: FLOW_MS,
    }, async () => {
      // Without DPoP: a public client then gets no refresh token, but here it gets nothing at all.
      const { started, tokens } = await startDevice();
      const { page, log } = await person('en-GB');
      await page.goto(started.verification_uri_complete as string);
      await signIn(page, people.en);
      await leaveTo(page, '/device', () =>
        page.locator('form[action="/device"] button[type="submit"]').click(),
      );
      // Allowed from the first test for the same scopes: said, and still asked.
      expect(await mainText(page)).toContain('You allowed this app before.');
      await leaveTo(page, '/device/decision', () => page.locator('button[value="deny"]').click());
      expect(await page.locator('h1').textContent()).toBe('Denied');
      expect(await page.locator('p[role="status"]').textContent()).toBe(
        'Lantern TV was not signed in on the device.',
      );
      await checkPage(page, 'denied');

      await expect(tokens).rejects.toMatchObject({ error: 'access_denied' });
      expect(await pollOnce(started.device_code)).toMatchObject({
        status: 400,
        body: { error: 'access_denied' },
      });
      // The code cannot be decided again: the confirmation is no longer reachable with it.
      await page.goto(`${issuer}/device?user_code=${started.user_code}`);
      await leaveTo(page, '/device', () =>
        page.locator('form[action="/device"] button[type="submit"]').click(),
      );
      expect(await page.locator('#code-error').textContent()).toBe(
        'That code is wrong or has expired. Check it on your device, or start again there.',
      );
      expect(problemsOf(log).filter((line) => !line.includes('400 (Bad Request)'))).toEqual([]);
    });

    it('The server logged no error along the way', () => {
      const errors = server
        .output()
        .stdout.split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { level?: number; msg?: string })
        .filter((entry) => (entry.level ?? 0) >= 50);
      expect(errors).toEqual([]);
      expect(server.output().stderr).toBe('');
    });
  },
);
