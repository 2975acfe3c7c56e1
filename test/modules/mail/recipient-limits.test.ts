import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Context } from '../../../src/context.js';
import { fixedClock } from '../../../src/lib/clock.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import {
  enqueueMail,
  MAIL_LIMIT_PER_ADDRESS_PER_HOUR,
  type MailMessage,
  recipientKey,
} from '../../../src/modules/mail/mail.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../helpers/database.js';

/*
 * Mail limits per recipient address (issue 33, item 9): at most five messages of a kind to one
 * address an hour, whatever accounts they are about, the address counted in its normalised form.
 */

const PUBLIC_URL = 'https://id.example.test';
let database: TestDatabase;
let clock: ReturnType<typeof fixedClock>;
let ctx: Context;
const accounts: number[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  clock = fixedClock('2026-06-01T12:00:00Z');
  ctx = { config: testConfig({ PUBLIC_URL }), clock };
  for (let i = 0; i < 8; i++)
    accounts.push(
      (await createUser(database.db, ctx, { username: `holder_${i}`, password: 'a long password' })).id,
    );
});

afterAll(async () => {
  await database?.drop();
});

function message(to: string, kind = 'email_verification'): MailMessage {
  return {
    kind,
    to,
    locale: 'en',
    subject: 'Confirm your e-mail address',
    text: `Open ${PUBLIC_URL}/email/verify?token=ev_x\n`,
    html: `<p><a href="${PUBLIC_URL}/email/verify?token=ev_x">Confirm</a></p>`,
  };
}

const send = (userId: number, to: string, kind?: string) =>
  database.db.transaction().execute((trx) => enqueueMail(trx, ctx, { ...message(to, kind), userId }));

describe(`mail limits per recipient address on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('normalises an address: trimmed, lower-cased, without a +tag; dots kept', () => {
    expect(recipientKey('  Ann.Lee+shop@Example.ORG ')).toBe('ann.lee@example.org');
    expect(recipientKey('ann.lee@example.org')).toBe('ann.lee@example.org');
    expect(recipientKey('annlee@example.org')).toBe('annlee@example.org');
    expect(recipientKey('+only@example.org')).toBe('+only@example.org');
  });

  it('sends one address at most five messages of a kind an hour, whichever accounts they are about', async () => {
    // Eight accounts naming one address (in several spellings), each under its own account limit.
    const spellings = [
      'victim@example.org',
      'Victim@Example.org',
      'victim+1@example.org',
      'VICTIM+x@EXAMPLE.ORG',
    ];
    const results = [];
    for (const [i, userId] of accounts.entries())
      results.push(await send(userId, spellings[i % spellings.length] ?? ''));
    expect(results.filter((result) => result.queued)).toHaveLength(MAIL_LIMIT_PER_ADDRESS_PER_HOUR);
    expect(results.slice(MAIL_LIMIT_PER_ADDRESS_PER_HOUR)).toEqual(
      Array(accounts.length - MAIL_LIMIT_PER_ADDRESS_PER_HOUR).fill({ queued: false, reason: 'limit' }),
    );
    const queued = await database.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('kind', '=', 'email_verification')
      .execute();
    expect(queued).toHaveLength(MAIL_LIMIT_PER_ADDRESS_PER_HOUR);

    // Another kind, and another address, are counted apart.
    expect((await send(accounts[6] ?? 0, 'victim@example.org', 'password_reset')).queued).toBe(true);
    expect((await send(accounts[7] ?? 0, 'someone.else@example.org')).queued).toBe(true);

    // Only the address's hash is kept, and only for its hour.
    const stored = await database.db.selectFrom('mail_recipient_sends').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain('victim');

    // An hour after the first, there is room again; the rows past their hour are purged.
    clock.advance(3600 * 1000 + 1);
    expect((await send(accounts[7] ?? 0, 'victim@example.org')).queued).toBe(true);
    const report = await purgeExpired(database.db, ctx, { batchSize: 100, pauseMs: 0 });
    expect(report.mail_recipient_sends).toBeGreaterThanOrEqual(1);
    const left = await database.db.selectFrom('mail_recipient_sends').select('expires_at').execute();
    for (const row of left) expect(new Date(row.expires_at).getTime()).toBeGreaterThan(clock.now().getTime());
  });

  it('holds under a race: of 12 concurrent messages to one address from 12 accounts, five are queued', async () => {
    const racers = [];
    for (let i = 0; i < 12; i++)
      racers.push(
        (await createUser(database.db, ctx, { username: `racer_${i}`, password: 'a long password' })).id,
      );
    const results = await Promise.all(
      racers.map((userId) => send(userId, 'raced@example.org', 'email_change')),
    );
    expect(results.filter((result) => result.queued)).toHaveLength(MAIL_LIMIT_PER_ADDRESS_PER_HOUR);
  });
});
