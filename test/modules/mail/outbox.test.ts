import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Config } from '../../../src/config.js';
import type { Context } from '../../../src/context.js';
import type { Listen } from '../../../src/db/database.js';
import { fixedClock } from '../../../src/lib/clock.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import {
  enqueueMail,
  MAIL_LIMIT_PER_HOUR,
  type MailMessage,
  MailMessageError,
} from '../../../src/modules/mail/mail.service.js';
import {
  backoffMs,
  DEFAULT_MAIL_WORKER_OPTIONS,
  MailWorker,
  type MailWorkerOptions,
} from '../../../src/modules/mail/mail.worker.js';
import { claimDueMail, MAIL_CHANNEL, markMailSent } from '../../../src/modules/mail/outbox.repository.js';
import { createMailTransport, type MailTransport } from '../../../src/modules/mail/transport.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../helpers/database.js';
import { queuedId, TestSmtpServer } from './smtp.js';

/*
 * The e-mail outbox, end to end: enqueueMail on a transaction, the worker, and a
 * real SMTP server in this process that parses what it receives. The worker's clock is a fixed one,
 * moved by hand, so the backoff and the leases take no real time.
 */

const PUBLIC_URL = 'https://id.example.test';
const LINK = `${PUBLIC_URL}/email/verify?token=ev_AbC-123_xyz`;

function message(overrides: Partial<MailMessage> = {}): MailMessage {
  return {
    kind: 'email_verification',
    to: 'ada@example.org',
    locale: 'ru',
    subject: 'Подтвердите адрес',
    text: `Откройте ссылку, чтобы подтвердить адрес:\n\n${LINK}\n`,
    html: `<p>Откройте ссылку, чтобы подтвердить адрес:</p><p><a href="${LINK}">Подтвердить</a></p>`,
    ...overrides,
  };
}

interface Logged {
  level: 'info' | 'warn';
  object: Record<string, unknown>;
  message: string;
}

function recordingLog() {
  const entries: Logged[] = [];
  return {
    entries,
    info: (object: object, message: string) =>
      entries.push({ level: 'info', object: object as Record<string, unknown>, message }),
    warn: (object: object, message: string) =>
      entries.push({ level: 'warn', object: object as Record<string, unknown>, message }),
  };
}

let database: TestDatabase;
const smtp = new TestSmtpServer({ user: 'mailer', pass: 's3cret:pass' });
let clock: ReturnType<typeof fixedClock>;
let config: Config;
let ctx: Context;
const workers: MailWorker[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  await smtp.start();
});

afterAll(async () => {
  await smtp.stop();
  await database?.drop();
});

beforeEach(async () => {
  await database.db.deleteFrom('mail_outbox').execute();
  smtp.received.length = 0;
  smtp.refuse = undefined;
  await smtp.start();
  clock = fixedClock('2026-06-01T12:00:00Z');
  config = testConfig({ PUBLIC_URL, SMTP_URL: smtp.url(), MAIL_FROM: 'Example ID <no-reply@example.test>' });
  ctx = { config, clock };
});

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop();
});

/** A worker that polls rarely: the tests drive it with `drain`, or by the commit's announcement. */
function worker(
  options: Partial<MailWorkerOptions> = {},
  context: Context = ctx,
  log = recordingLog(),
): MailWorker {
  const made = new MailWorker(database.db, context, createMailTransport(context.config, log), log, {
    pollIntervalMs: 60_000,
    ...options,
  });
  workers.push(made);
  return made;
}

async function enqueue(overrides: Partial<MailMessage> = {}): Promise<number> {
  return database.db
    .transaction()
    .execute(async (trx) => queuedId(await enqueueMail(trx, ctx, message(overrides))));
}

