import { beforeAll, describe, expect, it } from 'vitest';
import { expectApiError } from '../../helpers/assertions.js';
import { search, searchRaw, setUpSearchApp, t, user, usernames } from './search.fixture.js';

/*
 * The user search's input: terms taken literally, the limit, refused queries, and the premium flag
 * by the injected clock.
 */

setUpSearchApp();

describe('GET /api/users/search: literal input', () => {
  beforeAll(async () => {
    await user('litpercent', '100% real');
    await user('litdigits', 'Agent 007');
    await user('litunder', 'under_score');
    await user('litsonic', 'superxsonic');
    await user('litbackslash', 'back\\slash');
    await user('litbooks', 'bookshelf');
    await user('litquote', "O'Brien");
    await user('litdouble', 'say "hi"');
    await user('litsql', "' or 1=1 --");
    await user('litalice', 'Алиса Петрова');
    await user('litalexey', 'Алексей');
  });

  it('treats %, _ and \\ as themselves, not as LIKE wildcards', async () => {
    expect(await usernames({ q: '%' })).toEqual(['litpercent']);
    expect(await usernames({ q: '0%' })).toEqual(['litpercent']);
    expect(await usernames({ q: 'r_s' })).toEqual(['litunder']);
    expect(await usernames({ q: 'k\\s' })).toEqual(['litbackslash']);
    expect(await usernames({ q: '\\' })).toEqual(['litbackslash']);
  });

  it('treats quotes and SQL-looking input as text', async () => {
    expect(await usernames({ q: "O'Br" })).toEqual(['litquote']);
    expect(await usernames({ q: "'" })).toEqual(['litquote', 'litsql']);
    expect(await usernames({ q: '"hi"' })).toEqual(['litdouble']);
    expect(await usernames({ q: "' or 1=1 --" })).toEqual(['litsql']);
    expect(await usernames({ q: "x'; drop table users; --" })).toEqual([]);
    expect(await usernames({ q: 'litq' })).toEqual(['litquote']);
  });

  it('matches Unicode display names case-insensitively', async () => {
    expect(await usernames({ q: 'Алиса' })).toEqual(['litalice']);
    const lower = await search({ q: 'алиса' });
    expect(lower.query).toBe('алиса');
    expect(lower.results.map((result) => result.username)).toEqual(['litalice']);
    expect(await usernames({ q: 'ПЕТРОВА' })).toEqual(['litalice']);
    expect((await usernames({ q: 'Ал' })).sort()).toEqual(['litalexey', 'litalice']);
  });
});

describe('GET /api/users/search: limit', () => {
  beforeAll(async () => {
    // Straight into the table: 55 password hashes would only slow the test down.
    await t.database.db
      .insertInto('users')
      .values(
        Array.from({ length: 55 }, (_, i) => ({
          username: `many${String(i + 1).padStart(2, '0')}`,
          password_hash: 'not-a-hash',
          created_at: t.clock.now(),
          updated_at: t.clock.now(),
        })),
      )
      .execute();
  });

  it('defaults to 20, caps at 50 and honours smaller values', async () => {
    expect(await usernames({ q: 'many' })).toHaveLength(20);
    expect(await usernames({ q: 'many', limit: '50' })).toHaveLength(50);
    expect(await usernames({ q: 'many', limit: '51' })).toHaveLength(50);
    expect(await usernames({ q: 'many', limit: '99999999' })).toHaveLength(50);
    expect(await usernames({ q: 'many', limit: '3' })).toEqual(['many01', 'many02', 'many03']);
    expect(await usernames({ q: 'many', limit: '1' })).toEqual(['many01']);
  });

  it('refuses a limit below 1 or not a whole number', async () => {
    for (const limit of ['0', '-1', 'abc', '2.5', '', '1e3', ' 5']) {
      expectApiError(await searchRaw(`q=many&limit=${encodeURIComponent(limit)}`), 400, 'invalid_request');
    }
    expectApiError(await searchRaw('q=many&limit=5&limit=6'), 400, 'invalid_request');
  });
});

describe('GET /api/users/search: invalid q', () => {
  it('refuses a missing, empty, blank, too long or repeated q with 400 invalid_request', async () => {
    for (const query of [
      '',
      'limit=5',
      'q=',
      'q=%20%20%20',
      `q=${'a'.repeat(65)}`,
      `q=${encodeURIComponent('ж'.repeat(65))}`,
      'q=mika&q=mikael',
      'q=mi%00ka',
      'q=mika&username=1&username=1',
    ]) {
      const res = await searchRaw(query);
      expectApiError(res, 400, 'invalid_request');
    }
  });

  it('accepts 64 characters, counted after trimming and as characters, not bytes', async () => {
    expect(await search({ q: 'a'.repeat(64) })).toMatchObject({ results: [] });
    expect(await search({ q: ` ${'a'.repeat(64)} ` })).toMatchObject({ results: [] });
    expect(await search({ q: 'ж'.repeat(64) })).toMatchObject({ results: [] });
    expect(await search({ q: '😀'.repeat(64) })).toMatchObject({ results: [] });
  });
});

describe('GET /api/users/search: premium', () => {
  it('is true only while a premium period is active, by the injected clock', async () => {
    const ids = {
      premnow: await user('premnow'),
      prempast: await user('prempast'),
      premfuture: await user('premfuture'),
      premedge: await user('premedge'),
      premnone: await user('premnone'),
    };
    const period = (userId: number, startsAt: string, endsAt: string) => ({
      user_id: userId,
      billing_period: 'month' as const,
      starts_at: new Date(startsAt),
      ends_at: new Date(endsAt),
      created_at: new Date(startsAt),
    });
    t.clock.set('2026-06-01T12:00:00Z');
    await t.database.db
      .insertInto('premium_periods')
      .values([
        period(ids.premnow, '2026-05-15T00:00:00Z', '2026-06-15T00:00:00Z'),
        period(ids.prempast, '2026-04-01T00:00:00Z', '2026-05-01T00:00:00Z'),
        period(ids.premfuture, '2026-07-01T00:00:00Z', '2026-08-01T00:00:00Z'),
        // Ends exactly now: over.
        period(ids.premedge, '2026-05-01T12:00:00Z', '2026-06-01T12:00:00Z'),
      ])
      .execute();

    const premium = async () =>
      Object.fromEntries((await search({ q: 'prem' })).results.map((r) => [r.username, r.premium]));
    expect(await premium()).toEqual({
      premnow: true,
      prempast: false,
      premfuture: false,
      premedge: false,
      premnone: false,
    });

    t.clock.set('2026-07-01T00:00:00Z'); // starts exactly now: active
    expect(await premium()).toEqual({
      premnow: false,
      prempast: false,
      premfuture: true,
      premedge: false,
      premnone: false,
    });
  });
});
