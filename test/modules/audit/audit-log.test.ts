import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { recordAudit } from '../../../src/modules/audit/audit.repository.js';
import { auditCsv, csvField } from '../../../src/modules/audit/audit-export.js';
import {
  AuditFilterError,
  exportAuditLog,
  listAuditLog,
  parseAuditTime,
  presentAuditEvent,
  resolveAuditFilter,
} from '../../../src/modules/audit/audit-log.service.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../../helpers/database.js';

/*
 * The operators' reads of the audit log: filters as typed (a username or id, a client_id, an
 * action, a time or a duration), each event with the names behind its references, keyset pages,
 * and the CSV export's quoting and neutralised formulas.
 */

const NOW = new Date('2026-06-01T12:00:00Z');
const ctx = { config: testConfig(), clock: fixedClock(NOW) };
let database: TestDatabase;
const ids = { alice: 0, bob: 0, operator: 0, client: '', other: '' };

const minutesAgo = (m: number) => new Date(NOW.getTime() - m * 60_000);

beforeAll(async () => {
  database = await createTestDatabase();
  const db = database.db;
  const make = (username: string) =>
    createUser(db, ctx, { username, password: 'correct horse battery staple' }).then((u) => u.id);
  ids.alice = await make('Alice_Log');
  ids.bob = await make('bob_log');
  ids.operator = await make('olga_ops');
  const site = { siteUrl: 'https://site.example', redirectUris: ['https://site.example/cb'] };
  ids.client = (await createClient(db, ctx, { name: 'Shop "Best"', ...site })).client_id;
  ids.other = (await createClient(db, ctx, { name: 'Other site', ...site })).client_id;
  const events = [
    { at: minutesAgo(300), actor: `user:${ids.alice}`, action: 'sign_in', subject: `user:${ids.alice}` },
    { at: minutesAgo(200), actor: 'anonymous', action: 'sign_in_failed', subject: 'username:alice_log' },
    {
      at: minutesAgo(100),
      actor: `user:${ids.alice}`,
      action: 'consent_allowed',
      subject: `client:${ids.client}`,
    },
    {
      at: minutesAgo(50),
      actor: `client:${ids.client}`,
      action: 'wallet_charged',
      subject: `user:${ids.bob}`,
    },
    {
      at: minutesAgo(20),
      actor: `operator:${ids.operator}`,
      action: 'second_factors_reset',
      subject: `user:${ids.alice}`,
      details: { operator: 'olga_ops', role: 'support' },
    },
    {
      at: minutesAgo(10),
      actor: `user:${ids.bob}`,
      action: 'consent_allowed',
      subject: `client:${ids.other}`,
    },
    { at: minutesAgo(5), actor: 'operator', action: 'key_rotated', subject: 'key:kid-1' },
    {
      at: minutesAgo(1),
      actor: `operator:999999`,
      action: 'sign_in_unlocked',
      details: { operator: 'gone_op' },
    },
  ];
  for (const event of events) await recordAudit(db, { ...event, ip: '203.0.113.9' } as never);
});

afterAll(() => database.drop());

async function actionsFor(input: Parameters<typeof resolveAuditFilter>[2]): Promise<string[]> {
  const filter = await resolveAuditFilter(database.db, NOW, input);
  return (await listAuditLog(database.db, filter, { limit: 100 })).events.map((e) => e.action);
}

describe('parseAuditTime', () => {
  it('takes durations back from now and ISO dates and times (UTC without a zone)', () => {
    expect(parseAuditTime('15m', NOW)).toEqual(minutesAgo(15));
    expect(parseAuditTime('2h', NOW)).toEqual(minutesAgo(120));
    expect(parseAuditTime('7d', NOW)).toEqual(new Date('2026-05-25T12:00:00Z'));
    expect(parseAuditTime('30s', NOW)).toEqual(new Date('2026-06-01T11:59:30Z'));
    expect(parseAuditTime('1w', NOW)).toEqual(new Date('2026-05-25T12:00:00Z'));
    expect(parseAuditTime('2026-05-01', NOW)).toEqual(new Date('2026-05-01T00:00:00Z'));
    expect(parseAuditTime('2026-05-01T08:30', NOW)).toEqual(new Date('2026-05-01T08:30:00Z'));
    expect(parseAuditTime('2026-05-01T08:30:15Z', NOW)).toEqual(new Date('2026-05-01T08:30:15Z'));
    expect(parseAuditTime('2026-05-01T08:30+03:00', NOW)).toEqual(new Date('2026-05-01T05:30:00Z'));
  });

  it('refuses anything else', () => {
    for (const text of [
      '',
      '15',
      '15x',
      'm15',
      '-2h',
      'yesterday',
      '2026-02-31',
      '2026-13-01',
      '2026-05-01T8',
      '1e3d',
    ])
      expect(parseAuditTime(text, NOW), text).toBeUndefined();
  });
});

