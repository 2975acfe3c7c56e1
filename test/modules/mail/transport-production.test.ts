import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config.js';
import { MailWorker } from '../../../src/modules/mail/mail.worker.js';
import { createMailTransport, startupMailWarning } from '../../../src/modules/mail/transport.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { childEnv, runNode } from '../../helpers/cli.js';
import { makeUser } from '../../helpers/factories.js';
import { capturedLogger } from '../../helpers/log-capture.js';
import { TestSmtpServer } from './smtp.js';

/*
 * With NODE_ENV=production no log line carries a link with a token (a password reset, an address
 * verification…): logs are shipped, kept and read far more widely than the database. A user asks
 * for a reset, the outbox is sent through each transport production can have (SMTP, MAIL_DISABLED=1,
 * and the file fallback, which the CLI still uses), the link is followed, and every line the
 * service logged at every level is searched for the token. The server refuses to start in
 * production with no way to send mail.
 */

const captured = capturedLogger('trace');
const smtp = new TestSmtpServer();
let t: TestApp;
let dataDir: string;

beforeAll(async () => {
  await smtp.start();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'idp-mail-production-'));
  t = await createTestApp({
    env: {
      NODE_ENV: 'production',
      COOKIE_SECRET: 'c'.repeat(40),
      PUBLIC_URL: 'https://id.example.test',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'trace',
    },
    logger: captured.logger,
  });
});

afterAll(async () => {
  await t?.close();
  await smtp.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** Asks for a reset of a new account, sends the outbox with `transport`'s settings, follows the link. */
async function resetThrough(settings: Partial<Config>) {
  const config = { ...t.config, ...settings };
  const user = await makeUser(t);
  const worker = new MailWorker(
    t.database.db,
    { config, clock: t.clock },
    createMailTransport(config, captured.logger),
    captured.logger,
  );
  const browser = new Browser(t.app);
  const asked = await browser.submit('/password/forgot', '/password/forgot', { login: user.username });
  expect(asked.statusCode).toBeLessThan(400);
  await t.app.afterResponse.idle();
  await worker.drain();
  await worker.stop();
  const mail = await t.database.db
    .selectFrom('mail_outbox')
    .selectAll()
    .where('user_id', '=', user.id)
    .where('kind', '=', 'password_reset')
    .executeTakeFirstOrThrow();
  const link = /https:\/\/\S+/.exec(mail.text_body)?.[0] ?? '';
  const token = new URL(link).searchParams.get('token') ?? '';
  expect(token).toMatch(/^pr_[\w-]{20,}$/);
  // The link works: it opens the form that sets a new password.
  const page = await browser.get(link.slice(config.PUBLIC_URL.length));
  expect(page.statusCode).toBe(200);
  expect(page.body).toContain('name="password"');
  return { mail, link, token };
}

/** Every captured line that carries `token`, whole or in part. */
const linesWith = (token: string) =>
  captured.lines.filter((line) => line.includes(token) || line.includes(token.slice(0, 16)));

describe('NODE_ENV=production', () => {
  it('logs no reset link or token when mail goes through SMTP', async () => {
    const { token, link } = await resetThrough({ SMTP_URL: smtp.url() });
    expect(smtp.received.map((received) => received.parsed.text ?? '').join('')).toContain(link);
    expect(captured.lines.some((line) => line.includes('"msg":"mail: sent"'))).toBe(true);
    expect(linesWith(token)).toEqual([]);
  });

  it('with MAIL_DISABLED=1, sends nothing, records the message as given up, and logs its id and kind only', async () => {
    const before = smtp.received.length;
    const { mail, token } = await resetThrough({ MAIL_DISABLED: true });
    expect(mail).toMatchObject({ sent_at: null, attempts: 1 });
    expect(mail.failed_at).not.toBeNull();
    expect(mail.last_error).toBe('not sent: e-mail is turned off (MAIL_DISABLED=1)');
    const line = captured.lines
      .map((text) => JSON.parse(text) as Record<string, unknown>)
      .find((entry) => entry.msg === 'mail: not sent' && entry.mailId === mail.id);
    expect(line).toMatchObject({ level: 30, kind: 'password_reset', attempt: 1 });
    expect(smtp.received.length).toBe(before);
    expect(linesWith(token)).toEqual([]);
  });

  it('with the file fallback (no SMTP_URL: the CLI), writes the file and logs its path, not its links', async () => {
    const { token } = await resetThrough({ SMTP_URL: undefined, MAIL_DISABLED: false });
    const files = await readdir(path.join(dataDir, 'outbox'));
    expect(files).toHaveLength(1);
    const line = captured.lines.find((text) => text.includes('written to a file'));
    expect(line).toContain(files[0]);
    expect(line).not.toContain('links');
    expect(linesWith(token)).toEqual([]);
  });

  it('warns at start when mail is turned off, and names no link', () => {
    expect(startupMailWarning({ ...t.config, MAIL_DISABLED: true })).toBe(
      'MAIL_DISABLED=1: no e-mail is sent; each message is recorded as given up (idp mail outbox --failed)',
    );
    expect(startupMailWarning({ ...t.config, SMTP_URL: smtp.url() })).toBeUndefined();
  });

  it('the server refuses to start without SMTP_URL or MAIL_DISABLED=1, before it opens a database', async () => {
    const emptyDir = path.join(dataDir, 'never-created');
    const result = await runNode('bin/server.js', [], {
      env: childEnv({
        NODE_ENV: 'production',
        COOKIE_SECRET: 'c'.repeat(40),
        PUBLIC_URL: 'https://id.example.test',
        DATA_DIR: emptyDir,
        PORT: '0',
      }),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe(
      'idp: refusing to start with NODE_ENV=production: SMTP_URL must be set (smtp://user:password@host:587), or MAIL_DISABLED=1 to send no e-mail at all (docs/operating.md "E-mail")',
    );
    await expect(readdir(emptyDir)).rejects.toThrow(/ENOENT/);
  });
});

describe('in development', () => {
  it('the file fallback still logs the links, for a developer to follow', async () => {
    const config = {
      ...t.config,
      NODE_ENV: 'development' as const,
      SMTP_URL: undefined,
      MAIL_DISABLED: false,
    };
    const logged: Array<Record<string, unknown>> = [];
    const log = { info: (object: object) => logged.push({ ...object }), warn: () => undefined };
    const transport = createMailTransport(config, log);
    const link = `${config.PUBLIC_URL}/password/reset?token=pr_example`;
    await transport.send({
      to: 'a@example.com',
      locale: 'en',
      subject: 'S',
      text: `Open ${link}\n`,
      html: '<p>x</p>',
    });
    expect(logged).toEqual([expect.objectContaining({ links: [link] })]);
  });
});
