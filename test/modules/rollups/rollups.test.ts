import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import { startRollupFlush } from '../../../src/modules/rollups/rollup-flush.js';
import { MAX_PENDING_MINUTES, RollupRecorder } from '../../../src/modules/rollups/rollup-recorder.js';
import { addRollups } from '../../../src/modules/rollups/rollups.repository.js';
import { alignSeries, rangeWindow, readSeries } from '../../../src/modules/rollups/rollups.service.js';
import { routeClassOf } from '../../../src/modules/rollups/route-class.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';

/*
 * The per-minute rollups: counted in memory, added to the database by each instance (two recorders
 * on one database sum), read back in buckets, purged after ROLLUPS_RETENTION_DAYS.
 */

const MINUTE = 60_000;
const config = testConfig({ ROLLUPS_RETENTION_DAYS: '2' });
const clock = fixedClock('2026-06-01T12:00:00Z');
let t: { database: TestDatabase };
beforeAll(async () => {
  t = { database: await createTestDatabase() };
});
afterAll(() => t.database.drop());

/** A recorder whose clock the test sets. */
function recorderAt(start: string) {
  let now = Date.parse(start);
  const recorder = new RollupRecorder(() => now);
  return { recorder, move: (ms: number) => (now += ms) };
}

async function rows() {
  return t.database.db
    .selectFrom('metric_rollups')
    .select(['minute', 'name', 'key', 'value'])
    .orderBy('minute')
    .orderBy('name')
    .orderBy('key')
    .execute();
}

describe('two instances on one database', () => {
  it('add their counts to the same rows, one statement per flush', async () => {
    const a = recorderAt('2026-03-01T10:00:05Z');
    const b = recorderAt('2026-03-01T10:00:40Z');
    a.recorder.tokens('site_a', 'authorization_code');
    a.recorder.tokens('site_a', 'refresh_token');
    b.recorder.tokens('site_a', 'authorization_code');
    b.recorder.tokens('site_b', 'authorization_code');
    a.move(MINUTE);
    a.recorder.audit('sign_in');
    a.recorder.audit('consent_allowed'); // not a counter
    expect(await a.recorder.flush(t.database.db)).toBe(4);
    expect(await b.recorder.flush(t.database.db)).toBe(3);
    // A second flush of A adds to its rows, it does not replace them.
    a.recorder.audit('sign_in');
    await a.recorder.flush(t.database.db);
    expect(await a.recorder.flush(t.database.db)).toBe(0);

    const at = (iso: string) => new Date(iso);
    expect(await rows()).toEqual([
      { minute: at('2026-03-01T10:00:00Z'), name: 'refreshes', key: '', value: 1 },
      { minute: at('2026-03-01T10:00:00Z'), name: 'tokens_issued', key: '', value: 4 },
      { minute: at('2026-03-01T10:00:00Z'), name: 'tokens_issued', key: 'site_a', value: 3 },
      { minute: at('2026-03-01T10:00:00Z'), name: 'tokens_issued', key: 'site_b', value: 1 },
      { minute: at('2026-03-01T10:01:00Z'), name: 'sign_ins_ok', key: '', value: 2 },
    ]);
  });

  it('keep counts a failed flush could not write, for the next one', async () => {
    const { recorder } = recorderAt('2026-03-01T11:00:00Z');
    recorder.charge(2.5);
    await expect(recorder.flush(t.database.db.withSchema('no_such_schema'))).rejects.toThrow();
    recorder.charge(1);
    expect(await recorder.flush(t.database.db)).toBe(2);
    const points = await readSeries(t.database.db, {
      names: ['charges', 'charged_minor_units'],
      from: new Date('2026-03-01T11:00:00Z'),
      to: new Date('2026-03-01T11:01:00Z'),
      bucketMinutes: 1,
    });
    expect(points.map(({ name, value }) => [name, value])).toEqual([
      ['charged_minor_units', 350],
      ['charges', 2],
    ]);
  });

  it('drop the oldest minutes past MAX_PENDING_MINUTES while the database refuses them', async () => {
    const { recorder, move } = recorderAt('2026-03-02T00:00:00Z');
    const broken = t.database.db.withSchema('no_such_schema');
    for (let minute = 0; minute < MAX_PENDING_MINUTES + 5; minute++) {
      recorder.count('codes_issued');
      await expect(recorder.flush(broken)).rejects.toThrow();
      move(MINUTE);
    }
    const kept = recorder.take();
    expect(kept).toHaveLength(MAX_PENDING_MINUTES);
    expect(kept.map((count) => count.minute.getTime()).sort()[0]).toBe(Date.parse('2026-03-02T00:05:00Z'));
  });

  it('flush once more when the worker stops', async () => {
    const { recorder } = recorderAt('2026-03-03T08:00:00Z');
    const stop = startRollupFlush(t.database.db, recorder, { intervalMs: 3_600_000, log: console });
    recorder.response('/api/v1/oauth/token', 429);
    recorder.response('/api/v1/oauth/token', 200);
    await stop();
    const points = await readSeries(t.database.db, {
      names: ['http_4xx', 'http_429', 'http_5xx'],
      from: new Date('2026-03-03T08:00:00Z'),
      to: new Date('2026-03-03T09:00:00Z'),
      bucketMinutes: 60,
    });
    expect(points.map(({ name, key, value }) => [name, key, value])).toEqual([
      ['http_429', 'oauth', 1],
      ['http_4xx', 'oauth', 1],
    ]);
  });
});