async function row(id: number) {
  return database.db.selectFrom('mail_outbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

describe(`the mail outbox on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('delivers a committed message once, woken by the commit: both parts, headers, language, the link intact', async () => {
    const sender = worker();
    await sender.start(database.listen);
    const id = await enqueue();
    const [received] = await smtp.waitFor(1);
    const mail = received?.parsed;
    expect(received?.mailFrom).toBe('no-reply@example.test');
    expect(received?.rcptTo).toEqual(['ada@example.org']);
    expect(mail?.from?.value).toEqual([{ name: 'Example ID', address: 'no-reply@example.test' }]);
    expect(mail?.to && !Array.isArray(mail.to) ? mail.to.value : []).toEqual([
      { name: '', address: 'ada@example.org' },
    ]);
    expect(mail?.subject).toBe('Подтвердите адрес');
    expect(mail?.headers.get('content-language')).toBe('ru');
    expect(mail?.headers.get('auto-submitted')).toBe('auto-generated');
    expect(mail?.text).toContain(LINK);
    expect(mail?.html).toContain(`href="${LINK}"`);
    expect(received?.raw).toMatch(/Content-Type: multipart\/alternative/i);
    // The SMTP server has the message before the worker has its reply and records the send.
    let stored = await row(id);
    for (const deadline = Date.now() + 5_000; stored.sent_at === null && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      stored = await row(id);
    }
    expect(stored.sent_at).toEqual(clock.now());
    expect(stored.attempts).toBe(1);
    expect(stored.claim_id).toBeNull();
    // Sent once: a second look finds nothing due.
    expect(await sender.drain()).toBe(0);
    expect(smtp.received).toHaveLength(1);
  });

  it('never sends a message whose transaction rolled back', async () => {
    const sender = worker();
    await sender.start(database.listen);
    await expect(
      database.db.transaction().execute(async (trx) => {
        await enqueueMail(trx, ctx, message());
        throw new Error('the change it announced failed');
      }),
    ).rejects.toThrow('the change it announced failed');
    expect(await sender.drain()).toBe(0);
    expect(await database.db.selectFrom('mail_outbox').selectAll().execute()).toEqual([]);
    expect(smtp.received).toHaveLength(0);
  });

  it('refuses a message with a link outside PUBLIC_URL, a relative link, or a bad recipient or language', async () => {
    const bad: Array<Partial<MailMessage>> = [
      { text: 'Open https://evil.example/reset?token=x' },
      { html: '<a href="/email/verify?token=x">verify</a>' },
      { html: `<a href="${PUBLIC_URL}.evil.example/x">verify</a>` },
      { to: 'ada@example.org\r\nBcc: eve@example.org' },
      { to: 'Ada <ada@example.org>' },
      { locale: 'de' as MailMessage['locale'] },
      { subject: 'two\nlines' },
      { text: ' ' },
    ];
    for (const overrides of bad) {
      await expect(enqueue(overrides), JSON.stringify(overrides)).rejects.toBeInstanceOf(MailMessageError);
    }
    expect(await database.db.selectFrom('mail_outbox').selectAll().execute()).toEqual([]);
  });

  it('keeps a message while SMTP is down, retries it with backoff, and delivers it once when it is back', async () => {
    await smtp.stop();
    const log = recordingLog();
    const sender = worker({ baseBackoffMs: 30_000 }, ctx, log);
    const id = await enqueue();
    expect(await sender.drain()).toBe(0);
    let stored = await row(id);
    expect(stored.attempts).toBe(1);
    expect(stored.sent_at).toBeNull();
    expect(stored.failed_at).toBeNull();
    expect(stored.last_error).toMatch(/ECONNREFUSED/);
    expect(stored.last_error).not.toContain('s3cret');
    expect(stored.next_attempt_at).toEqual(new Date(clock.now().getTime() + 30_000));
    // Not due before its time.
    clock.advance(29_000);
    expect(await sender.drain()).toBe(0);
    expect((await row(id)).attempts).toBe(1);
    clock.advance(1_000);
    expect(await sender.drain()).toBe(0);
    stored = await row(id);
    expect(stored.attempts).toBe(2);
    // The second delay doubles.
    expect(stored.next_attempt_at).toEqual(new Date(clock.now().getTime() + 60_000));
    // The log says which message failed and why, never its link, subject or recipient.
    const logged = JSON.stringify(log.entries);
    expect(logged).toMatch(/will retry/);
    expect(logged).not.toContain('ev_AbC');
    expect(logged).not.toContain('ada@example.org');

    await smtp.start();
    clock.advance(60_000);
    expect(await sender.drain()).toBe(1);
    expect(await sender.drain()).toBe(0);
    clock.advance(24 * 3600_000);
    expect(await sender.drain()).toBe(0);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]?.parsed.text).toContain(LINK);
    stored = await row(id);
    expect(stored.attempts).toBe(3);
    expect(stored.last_error).toBeNull();
  });

  it('gives a message up after the last attempt and records the SMTP error, for `idp mail outbox --failed`', async () => {
    smtp.refuse = 'Mailbox temporarily unavailable';
    const sender = worker({ maxAttempts: 2, baseBackoffMs: 1_000 });
    const id = await enqueue();
    expect(await sender.drain()).toBe(0);
    clock.advance(1_000);
    expect(await sender.drain()).toBe(0);
    const stored = await row(id);
    expect(stored.attempts).toBe(2);
    expect(stored.failed_at).toEqual(clock.now());
    expect(stored.last_error).toMatch(/451/);
    expect(stored.last_error).toMatch(/Mailbox temporarily unavailable/);
    expect(stored.purge_after).toEqual(new Date(clock.now().getTime() + 30 * 24 * 3600_000));
    smtp.refuse = undefined;
    clock.advance(24 * 3600_000);
    expect(await sender.drain()).toBe(0);
    expect(smtp.received).toHaveLength(0);
  });

  it('two workers on one database deliver each message exactly once', async () => {
    const ids: number[] = [];
    for (let index = 0; index < 24; index++)
      ids.push(await enqueue({ to: `user${index}@example.org`, subject: `Message ${index}` }));
    // Two instances: each its own context and transport, sharing only the database.
    const other: Context = { config, clock };
    const one = worker({ batchSize: 3 });
    const two = worker({ batchSize: 3 }, other);
    const [sentByOne, sentByTwo] = await Promise.all([one.drain(), two.drain()]);
    expect(sentByOne + sentByTwo).toBe(24);
    const subjects = smtp.received.map((received) => received.parsed.subject).sort();
    expect(subjects).toHaveLength(24);
    expect(new Set(subjects).size).toBe(24);
    const rows = await database.db.selectFrom('mail_outbox').select(['sent_at', 'attempts']).execute();
    expect(rows.every((stored) => stored.sent_at !== null && stored.attempts === 1)).toBe(true);
  });

  it('never sends a message of its batch whose lease ended while it sent the others: another instance may have it', async () => {
    for (let index = 0; index < 3; index++)
      await enqueue({ to: `slow${index}@example.org`, subject: `Slow ${index}` });
    const two = worker({ leaseMs: 300_000 }, { config, clock });
    // A slow SMTP server: each send takes 200 s of the 300 s lease, so the batch's third message
    // starts 400 s after it was claimed. While the second is sent, the other instance looks.
    const inner = createMailTransport(config, recordingLog());
    let sends = 0;
    const slow: MailTransport = {
      kind: 'smtp',
      async send(mail) {
        clock.advance(200_000);
        if (++sends === 2) await two.drain();
        return inner.send(mail);
      },
      close: () => inner.close(),
    };
    const log = recordingLog();
    const one = new MailWorker(database.db, ctx, slow, log, { leaseMs: 300_000, batchSize: 3 });
    workers.push(one);
    const sent = await one.drain();
    const subjects = smtp.received.map((received) => received.parsed.subject).sort();
    expect(subjects).toEqual(['Slow 0', 'Slow 1', 'Slow 2']);
    expect(sent).toBe(2);
    const rows = await database.db.selectFrom('mail_outbox').select(['sent_at']).execute();
    expect(rows.every((stored) => stored.sent_at !== null)).toBe(true);
    expect(JSON.stringify(log.entries)).not.toMatch(/after its claim had ended/);
  });

  it('retries a message claimed by an instance that died, once its lease has ended', async () => {
    const id = await enqueue();
    const now = clock.now();
    // An instance claims it and dies before sending.
    const [claimed] = await claimDueMail(database.db, {
      now,
      leaseUntil: new Date(now.getTime() + 300_000),
      claimId: 'dead-instance',
      limit: 10,
    });
    expect(claimed?.id).toBe(id);
    const sender = worker({ leaseMs: 300_000 });
    expect(await sender.drain()).toBe(0);
    clock.advance(299_999);
    expect(await sender.drain()).toBe(0);
    clock.advance(1);
    expect(await sender.drain()).toBe(1);
    expect(smtp.received).toHaveLength(1);
    expect((await row(id)).attempts).toBe(2);
    // The dead instance's claim no longer counts: it cannot record the message as its own.
    expect(await markMailSent(database.db, { id, claimId: 'dead-instance' }, { now, purgeAfter: now })).toBe(
      false,
    );
  });

  it('stops before the database closes: the send in progress is recorded, and nothing is sent after', async () => {
    // The worker's subscriptions, counted: the stop must end the one the start opened.
    let subscribed = 0;
    const listen: Listen = async (channel, handlers) => {
      const unlisten = await database.listen(channel, handlers);
      subscribed++;
      return async () => {
        subscribed--;
        await unlisten();
      };
    };
    const sender = worker();
    await sender.start(listen);
    expect(subscribed).toBe(1);
    const id = await enqueue();
    await smtp.waitFor(1);
    await sender.stop();
    expect(subscribed).toBe(0);
    expect((await row(id)).sent_at).not.toBeNull();
    // Its poll timer and an announcement both wake it, and a wake runs a pass at once (before it
    // returns): after the stop, one runs nothing.
    const drain = vi.spyOn(sender, 'drain');
    sender.wake();
    // The next commit's announcement, heard by a listener still subscribed: not by the worker.
    let heard: () => void = () => undefined;
    const announced = new Promise<void>((resolve) => {
      heard = resolve;
    });
    const unlisten = await database.listen(MAIL_CHANNEL, {
      onMessage: () => heard(),
      onState: () => undefined,
    });
    const after = await enqueue({ subject: 'After the stop' });
    await announced;
    await unlisten();
    expect(drain).not.toHaveBeenCalled();
    expect((await row(after)).attempts).toBe(0);
    expect(smtp.received).toHaveLength(1);
  });

  it('the housekeeping purge deletes sent messages a week after sending, never one still waiting', async () => {
    const sent = await enqueue();
    await worker().drain();
    await smtp.stop();
    const waiting = await enqueue();
    clock.advance(7 * 24 * 3600_000 + 1);
    const report = await purgeExpired(database.db, ctx, { batchSize: 100, pauseMs: 0 });
    expect(report.mail_outbox).toBe(1);
    const left = await database.db.selectFrom('mail_outbox').select('id').execute();
    expect(left.map((stored) => stored.id)).toEqual([waiting]);
    expect(left.map((stored) => stored.id)).not.toContain(sent);
  });
});

describe(`at most ${MAIL_LIMIT_PER_HOUR} messages of a kind per account per hour`, () => {
  let ada: number;
  let bob: number;

  beforeAll(async () => {
    const made = testConfig({ PUBLIC_URL });
    const users = { config: made, clock: fixedClock('2026-06-01T11:00:00Z') };
    ada = (await createUser(database.db, users, { username: 'ada_limit', password: 'a long password' })).id;
    bob = (await createUser(database.db, users, { username: 'bob_limit', password: 'a long password' })).id;
  });

  // Each account's own address: the address's limit (below) is not what this counts.
  const send = (userId: number, kind = 'password_reset') =>
    database.db
      .transaction()
      .execute((trx) =>
        enqueueMail(trx, ctx, { ...message({ kind, to: `user${userId}@example.org` }), userId }),
      );

  it('queues five, refuses the sixth, counts each kind and account apart, and has room again an hour later', async () => {
    for (let i = 0; i < MAIL_LIMIT_PER_HOUR; i++) expect((await send(ada)).queued).toBe(true);
    expect(await send(ada)).toEqual({ queued: false, reason: 'limit' });
    expect((await send(ada, 'email_verification')).queued).toBe(true);
    expect((await send(bob)).queued).toBe(true);
    // Messages about no account are not limited.
    for (let i = 0; i < MAIL_LIMIT_PER_HOUR + 1; i++) await enqueue({ kind: 'password_reset' });

    clock.advance(59 * 60 * 1000);
    expect((await send(ada)).queued).toBe(false);
    clock.advance(61 * 1000);
    expect((await send(ada)).queued).toBe(true);
  });

  it('holds under a race: of 12 concurrent requests, exactly five are queued', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => send(bob, 'email_change')));
    expect(results.filter((result) => result.queued)).toHaveLength(MAIL_LIMIT_PER_HOUR);
    const rows = await database.db
      .selectFrom('mail_outbox')
      .where('user_id', '=', bob)
      .where('kind', '=', 'email_change')
      .select('id')
      .execute();
    expect(rows).toHaveLength(MAIL_LIMIT_PER_HOUR);
  });
});

describe('without SMTP_URL (the development fallback)', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'idp-outbox-test-'));
  });

  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes each message as a parseable .eml file in DATA_DIR/outbox/ and logs its link', async () => {
    const fileConfig = testConfig({ PUBLIC_URL, DATA_DIR: dataDir });
    const fileCtx: Context = { config: fileConfig, clock };
    const log = recordingLog();
    const id = await database.db
      .transaction()
      .execute(async (trx) => queuedId(await enqueueMail(trx, fileCtx, message({ locale: 'en' }))));
    expect(await worker({}, fileCtx, log).drain()).toBe(1);
    const files = await readdir(path.join(dataDir, 'outbox'));
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/\.eml$/);
    const raw = await readFile(path.join(dataDir, 'outbox', files[0] as string));
    // RFC 5322: lines end in CRLF.
    expect(raw.toString('utf8')).toMatch(/\r\n\r\n/);
    expect(raw.toString('utf8').replace(/\r\n/g, '')).not.toMatch(/\n/);
    const parsed = await simpleParser(raw);
    expect(parsed.from?.value).toEqual([{ name: 'idp', address: 'no-reply@id.example.test' }]);
    expect(parsed.headers.get('content-language')).toBe('en');
    expect(parsed.text).toContain(LINK);
    expect(parsed.html).toContain(LINK);
    const written = log.entries.find((entry) => entry.level === 'info' && 'file' in entry.object);
    expect(written?.object.links).toEqual([LINK]);
    expect((await row(id)).sent_at).not.toBeNull();
  });
});

describe('the retry schedule', () => {
  it('doubles from 30 seconds up to an hour, and gives up after the 10th send, about 3 hours in', () => {
    const delays = Array.from({ length: 9 }, (_, index) => backoffMs(index + 1, DEFAULT_MAIL_WORKER_OPTIONS));
    expect(delays.map((ms) => ms / 1000)).toEqual([30, 60, 120, 240, 480, 960, 1920, 3600, 3600]);
    expect(DEFAULT_MAIL_WORKER_OPTIONS.maxAttempts).toBe(10);
    const total = delays.reduce((sum, ms) => sum + ms, 0) / 3600_000;
    expect(total).toBeGreaterThan(3);
    expect(total).toBeLessThan(3.2);
    // A send hung at the SMTP timeouts ends long before its lease lets another instance claim it.
    expect(DEFAULT_MAIL_WORKER_OPTIONS.leaseMs).toBeGreaterThan(20_000 + 20_000 + 60_000);
  });
});
