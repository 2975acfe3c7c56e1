import { readFile } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAudit } from '../../src/modules/audit/audit.repository.js';
import { ensureSigningKeys, listSigningKeys } from '../../src/modules/oidc/keys.service.js';
import type { TestApp } from '../helpers/app.js';
import { makeOperator, type TestOperator } from '../helpers/console.js';
import { depsOf, makeClient, makeUser } from '../helpers/factories.js';
import { type PageLog, recordPage } from './helpers/chromium.js';
import { enterConsoleInBrowser, reauthenticateInBrowser } from './helpers/console-browser.js';
import {
  type ConsoleStage,
  checkConsolePage,
  openConsoleStage,
  submitAndWait,
} from './helpers/console-stage.js';

/**
 * The console's audit log and platform pages in Chromium, as an owner uses them: filter the log
 * by a user and download it as CSV (a client name starting with "=" made text), rotate a signing
 * key, retry a failed message; each page in English and Russian, at 390 px and on a desktop without
 * sideways scrolling, axe-clean in light and dark.
 *
 * Chromium must be at /usr/bin/chromium; IDP_SKIP_BROWSER_TESTS=1 skips this file.
 */
const skipBrowserTests = process.env.IDP_SKIP_BROWSER_TESTS === '1';

let t: TestApp;
let base: string;
let stage: ConsoleStage;
let page: Page;
let log: PageLog;
let operator: TestOperator;
let failedMailId = 0;

const submit = (selector: string) => submitAndWait(page, selector);

/** No sideways scroll at 390 px nor on a desktop, and no serious axe finding in light or dark. */
const checkPage = (name: string) => checkConsolePage(page, name, { photo: name });

