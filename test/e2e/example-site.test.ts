import { type ChildProcess, spawn } from 'node:child_process';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliDatabase,
  projectRoot,
  type RunningServer,
  runIdp,
  startServer,
  stopAllChildren,
  succeeded,
} from '../helpers/cli.js';
import { usingPostgres } from '../helpers/database.js';
import { freePort } from '../helpers/tcp-proxy.js';
import { launchChromium, type PageLog, recordPage } from './helpers/chromium.js';

/**
 * The example third-party site of examples/site, as a person tries it: the real service on a fresh
 * database, `idp demo`, the example started as its own process without credentials (so it runs
 * `idp demo --json` itself), and Chromium signing in as the demo user, charging a coin, sending
 * the same charge form again (no second charge) and signing out.
 *
 * The example listens on a free port rather than 4000, so that this file can run beside others:
 * its redirect URI http://127.0.0.1:<port>/callback matches the demo client's registered
 * http://127.0.0.1:4000/callback because on a loopback host the port alone may differ (RFC 8252).
 *
 * The service's pages are found by ids, names and types only, never by their (translated) text.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

const cleanup: Array<() => Promise<unknown>> = [];
let env: Record<string, string>;
let server: RunningServer;
let exampleUrl: string;
let exampleOutput = '';
let browser: Browser;
let page: Page;
let log: PageLog;
let demoUser: { id: number; username: string; password: string };

/** Starts the example site and resolves once it says where it listens; returns what it printed. */
async function startExample(extraEnv: Record<string, string>): Promise<() => string> {
  let output = '';
  const example: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'examples/site/server.ts'], {
    cwd: projectRoot,
    env: { ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        if (example.exitCode !== null || example.signalCode !== null) return resolve();
        example.once('exit', () => resolve());
        example.kill('SIGTERM');
      }),
  );
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => fail('the example site did not start in time'), 45_000);
    function fail(message: string) {
      clearTimeout(timer);
      reject(new Error(`${message}\n--- output ---\n${output}`));
    }
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Example site listening at')) {
        clearTimeout(timer);
        resolve();
      }
    };
    example.stdout?.on('data', collect);
    example.stderr?.on('data', collect);
    example.once('exit', (code) => fail(`the example site exited with code ${code}`));
  });
  return () => output;
}

async function balance(): Promise<string | null> {
  return page.locator('#balance').getAttribute('data-balance');
}