describe('readSeries', () => {
  it('sums buckets from the epoch, of one key or of each key apart', async () => {
    const minute = (m: number) => new Date(Date.parse('2026-04-01T00:00:00Z') + m * MINUTE);
    await addRollups(t.database.db, [
      { minute: minute(0), name: 'tokens_issued', key: '', value: 1 },
      { minute: minute(14), name: 'tokens_issued', key: '', value: 2 },
      { minute: minute(15), name: 'tokens_issued', key: '', value: 4 },
      { minute: minute(15), name: 'tokens_issued', key: 'app', value: 4 },
      { minute: minute(61), name: 'tokens_issued', key: '', value: 8 }, // past `to`
    ]);
    const query = { names: ['tokens_issued'] as const, from: minute(0), to: minute(60), bucketMinutes: 15 };
    const totals = await readSeries(t.database.db, { ...query, key: '' });
    expect(totals.map(({ at, value }) => [at.toISOString(), value])).toEqual([
      ['2026-04-01T00:00:00.000Z', 3],
      ['2026-04-01T00:15:00.000Z', 4],
    ]);
    const apart = await readSeries(t.database.db, query);
    expect(apart.map(({ key, value }) => [key, value])).toEqual([
      ['', 3],
      ['', 4],
      ['app', 4],
    ]);
    const window = { from: minute(0), to: minute(60), bucketMinutes: 15 };
    expect(alignSeries(apart, window, ['tokens_issued', 'tokens_issued:app'])).toEqual({
      times: [0, 15, 30, 45].map((m) => minute(m).getTime() / 1000),
      values: { tokens_issued: [3, 4, 0, 0], 'tokens_issued:app': [0, 4, 0, 0] },
    });
  });

  it('refuses a bucket that is not a whole number of minutes', async () => {
    const query = { names: ['codes_issued'] as const, from: new Date(0), to: new Date(), bucketMinutes: 1.5 };
    await expect(readSeries(t.database.db, query)).rejects.toThrow(RangeError);
  });

  it('offers windows of whole buckets ending with the current minute', () => {
    const now = new Date('2026-05-05T10:07:30Z');
    expect(rangeWindow('hour', now)).toEqual({
      from: new Date('2026-05-05T09:08:00Z'),
      to: new Date('2026-05-05T10:08:00Z'),
      bucketMinutes: 1,
    });
    expect(rangeWindow('day', now)).toMatchObject({
      to: new Date('2026-05-05T10:15:00Z'),
      bucketMinutes: 15,
    });
    const week = rangeWindow('week', now, 360);
    expect((week.to.getTime() - week.from.getTime()) / 3_600_000).toBe(168);
  });
});

