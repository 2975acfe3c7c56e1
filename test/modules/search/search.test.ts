import { beforeAll, describe, expect, it } from 'vitest';
import { updateUserProfile } from '../../../src/modules/accounts/accounts.service.js';
import { makeUser } from '../../helpers/factories.js';
import { PASSWORD, search, searchRaw, setUpSearchApp, t, user, usernames } from './search.fixture.js';

/*
 * The public user search: the result's shape, what
 * matches and in which order.
 */

setUpSearchApp();

describe('GET /api/users/search: result shape', () => {
  it('shows exactly the fields of a search result, with their types', async () => {
    // All three are username prefixes of "shape": they come in code point order of lower(username).
    const fullId = (
      await makeUser(t, {
        username: 'ShapeFull',
        password: PASSWORD,
        email: 'shape.full@example.com',
        displayName: 'Shape Full',
        verificationLevel: 2,
      })
    ).id;
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
    const bareId = (
      await makeUser(t, {
        username: 'shapebare',
        password: PASSWORD,
        email: 'shape.bare@example.com',
        bare: true,
      })
    ).id;
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