describe(`the audit log's filters on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('by user (username in any case, or id): what they did, what was done to them, failed sign-ins naming them', async () => {
    const expected = ['second_factors_reset', 'consent_allowed', 'sign_in_failed', 'sign_in'];
    expect(await actionsFor({ user: 'alice_log' })).toEqual(expected);
    expect(await actionsFor({ user: String(ids.alice) })).toEqual(expected);
    expect(await actionsFor({ user: '@ALICE_LOG' })).toEqual(expected);
  });

  it('by client, by operator, by action, by time range, and all of them at once', async () => {
    expect(await actionsFor({ client: ids.client })).toEqual(['wallet_charged', 'consent_allowed']);
    expect(await actionsFor({ operator: 'olga_ops' })).toEqual(['second_factors_reset']);
    // An operator's account as a user: its console actions are what it did too.
    expect(await actionsFor({ user: 'olga_ops' })).toEqual(['second_factors_reset']);
    expect(await actionsFor({ action: 'consent_allowed' })).toEqual(['consent_allowed', 'consent_allowed']);
    expect(await actionsFor({ since: '60m' })).toEqual([
      'sign_in_unlocked',
      'key_rotated',
      'consent_allowed',
      'second_factors_reset',
      'wallet_charged',
    ]);
    expect(await actionsFor({ since: '60m', until: '2026-06-01T11:35Z' })).toEqual(['wallet_charged']);
    expect(
      await actionsFor({ user: 'bob_log', client: ids.client, action: 'wallet_charged', since: '1d' }),
    ).toEqual(['wallet_charged']);
    expect(await actionsFor({ user: 'bob_log', client: ids.client, action: 'sign_in' })).toEqual([]);
  });

  it('names the field of a filter that names nothing or is malformed', async () => {
    const refused = async (input: Parameters<typeof resolveAuditFilter>[2], field: string) => {
      const error = await resolveAuditFilter(database.db, NOW, input).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(AuditFilterError);
      expect((error as AuditFilterError).field).toBe(field);
      expect((error as AuditFilterError).status).toBe(400);
    };
    await refused({ user: 'nobody_here' }, 'user');
    await refused({ user: '424242' }, 'user');
    await refused({ operator: 'x'.repeat(500) }, 'operator');
    await refused({ client: 'pk_unknown' }, 'client');
    await refused({ action: 'DROP TABLE' }, 'action');
    await refused({ since: 'last week' }, 'since');
    await refused({ since: '1h', until: '2h' }, 'until');
  });

  it('shows usernames and client names beside the references, the recorded operator name for a gone account', async () => {
    const { events } = await listAuditLog(database.db, {}, { limit: 100 });
    const shown = events.map((e) => [e.actor, e.actorName, e.subject, e.subjectName]);
    expect(shown).toEqual([
      ['operator:999999', 'gone_op', null, null],
      ['operator', null, 'key:kid-1', null],
      [`user:${ids.bob}`, 'bob_log', `client:${ids.other}`, 'Other site'],
      [`operator:${ids.operator}`, 'olga_ops', `user:${ids.alice}`, 'Alice_Log'],
      [`client:${ids.client}`, 'Shop "Best"', `user:${ids.bob}`, 'bob_log'],
      [`user:${ids.alice}`, 'Alice_Log', `client:${ids.client}`, 'Shop "Best"'],
      ['anonymous', null, 'username:alice_log', null],
      [`user:${ids.alice}`, 'Alice_Log', `user:${ids.alice}`, 'Alice_Log'],
    ]);
  });

  it('pages newest first by id, each page starting below the last id of the one before', async () => {
    const seen: string[] = [];
    let before: number | undefined;
    for (;;) {
      const page = await listAuditLog(database.db, {}, { limit: 3, beforeId: before });
      expect(page.events.length).toBeLessThanOrEqual(3);
      seen.push(...page.events.map((e) => e.action));
      if (page.nextBefore === null) break;
      before = page.nextBefore;
    }
    const all = (await listAuditLog(database.db, {}, { limit: 100 })).events.map((e) => e.action);
    expect(seen).toEqual(all);
    expect(all).toHaveLength(8);
  });

  it('exports at most its bound, saying whether more matched', async () => {
    const filter = await resolveAuditFilter(database.db, NOW, { action: 'consent_allowed' });
    const exported = await exportAuditLog(database.db, filter);
    expect(exported.truncated).toBe(false);
    expect(exported.events.map(presentAuditEvent)).toMatchObject([
      { action: 'consent_allowed', actor_name: 'bob_log', subject_name: 'Other site', ip: '203.0.113.9' },
      { action: 'consent_allowed', actor_name: 'Alice_Log', subject_name: 'Shop "Best"' },
    ]);
  });
});

describe('the CSV export (RFC 4180)', () => {
  it('quotes commas, quotes and line breaks, and turns a formula into text', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField(null)).toBe('');
    expect(csvField(42)).toBe('42');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("http://evil.example","x")')).toBe(
      '"\'=HYPERLINK(""http://evil.example"",""x"")"',
    );
    expect(csvField('=1+2\nnext')).toBe('"\'=1+2\nnext"');
    for (const start of ['+', '-', '@', '\t', '\r'])
      expect(csvField(`${start}cmd`).startsWith(`'`) || csvField(`${start}cmd`).startsWith(`"'`)).toBe(true);
  });

  it('writes a header and one CRLF-ended record per event', () => {
    const csv = auditCsv([
      {
        id: 7,
        at: '2026-06-01T12:00:00.000Z',
        actor: 'anonymous',
        actor_name: null,
        action: 'sign_in_failed',
        subject: 'username:=cmd|"/c calc"!a1',
        subject_name: '=2+3',
        ip: '203.0.113.9',
        details: { note: 'line one\nline "two"' },
      },
    ]);
    expect(csv).toBe(
      'id,at,actor,actor_name,action,subject,subject_name,ip,details\r\n' +
        '7,2026-06-01T12:00:00.000Z,anonymous,,sign_in_failed,"username:=cmd|""/c calc""!a1",\'=2+3,203.0.113.9,' +
        '"{""note"":""line one\\nline \\""two\\""""}"\r\n',
    );
  });
});