describe('the hooks', () => {
  it('count a sign-in once per door, and answers by status and route class', () => {
    const { recorder } = recorderAt('2026-03-04T00:00:00Z');
    recorder.audit('device_signed_in', {}); // the mobile app, with the password alone
    recorder.audit('device_signed_in', { second_factor: 'totp' }); // its password step counted already
    recorder.audit('second_factor_passed');
    recorder.response('/signin', 503);
    recorder.response('/signin', 302);
    recorder.response(undefined, 404);
    const counts = recorder.take().map(({ name, key, value }) => [name, key, value]);
    expect(counts).toEqual([
      ['sign_ins_ok', '', 1],
      ['http_5xx', 'pages', 1],
      ['http_4xx', 'other', 1],
    ]);
  });

  it("count a client's codes and token answers by outcome under its own keys, a code of no outcome as other", () => {
    const { recorder } = recorderAt('2026-03-04T00:00:00Z');
    recorder.code('pk_a');
    for (const outcome of ['ok', 'ok', 'invalid_grant', 'made_up_error'])
      recorder.tokenRequest('pk_a', outcome);
    recorder.tokenRequest('pk_b', 'ok');
    const counts = recorder.take().map(({ name, key, value }) => [name, key, value]);
    expect(counts).toEqual([
      ['codes_issued', '', 1],
      ['codes_issued', 'pk_a', 1],
      ['token_requests', 'pk_a|ok', 2],
      ['token_requests', 'pk_a|invalid_grant', 1],
      ['token_requests', 'pk_a|other', 1],
      ['token_requests', 'pk_b|ok', 1],
    ]);
  });
});

describe('the route classes', () => {
  it('come from the route pattern, a bounded set', () => {
    expect(routeClassOf('/api/v1/oauth/token')).toBe('oauth');
    expect(routeClassOf('/.well-known/openid-configuration')).toBe('oauth');
    expect(routeClassOf('/api/v1/oauth/userinfo')).toBe('oauth');
    expect(routeClassOf('/api/v1/me')).toBe('api');
    expect(routeClassOf('/api/v1/mobile/verify')).toBe('mobile');
    expect(routeClassOf('/api/v1/wallet/charge')).toBe('wallet');
    expect(routeClassOf('/admin')).toBe('console');
    expect(routeClassOf('/admin/users/:id')).toBe('console');
    expect(routeClassOf('/signin')).toBe('pages');
    expect(routeClassOf('/assets/styles.css')).toBe('other');
    expect(routeClassOf(undefined)).toBe('other');
  });
});

describe('the housekeeping purge', () => {
  it('deletes minutes older than ROLLUPS_RETENTION_DAYS and keeps the rest', async () => {
    const now = clock.now().getTime();
    const minuteOf = (ms: number) => new Date(Math.floor(ms / MINUTE) * MINUTE);
    await addRollups(t.database.db, [
      { minute: minuteOf(now - 2 * 86_400_000 - MINUTE), name: 'sign_ins_failed', key: '', value: 1 },
      { minute: minuteOf(now - 2 * 86_400_000 + MINUTE), name: 'sign_ins_failed', key: '', value: 1 },
    ]);
    const before = (await rows()).length;
    const report = await purgeExpired(t.database.db, { config, clock }, { batchSize: 2, pauseMs: 0 });
    // Every row of the tests above is months older than the test clock's 2 days.
    expect(report.metric_rollups).toBe(before - 1);
    expect(await rows()).toEqual([
      { minute: minuteOf(now - 2 * 86_400_000 + MINUTE), name: 'sign_ins_failed', key: '', value: 1 },
    ]);
  });
});
