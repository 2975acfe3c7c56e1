import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/lib/clock.js';
import { enqueueMail } from '../../src/modules/mail/mail.service.js';
import { claimDueMail, markMailFailed } from '../../src/modules/mail/outbox.repository.js';
import { testConfig } from '../helpers/app.js';
import { failed, succeeded } from '../helpers/cli.js';
import { type InProcessCli, inProcessCli } from '../helpers/cli-in-process.js';
import { usingPostgres } from '../helpers/database.js';
import { queuedId, TestSmtpServer } from '../modules/mail/smtp.js';

/*
 * `idp mail test --to` and `idp mail outbox`, run in process through the CLI's
 * own parsing and execution (test/helpers/cli-in-process.ts) against a fresh database: the test
 * message goes straight to the SMTP server in this process (not through the outbox), and a server
 * that is down is an exit 1 with its error.
 */

const TIMEOUT = 60_000;
const PUBLIC_URL = 'https://id.example.test';

let cli: InProcessCli | undefined;
/** Where the message goes without SMTP_URL: DATA_DIR/outbox/. */
let dataDir = '';
const smtp = new TestSmtpServer({ user: 'mailer', pass: 'letter-box-9' });

beforeAll(async () => {
  await smtp.start();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'idp-mail-test-'));
  cli = await inProcessCli({ PUBLIC_URL, DATA_DIR: dataDir });
});

afterAll(async () => {
  await smtp.stop();
  await cli?.database.drop();
  await rm(dataDir, { recursive: true, force: true });
});

const idp = (args: readonly string[], extra: Record<string, string> = {}) => {
  if (!cli) throw new Error('no CLI');
  return cli.withEnv(extra)(args);
};

describe(`idp mail on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('mail test sends one message through SMTP_URL at once', { timeout: TIMEOUT }, async () => {
    const result = succeeded(
      await idp(['mail', 'test', '--to', 'operator@example.org', '--json'], { SMTP_URL: smtp.url() }),
    );
    expect(result).toEqual({ sent: true, transport: 'smtp', message_id: expect.stringMatching(/^<.+@.+>$/) });
    const [received] = await smtp.waitFor(1);
    expect(received?.rcptTo).toEqual(['operator@example.org']);
    expect(received?.mailFrom).toBe('no-reply@id.example.test');
    expect(received?.parsed.headers.get('content-language')).toBe('en');
    expect(received?.parsed.text).toContain(`${PUBLIC_URL}/`);
    expect(received?.parsed.html).toContain(`href="${PUBLIC_URL}/"`);
    // Not through the outbox.
    const outbox = succeeded(await idp(['mail', 'outbox', '--json']));
    expect(outbox).toEqual({ pending: 0, sent: 0, failed: 0, messages: [] });
  });

  it('mail test exits 1 with the SMTP error when the server refuses the login or is down', {
    timeout: TIMEOUT,
  }, async () => {
    failed(
      await idp(['mail', 'test', '--to', 'operator@example.org'], {
        SMTP_URL: smtp.url({ user: 'mailer', pass: 'wrong-password' }),
      }),
      /^idp: sending failed: EAUTH 535/,
    );
    await smtp.stop();
    const stderr = failed(
      await idp(['mail', 'test', '--to', 'operator@example.org'], { SMTP_URL: smtp.url() }),
      /^idp: sending failed: .*ECONNREFUSED/,
    );
    expect(stderr).not.toContain('letter-box-9');
    expect(smtp.received).toHaveLength(1);
  });

  it('mail test without SMTP_URL writes the .eml file and prints its links', {
    timeout: TIMEOUT,
  }, async () => {
    const result = succeeded(await idp(['mail', 'test', '--to', 'operator@example.org', '--json']));
    expect(result).toMatchObject({ sent: true, transport: 'file', links: [`${PUBLIC_URL}/`] });
    expect(String(result.file).startsWith(path.join(dataDir, 'outbox'))).toBe(true);
    const parsed = await simpleParser(await readFile(String(result.file)));
    expect(parsed.subject).toBe('Test message');
  });

  it('mail outbox lists what waits and what was given up on, with the error and never the body', {
    timeout: TIMEOUT,
  }, async () => {
    const db = cli?.database.db;
    if (!db) throw new Error('no CLI');
    const ctx = { config: testConfig({ PUBLIC_URL }), clock: systemClock };
    const message = {
      kind: 'password_reset',
      locale: 'en' as const,
      subject: 'Reset',
      text: `${PUBLIC_URL}/password/reset?token=pr_secret-token`,
      html: `<a href="${PUBLIC_URL}/password/reset?token=pr_secret-token">Reset</a>`,
    };
    await enqueueMail(db, ctx, { ...message, to: 'waiting@example.org' });
    const failedId = queuedId(await enqueueMail(db, ctx, { ...message, to: 'gone@example.org' }));
    const now = new Date();
    const claimed = await claimDueMail(db, { now, leaseUntil: now, claimId: 'c', limit: 10 });
    const mail = claimed.find((item) => item.id === failedId);
    if (!mail) throw new Error('not claimed');
    await markMailFailed(db, mail, {
      now,
      error: '550 5.1.1 no such user',
      retryAt: null,
      purgeAfter: now,
    });
    const all = await idp(['mail', 'outbox', '--json']);
    expect(succeeded(all)).toMatchObject({ pending: 1, sent: 0, failed: 1 });
    expect(all.stdout).not.toContain('pr_secret-token');
    const onlyFailed = succeeded(await idp(['mail', 'outbox', '--failed', '--json']));
    expect(onlyFailed.messages).toEqual([
      expect.objectContaining({
        kind: 'password_reset',
        recipient: 'gone@example.org',
        status: 'failed',
        attempts: 1,
        last_error: '550 5.1.1 no such user',
      }),
    ]);
  });

  it('mail test refuses anything but one address', { timeout: TIMEOUT }, async () => {
    failed(await idp(['mail', 'test']), /--to is required/);
    failed(
      await idp(['mail', 'test', '--to', 'Operator <operator@example.org>']),
      /--to must be one address/,
    );
  });
});