describe.skipIf(skipBrowserTests)(
  `the example site (examples/site) in Chromium, on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`,
  () => {
    beforeAll(async () => {
      browser = await launchChromium();
      cleanup.push(() => browser.close());
      page = await (await browser.newContext()).newPage();
      page.setDefaultTimeout(10_000);
      log = recordPage(page);

      // A copy of the migrated template: the server has no initdb or migration to run first.
      const database = await cliDatabase('idp-example-');
      cleanup.push(database.drop);
      env = database.env;
      const port = await freePort();
      Object.assign(env, {
        HOST: '127.0.0.1',
        PORT: String(port),
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'info',
      });
      server = await startServer({ env });
      cleanup.push(() => server.stop());

      // As the README says: `idp demo` (on PGlite through the running server's socket)…
      const demo = succeeded(await runIdp(['demo', '--json'], { env }));
      demoUser = demo.user as typeof demoUser;
      expect(demoUser).toMatchObject({ username: 'demo', password: 'demo-password' });

      // …then the example, which gets its credentials from `idp demo --json` itself.
      const examplePort = await freePort();
      exampleUrl = `http://127.0.0.1:${examplePort}`;
      const output = await startExample({
        IDP_ISSUER: server.url,
        PORT: String(examplePort),
        BASE_URL: exampleUrl,
      });
      exampleOutput = output();
    }, 120_000);

    afterAll(async () => {
      // Each step bounded: once a CI run's teardown waited out the hook's minute on one of them,
      // after every test had passed. What is left is killed below, and Chromium with the worker.
      for (const step of cleanup.reverse()) {
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<'late'>((resolve) => {
          timer = setTimeout(() => resolve('late'), 15_000);
        });
        const ended = await Promise.race([step().catch((error: unknown) => console.error(error)), late]);
        clearTimeout(timer);
        if (ended === 'late') console.error(`a cleanup step took over 15 s: ${step}`);
      }
      await stopAllChildren();
    }, 60_000);

    it('says how to sign in when it starts', () => {
      expect(exampleOutput).toContain(`Example site listening at ${exampleUrl}`);
      expect(exampleOutput).toContain('sign in as demo / demo-password');
      expect(exampleOutput).not.toMatch(/sk_/); // never the client secret
    });

    it('signs in as the demo user, charges a coin once per form, and signs out', async () => {
      await page.goto(exampleUrl);
      await page.locator('#sign-in').click();

      // The service's sign-in page.
      await page.waitForURL((url) => url.href.startsWith(`${server.url}/signin`));
      await page.locator('#username').fill(demoUser.username);
      await page.locator('#password').fill(demoUser.password);
      await page.locator('form:has(#password) [type="submit"]').click();

      // Its consent page: allow.
      await page.locator('button[name="decision"][value="allow"]').click();

      // Back on the example, signed in: the profile from userinfo, and the wallet.
      await page.locator('#profile').waitFor();
      expect(new URL(page.url()).origin).toBe(exampleUrl);
      expect(await page.locator('#profile-username').textContent()).toBe('demo');
      expect(await page.locator('#display-name').textContent()).toBe('Demo User');
      expect(await page.locator('#email').textContent()).toBe('demo@example.com');
      expect(await balance()).toBe('100');

      // Charge 1 coin.
      const form = page.locator('#charge-form');
      const fields = {
        csrf_token: await form.locator('input[name="csrf_token"]').inputValue(),
        idempotency_key: await form.locator('input[name="idempotency_key"]').inputValue(),
      };
      await page.locator('#charge').click();
      await page.locator('#result[data-outcome="charged"]').waitFor();
      expect(await balance()).toBe('99');

      // Reloading the result page posts nothing.
      await page.reload();
      expect(await page.locator('#result').count()).toBe(0);
      expect(await balance()).toBe('99');

      // The same form sent again (a double submit, a retry): the service replays the charge.
      const again = await page.request.post(`${exampleUrl}/charge`, { form: fields, maxRedirects: 0 });
      expect(again.status()).toBe(303);
      await page.reload();
      await page.locator('#result[data-outcome="replayed"]').waitFor();
      expect(await balance()).toBe('99');

      // A new form is a new purchase.
      await page.locator('#charge').click();
      await page.locator('#result[data-outcome="charged"]').waitFor();
      expect(await balance()).toBe('98');

      // Sign out: back to the sign-in button; the session is gone.
      await page.locator('#sign-out').click();
      await page.locator('#sign-in').waitFor();
      await page.reload();
      expect(await page.locator('#profile').count()).toBe(0);
      expect(await page.locator('#sign-in').count()).toBe(1);

      // Nothing broke on the example's own pages.
      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors.filter((message) => message.includes(exampleUrl))).toEqual([]);
    }, 30_000);

    it('with a client that has no wallet right: signs in without the wallet; a denial is said so', async () => {
      // Still signed in at the service (signing out of the example does not sign out there).
      const plainPort = await freePort();
      const plainUrl = `http://127.0.0.1:${plainPort}`;
      const plain = succeeded(
        await runIdp(
          [
            'clients',
            'create',
            '--name',
            'Plain site',
            '--site-url',
            plainUrl,
            '--redirect-uri',
            `${plainUrl}/callback`,
            '--json',
          ],
          { env },
        ),
      );
      const output = await startExample({
        IDP_ISSUER: server.url,
        PORT: String(plainPort),
        BASE_URL: plainUrl,
        CLIENT_ID: plain.client_id as string,
        CLIENT_SECRET: plain.client_secret as string,
      });
      expect(output()).not.toContain('demo-password'); // its own credentials: no demo hint

      // The wallet scope is refused for this client; the example asks again without it.
      await page.goto(plainUrl);
      await page.locator('#sign-in').click();
      await page.locator('button[name="decision"][value="deny"]').click();
      await page.locator('#message').waitFor();
      expect(new URL(page.url()).origin).toBe(plainUrl);

      await page.goto(plainUrl);
      await page.locator('#sign-in').click();
      await page.locator('button[name="decision"][value="allow"]').click();
      await page.locator('#profile').waitFor();
      expect(await page.locator('#profile-username').textContent()).toBe('demo');
      expect(await page.locator('#wallet').count()).toBe(0);
      expect(await page.locator('#no-wallet').count()).toBe(1);
    }, 30_000);

    it('forgets a user whose token stopped working, instead of failing', async () => {
      // Signed in at the service and consent remembered: straight back to the profile.
      await page.goto(exampleUrl);
      await page.locator('#sign-in').click();
      await page.locator('#profile').waitFor();
      expect(await balance()).toBe('98');

      // Disabling the account ends every token at once; the example's next call gets a 401.
      succeeded(await runIdp(['users', 'disable', 'demo', '--json'], { env }));
      await page.reload();
      await page.locator('#message').waitFor();
      expect(await page.locator('#profile').count()).toBe(0);
      expect(await page.locator('#sign-in').count()).toBe(1);
      succeeded(await runIdp(['users', 'enable', 'demo', '--json'], { env }));
    }, 30_000);

    it('explains, on a page, when the provider cannot be reached', async () => {
      // A provider address where nothing listens: the example starts (credentials given) and its
      // "Sign in" fails to reach discovery.
      const downPort = await freePort();
      const sitePort = await freePort();
      const siteUrl = `http://127.0.0.1:${sitePort}`;
      await startExample({
        IDP_ISSUER: `http://127.0.0.1:${downPort}`,
        PORT: String(sitePort),
        BASE_URL: siteUrl,
        CLIENT_ID: 'pk_unreachable',
        CLIENT_SECRET: 'sk_unreachable',
      });
      await page.goto(siteUrl);
      const [response] = await Promise.all([
        page.waitForResponse(`${siteUrl}/login`),
        page.locator('#sign-in').click(),
      ]);
      expect(response.status()).toBe(503);
      expect(response.headers()['content-type']).toMatch(/^text\/html/);
      expect(response.headers()['retry-after']).toBe('30');
      await page.locator('#provider-down').waitFor();
      expect(await page.locator('#message').textContent()).toContain(`http://127.0.0.1:${downPort}`);
      expect(await page.locator('#retry').getAttribute('href')).toBe('/login');
    }, 30_000);
  },
);
