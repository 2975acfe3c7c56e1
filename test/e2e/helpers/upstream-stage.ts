import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expect } from 'vitest';
import {
  cliDatabase,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../../helpers/cli.js';
import {
  type AppleAccount,
  type AppleStandIn,
  startAppleStandIn,
} from '../../helpers/upstream/apple-standin.js';
import {
  type GithubAccount,
  type GithubStandIn,
  startGithubStandIn,
} from '../../helpers/upstream/github-standin.js';
import { type OidcAccount, type OidcStandIn, startOidcStandIn } from '../../helpers/upstream/oidc-standin.js';
import { launchChromium, type PageLog, recordPage } from './chromium.js';
import { FrontDoor } from './front-door.js';
import { saveScreenshot, seriousFindings, WIDTHS } from './page-checks.js';

/**
 * What a browser story of sign-in through other providers starts from: the real server process
 * (`node bin/server.js`, PGlite or TEST_DATABASE_URL's PostgreSQL) behind a front door, three
 * stand-in providers on 127.0.0.1 (a generic OpenID provider shown as "Example ID", GitHub and
 * Apple), added as an operator adds them with `idp providers add`, and Chromium.
 *
 * PUBLIC_URL is http://localhost:<port> while the stand-ins are at 127.0.0.1: a provider is another
 * site for the browser, as a real one is, so Apple's form_post back is a cross-site POST that
 * carries no SameSite=Lax cookie, and the service's redirect after it has to bring them back.
 */
export interface UpstreamStage {
  /** PUBLIC_URL, which the browser uses. */
  base: string;
  env: Record<string, string>;
  server: RunningServer;
  browser: Browser;
  oidc: OidcStandIn;
  github: GithubStandIn;
  apple: AppleStandIn;
  /** `idp <args> --json`, through the running server's control socket on PGlite. */
  idp(args: string[]): Promise<Record<string, unknown>>;
  /** A new browser (context) of one person, in `locale`, at desktop width. */
  person(locale?: 'en-GB' | 'ru-RU'): Promise<Person>;
  close(): Promise<void>;
}

export interface Person {
  context: BrowserContext;
  page: Page;
  log: PageLog;
}

/** The OpenID provider's client at the stand-in (its client secret is checked). */
const CLIENT = { clientId: 'idp-browser-client', clientSecret: 'idp-browser-secret-0123456789' };

/** How long one step may wait (a page, a redirect through a provider) on a busy machine. */
export const STEP_TIMEOUT_MS = 20_000;

/** `extra`: settings of the server beside those of the stage (REAUTH_MAX_AGE_SECONDS…). */
export async function openUpstreamStage(
  accounts: {
    oidc: Record<string, OidcAccount>;
    github: Record<string, GithubAccount>;
    apple: Record<string, AppleAccount>;
  },
  extra: Record<string, string> = {},
): Promise<UpstreamStage> {
  const cleanup: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
    await stopAllChildren();
  };
  try {
    // The browser first: without one, nothing else is worth starting.
    const browser = await launchChromium();
    cleanup.push(() => browser.close());
    const frontDoor = await FrontDoor.open();
    cleanup.push(() => frontDoor.close());
    const base = `http://localhost:${frontDoor.port}`;

    // No redirect URIs registered: the stand-ins accept any http URI on loopback.
    const oidc = await startOidcStandIn({ ...CLIENT, accounts: accounts.oidc });
    cleanup.push(() => oidc.stop());
    const github = await startGithubStandIn({ ...CLIENT, accounts: accounts.github });
    cleanup.push(() => github.stop());
    const apple = await startAppleStandIn({ accounts: accounts.apple });
    cleanup.push(() => apple.stop());

    const database = await cliDatabase('idp-upstream-browser-');
    cleanup.push(database.drop);
    const env = {
      ...database.env,
      ...extra,
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      PUBLIC_URL: base,
    };
    const server = await startServer({ env });
    cleanup.push(() => server.stop());
    frontDoor.forwardTo(server.port);

    const idp = async (args: string[]) => succeeded(await runIdp([...args, '--json'], { env }));
    // The operator's .p8 file from Apple, given as a file (as docs/operating.md advises).
    const folder = await mkdtemp(path.join(os.tmpdir(), 'idp-upstream-browser-key-'));
    cleanup.push(() => rm(folder, { recursive: true, force: true }));
    const keyFile = path.join(folder, `AuthKey_${apple.keyId}.p8`);
    await writeFile(keyFile, apple.privateKeyPem, { mode: 0o600 });
    const secret = ['--client-id', CLIENT.clientId, '--client-secret', CLIENT.clientSecret];
    // One after another: the buttons come in the order the providers were added.
    const added: Array<Record<string, unknown>> = [];
    for (const args of [
      [
        'providers',
        'add',
        'example',
        '--kind',
        'oidc',
        '--display-name',
        'Example ID',
        '--issuer',
        oidc.url,
        ...secret,
      ],
      [
        'providers',
        'add',
        'github',
        '--kind',
        'github',
        '--issuer',
        github.url,
        '--api-url',
        github.url,
        ...secret,
      ],
      [
        'providers',
        'add',
        'apple',
        '--kind',
        'apple',
        '--issuer',
        apple.url,
        '--client-id',
        apple.clientId,
        '--apple-team-id',
        apple.teamId,
        '--apple-key-id',
        apple.keyId,
        '--apple-private-key-file',
        keyFile,
      ],
    ])
      added.push(await idp(args));
    expect(added.map((each) => each.callback_url)).toEqual(
      ['example', 'github', 'apple'].map((name) => `${base}/signin/providers/${name}/callback`),
    );

    const person = async (locale: 'en-GB' | 'ru-RU' = 'en-GB'): Promise<Person> => {
      const context = await browser.newContext({ locale, viewport: WIDTHS.desktop });
      cleanup.push(() => context.close());
      const page = await context.newPage();
      page.setDefaultTimeout(STEP_TIMEOUT_MS);
      return { context, page, log: recordPage(page) };
    };
    return { base, env, server, browser, oidc, github, apple, idp, person, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The phone width of the issue, above the pages' 360. */
export const PHONE_390 = { width: 390, height: 844 };

/**
 * The page at 390 px and on a desktop: no sideways scroll and no serious axe finding (light and
 * dark); photographed as docs/screenshots/<photo>-<390|desktop>.png when screenshots are asked for
 * (UPDATE_SCREENSHOTS=1), the whole page or only `part`.
 */
export async function checkPage(
  page: Page,
  name: string,
  options: { photo?: string; part?: string } = {},
): Promise<void> {
  for (const [width, size] of [
    ['390', PHONE_390],
    ['desktop', WIDTHS.desktop],
  ] as const) {
    await page.setViewportSize(size);
    const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(scrollWidth, `${name} ${width}`).toBeLessThanOrEqual(size.width);
    expect(await seriousFindings(page), `${name} ${width}`).toEqual([]);
    await page.emulateMedia({ colorScheme: 'light' });
    if (options.photo)
      await saveScreenshot(
        page,
        `${options.photo}-${width}`,
        options.part ? { fullPage: true, clip: await around(page, options.part) } : { fullPage: true },
      );
  }
}

/** The box of `selector` with a margin of the card around it (within the page), for a screenshot of a part. */
async function around(
  page: Page,
  selector: string,
): Promise<{ x: number; y: number; width: number; height: number }> {
  const margin = 16;
  const box = await page.locator(selector).evaluate((element) => {
    const rect = element.getBoundingClientRect();
    return { x: rect.x + window.scrollX, y: rect.y + window.scrollY, width: rect.width, height: rect.height };
  });
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  const x = Math.max(0, box.x - margin);
  const y = Math.max(0, box.y - margin);
  return {
    x,
    y,
    width: Math.min(pageWidth, box.x + box.width + margin) - x,
    height: box.height + (box.y - y) + margin,
  };
}

/** Presses Tab from the top of the page until `selector` has the focus (at most 30 times); its text. */
export async function tabTo(page: Page, selector: string): Promise<string> {
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  const target = page.locator(selector);
  for (let i = 0; i < 30; i++) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((element) => element === document.activeElement)) {
      const style = await target.evaluate((element) => getComputedStyle(element).outlineStyle);
      // A visible focus ring: a keyboard user sees where Enter goes.
      expect(style, selector).not.toBe('none');
      return ((await target.textContent()) ?? '').trim();
    }
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** Clicks what leaves the page and waits until the browser has arrived at a path matching `path`. */
export async function clickTo(page: Page, selector: string, path: string | RegExp): Promise<void> {
  await Promise.all([page.waitForURL(urlPath(path)), page.locator(selector).click()]);
}

/** A waitForURL predicate on the path (and query) of the page. */
export function urlPath(path: string | RegExp): (url: URL) => boolean {
  return (url) => {
    const here = `${url.pathname}${url.search}`;
    return typeof path === 'string' ? url.pathname === path : path.test(here);
  };
}

/** The "Continue with …" buttons of the page, as the reader sees them. */
export async function providerButtonTexts(page: Page): Promise<string[]> {
  return (await page.locator('button.provider').allTextContents()).map((text) => text.trim());
}

/** The texts of the page's main part, on one line. */
export async function mainText(page: Page): Promise<string> {
  return ((await page.locator('main').textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/**
 * What the page logged that a person would see as broken: script errors and CSP refusals (a
 * form-action that did not admit the provider would be one).
 */
export function problemsOf(log: PageLog): string[] {
  return [
    ...log.pageErrors,
    ...log.consoleErrors.filter((line) => /Content Security Policy|Refused to/i.test(line)),
  ];
}
