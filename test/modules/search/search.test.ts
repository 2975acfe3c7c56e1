import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, updateUserProfile } from '../../../src/modules/accounts/accounts.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { expectApiError } from '../../helpers/assertions.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const PASSWORD = 'correct horse battery';

async function user(username: string, displayName?: string): Promise<number> {
  const created = await createUser(
    t.database.db,
    { config: t.config, clock: t.clock },
    {
      username,
      password: PASSWORD,
      ...(displayName ? { displayName } : {}),
    },
  );
  return created.id;
}

/** GET /api/users/search with a raw query string (so repeated and odd parameters can be sent). */
const searchRaw = (query: string) => t.app.inject({ method: 'GET', url: `/api/users/search?${query}` });

async function search(params: Record<string, string>) {
  const res = await searchRaw(new URLSearchParams(params).toString());
  expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  return res.json() as { ok: true; query: string; results: Array<Record<string, unknown>> };
}

const usernames = async (params: Record<string, string>) =>
  (await search(params)).results.map((result) => result.username);

describe('GET /api/users/search: result shape', () => {
  it('shows exactly the fields of SPEC.md "User search result", with their types', async () => {
    // All three are username prefixes of "shape": they come in code point order of lower(username).
    const fullId = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        username: 'ShapeFull',
        password: PASSWORD,
        email: 'shape.full@example.com',
        emailVerified: true,
        displayName: 'Shape Full',
        verificationLevel: 2,
      },
    ).then((created) => created.id);
    await updateUserProfile(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        username: 'shapefull',
        avatarUrl: '/avatars/shape.png',
        gameName: 'Shape Game',
        gameUrl: 'https://game.example.com/shape',
      },
    );
    const bareId = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        username: 'shapebare',
        password: PASSWORD,
        email: 'shape.bare@example.com',
      },
    ).then((created) => created.id);
    const standardId = await user('shapestd');
    await updateUserProfile(
      t.database.db,
      { config: t.config, clock: t.clock },
      { username: 'shapestd', verificationLevel: 1, avatarUrl: 'https://cdn.example.org/a.png' },
    );

    const res = await searchRaw('q=shape');
    expect(res.headers['cache-control']).toBe('public, max-age=30');
    const body = res.json();
    expect(body).toEqual({
      ok: true,
      query: 'shape',
      results: [
        {
          id: bareId,
          username: 'shapebare',
          display_name: 'shapebare',
          avatar_url: 'http://localhost:3000/static/default-avatar.png',
          premium: false,
          verification_tier: 'none',
          verified: false,
          url: '/shapebare',
        },
        {
          id: fullId,
          username: 'ShapeFull',
          display_name: 'Shape Full',
          avatar_url: 'http://localhost:3000/avatars/shape.png',
          premium: false,
          verification_tier: 'special',
          verified: true,
          url: '/ShapeFull',
        },
        {
          id: standardId,
          username: 'shapestd',
          display_name: 'shapestd',
          avatar_url: 'https://cdn.example.org/a.png',
          premium: false,
          verification_tier: 'standard',
          verified: true,
          url: '/shapestd',
        },
      ],
    });
    for (const result of body.results) {
      expect(typeof result.id).toBe('number');
      expect(Object.keys(result).sort()).toEqual(
        [
          'avatar_url',
          'display_name',
          'id',
          'premium',
          'url',
          'username',
          'verification_tier',
          'verified',
        ].sort(),
      );
    }
    // No e-mail, game or other private field anywhere in the body.
    expect(res.body).not.toMatch(/example\.com|email|game|password/i);
  });

  it('the default avatar URL of a result is served: a PNG, cached, revalidated by its ETag', async () => {
    await user('avatarless');
    const [result] = (await search({ q: 'avatarless' })).results;
    const url = new URL(String(result?.avatar_url));
    expect(url.origin).toBe('http://localhost:3000');
    const res = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('image/png');
    expect(res.headers['cache-control']).toBe('public, max-age=86400');
    expect(res.rawPayload.subarray(0, 8)).toEqual(
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    );
    const etag = String(res.headers.etag);
    const again = await t.app.inject({
      method: 'GET',
      url: url.pathname,
      headers: { 'if-none-match': etag },
    });
    expect(again.statusCode).toBe(304);
    expect(again.rawPayload.length).toBe(0);
  });

  it('answers no match with an empty list and echoes q exactly as sent', async () => {
    expect(await search({ q: 'nobody-has-this' })).toEqual({
      ok: true,
      query: 'nobody-has-this',
      results: [],
    });
    const padded = await search({ q: '  SHAPEBARE ' });
    expect(padded.query).toBe('  SHAPEBARE ');
    expect(padded.results.map((result) => result.username)).toEqual(['shapebare']);
  });
});

describe('GET /api/users/search: matching and order', () => {
  beforeAll(async () => {
    // Created out of the expected order, so the order comes from the query.
    for (const name of [
      'ymikay',
      'dominika',
      'mika_long_name',
      'xmikax',
      'amika',
      'mikael',
      'mike',
      'mika',
    ]) {
      await user(name);
    }
    await user('zed', 'Mika Hakkinen');
    await user('mikadisabled', 'Mika Disabled');
    await t.database.db
      .updateTable('users')
      .set({ disabled_at: t.clock.now() })
      .where('username', '=', 'mikadisabled')
      .execute();
  });

  it('puts the exact username first, then username prefixes in code point order, then the rest by similarity', async () => {
    expect(await usernames({ q: 'mika' })).toEqual([
      'mika', // exact
      'mika_long_name', // prefix, in code point order ('_' before 'e')
      'mikael', // prefix
      'amika', // 0.375
      'zed', // display name "Mika Hakkinen", 0.357
      'xmikax', // 0.2
      'ymikay', // 0.2, username breaks the tie
      // not dominika: similar ("...ika"), but does not contain "mika"
    ]);
  });

  it('matches case-insensitively, and similarity never adds a result', async () => {
    const found = await usernames({ q: 'MiKa' });
    expect(found[0]).toBe('mika');
    expect(found).not.toContain('mike');
    expect(found).not.toContain('dominika');
    expect(await usernames({ q: 'mike' })).toEqual(['mike']);
  });

  it('never shows disabled users', async () => {
    expect(await usernames({ q: 'mikadisabled' })).toEqual([]);
    expect(await usernames({ q: 'Mika Disabled' })).toEqual([]);
  });

  it('with username=1 matches usernames only; any other value does not restrict', async () => {
    expect(await usernames({ q: 'hakkinen' })).toEqual(['zed']);
    expect(await usernames({ q: 'hakkinen', username: '1' })).toEqual([]);
    expect(await usernames({ q: 'hakkinen', username: '0' })).toEqual(['zed']);
    expect(await usernames({ q: 'hakkinen', username: 'true' })).toEqual(['zed']);
    expect(await usernames({ q: 'mika', username: '1' })).not.toContain('zed');
    expect((await usernames({ q: 'mika', username: '1' }))[0]).toBe('mika');
  });
});

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