describe.skipIf(skipBrowserTests)('the console audit log and platform pages, in Chromium', () => {
  beforeAll(async () => {
    stage = await openConsoleStage({ acceptDownloads: true });
    ({ t, base, page } = stage);
    operator = await makeOperator(t, 'owner', { username: 'audit_owner' });
    const db = t.database.db;
    await ensureSigningKeys(db, depsOf(t).ctx);
    const user = await makeUser(t, { username: 'quoted_quinn' });
    const client = await makeClient(t, { name: '=Evil "Site"' });
    const at = t.clock.now();
    await recordAudit(db, {
      at,
      actor: `user:${user.id}`,
      action: 'consent_allowed',
      subject: `client:${client.clientId}`,
      ip: '192.0.2.7',
    });
    await recordAudit(db, {
      at,
      actor: `user:${user.id}`,
      action: 'password_changed',
      subject: `user:${user.id}`,
    });
    const mail = await db
      .insertInto('mail_outbox')
      .values({
        kind: 'email_verify',
        recipient: 'quinn.private@example.org',
        locale: 'en',
        subject: 'Confirm',
        text_body: 'https://id.example/verify?token=ev_secret',
        html_body: '<a href="https://id.example/verify?token=ev_secret">confirm</a>',
        created_at: at,
        next_attempt_at: at,
        attempts: 5,
        failed_at: at,
        last_error: '421 try later',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    failedMailId = Number(mail.id);
    log = recordPage(page);
    await enterConsoleInBrowser(page, base, t, operator, '/admin/audit');
  }, 120_000);

  afterAll(async () => {
    await stage?.close();
  }, 60_000);

  it('filters the audit log by a user and downloads it as CSV', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.locator('#audit-user').fill('quoted_quinn');
    await submit('form.audit-filters button[type="submit"]');
    expect(new URL(page.url()).searchParams.get('user')).toBe('quoted_quinn');
    const rows = page.locator('.audit-table tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.nth(1).textContent()).toContain('=Evil "Site"');
    await checkPage('console-audit-en');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.locator('a[href^="/admin/audit/export.csv"]').click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^audit-log-\d{8}T\d{6}Z\.csv$/);
    const csv = await readFile((await download.path()) as string, 'utf8');
    const lines = csv.split('\r\n');
    expect(lines[0]).toBe('id,at,actor,actor_name,action,subject,subject_name,ip,details');
    expect(lines).toHaveLength(4);
    expect(csv).toContain(',quoted_quinn,consent_allowed,client:');
    expect(csv).toContain(`"'=Evil ""Site""",192.0.2.7,{}`);
    // A filter that names nobody is said on its field.
    await page.locator('#audit-user').fill('nobody_such');
    await submit('form.audit-filters button[type="submit"]');
    expect(await page.locator('#audit-user').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#audit-user-error').textContent()).toBe('No account has this username or id.');
  });

  it('rotates a signing key and retries a failed message on the platform page', async () => {
    await page.goto(`${base}/admin/platform`);
    expect(await page.locator('h1').textContent()).toBe('Platform');
    await checkPage('console-platform-en');
    const before = await listSigningKeys(t.database.db);
    await page.locator('#rotate-alg').selectOption('EdDSA');
    await submit('form[action="/admin/platform/keys/rotate"] button[type="submit"]');
    if (new URL(page.url()).pathname === '/admin/reauthenticate')
      await reauthenticateInBrowser(page, t, operator);
    const after = await listSigningKeys(t.database.db);
    expect(after).toHaveLength(before.length + 1);
    const rotated = after.find((key) => !before.some((old) => old.kid === key.kid));
    expect(rotated).toMatchObject({ algorithm: 'EdDSA', signing: true });
    expect(await page.locator('[role="status"]').textContent()).toContain(
      `A new key signs from now on: ${rotated?.kid}`,
    );
    expect(await page.locator('.platform-kid', { hasText: rotated?.kid as string }).count()).toBe(1);
    await submit(
      `form[action="/admin/platform/mail/retry"]:has(input[name="id"][value="${failedMailId}"]) button`,
    );
    expect(await page.locator('[role="status"]').textContent()).toBe('The message is queued again.');
    expect(
      await page
        .locator(`form[action="/admin/platform/mail/retry"]:has(input[name="id"][value="${failedMailId}"])`)
        .count(),
    ).toBe(0);
    expect(await page.content()).not.toContain('quinn.private');
    expect(await page.content()).not.toContain('ev_secret');
  });

  it('opens an incident, which the public status shows, and resolves it', async () => {
    await page.goto(`${base}/admin/platform`);
    await page.locator('#incident-title').fill('Sign-in delays');
    await page.locator('#incident-message').fill('Codes arrive late.');
    await page.locator('#incident-severity').selectOption('major');
    await submit('form[action="/admin/platform/incidents"] button[type="submit"]');
    if (new URL(page.url()).pathname === '/admin/reauthenticate')
      await reauthenticateInBrowser(page, t, operator);
    const status = async () =>
      (await t.app.inject({ method: 'GET', url: '/api/v1/platform/status' })).json() as {
        incidents: Array<{ title: string }>;
      };
    expect((await status()).incidents.map((incident) => incident.title)).toContain('Sign-in delays');
    expect(await page.locator('.platform-incidents strong').allTextContents()).toContain('Sign-in delays');
    await submit('form[action="/admin/platform/incidents/resolve"] button[type="submit"]');
    if (new URL(page.url()).pathname === '/admin/reauthenticate')
      await reauthenticateInBrowser(page, t, operator);
    expect((await status()).incidents.map((incident) => incident.title)).not.toContain('Sign-in delays');
    expect(await page.locator('.platform-incidents strong').count()).toBe(0);
  });

  it('shows both pages in Russian, at 390 px and on a desktop, light and dark', async () => {
    for (const path of ['/admin/audit?user=quoted_quinn', '/admin/platform']) {
      await page.goto(`${base}${path}${path.includes('?') ? '&' : '?'}lang=ru`);
      expect(await page.locator('h1').textContent()).toBe(
        path.startsWith('/admin/audit') ? 'Журнал аудита' : 'Платформа',
      );
      await checkPage(`console-${path.startsWith('/admin/audit') ? 'audit' : 'platform'}-ru`);
    }
    await page.goto(`${base}/admin/audit?lang=en`);
    // The one error: the 400 of the filter that named nobody, answered on purpose.
    expect(log.consoleErrors.filter((line) => !line.includes('user=nobody_such'))).toEqual([]);
    expect(log.pageErrors).toEqual([]);
    expect(log.failedRequests).toEqual([]);
  });
});
