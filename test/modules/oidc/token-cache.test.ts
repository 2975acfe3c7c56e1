import { describe, expect, it } from 'vitest';
import type { User } from '../../../src/modules/accounts/user.js';
import type { ClientWithSecretHash } from '../../../src/modules/clients/clients.repository.js';
import { ClientCache } from '../../../src/modules/oauth/client-cache.js';
import type { AccessTokenContext } from '../../../src/modules/oidc/token-cache.js';
import { AccessTokenCache } from '../../../src/modules/oidc/token-cache.js';

function context(
  tokenHash: string,
  ids: { grant?: number; user?: number; client?: number; expiresAt?: number } = {},
) {
  return {
    tokenHash,
    grantId: ids.grant ?? 1,
    userId: ids.user ?? 1,
    clientPk: ids.client ?? 1,
    clientId: 'pk_x',
    scopes: ['openid'],
    expiresAt: new Date(ids.expiresAt ?? 1_000_000),
    user: { id: ids.user ?? 1 } as User,
    jkt: null,
  } satisfies AccessTokenContext;
}

function listeningCache(maxAgeMs = 10_000, maxEntries = 100): AccessTokenCache {
  const cache = new AccessTokenCache({ maxAgeMs, maxEntries });
  cache.setListening(true);
  return cache;
}

describe('AccessTokenCache', () => {
  it('keeps a valid token until it expires or grows too old', () => {
    const cache = listeningCache(10_000);
    cache.set(context('a', { expiresAt: 50_000 }), 1_000, cache.readVersion);
    expect(cache.get('a', 2_000)?.tokenHash).toBe('a');
    expect(cache.get('a', 11_000)).toBeUndefined(); // older than maxAge
    cache.set(context('b', { expiresAt: 5_000 }), 1_000, cache.readVersion);
    expect(cache.get('b', 5_000)).toBeUndefined(); // expired
  });

  it('drops entries by token, grant, user and client announcements', () => {
    const cache = listeningCache();
    cache.set(context('t1', { grant: 1, user: 10, client: 100 }), 0, cache.readVersion);
    cache.set(context('t2', { grant: 2, user: 10, client: 100 }), 0, cache.readVersion);
    cache.set(context('t3', { grant: 3, user: 11, client: 101 }), 0, cache.readVersion);
    cache.set(context('t4', { grant: 4, user: 12, client: 102 }), 0, cache.readVersion);
    cache.handle('t:t4');
    expect(cache.get('t4', 1)).toBeUndefined();
    cache.handle('g:3');
    expect(cache.get('t3', 1)).toBeUndefined();
    expect(cache.get('t1', 1)).toBeDefined();
    cache.handle('u:10');
    expect(cache.get('t1', 1)).toBeUndefined();
    expect(cache.get('t2', 1)).toBeUndefined();
    cache.set(context('t5', { client: 105 }), 1, cache.readVersion);
    cache.handle('c:105');
    expect(cache.get('t5', 2)).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  it('empties itself on an announcement it does not know', () => {
    const cache = listeningCache();
    cache.set(context('a'), 0, cache.readVersion);
    cache.handle('x:anything');
    expect(cache.size).toBe(0);
  });

  it('does not cache a read that an announcement overtook', () => {
    const cache = listeningCache();
    const before = cache.readVersion;
    cache.handle('g:1'); // the revocation commits while the database read is under way
    cache.set(context('a', { grant: 1 }), 0, before);
    expect(cache.get('a', 1)).toBeUndefined();
  });

  it('caches nothing while not listening, and forgets everything when listening stops', () => {
    const cache = new AccessTokenCache({ maxAgeMs: 10_000, maxEntries: 10 });
    cache.set(context('a'), 0, cache.readVersion);
    expect(cache.get('a', 1)).toBeUndefined();
    cache.setListening(true);
    cache.set(context('a'), 0, cache.readVersion);
    expect(cache.get('a', 1)).toBeDefined();
    cache.setListening(false);
    expect(cache.get('a', 1)).toBeUndefined();
    cache.set(context('a'), 0, cache.readVersion);
    expect(cache.size).toBe(0);
  });

  it('holds at most maxEntries, dropping the oldest', () => {
    const cache = listeningCache(10_000, 2);
    for (const hash of ['a', 'b', 'c']) cache.set(context(hash), 0, cache.readVersion);
    expect(cache.size).toBe(2);
    expect(cache.get('a', 1)).toBeUndefined();
    expect(cache.get('c', 1)).toBeDefined();
  });
});

describe('ClientCache', () => {
  const row = (id: number, clientId: string) => ({ id, clientId }) as unknown as ClientWithSecretHash;

  it('keeps clients while listening, drops one on its announcement and all when listening stops', () => {
    const cache = new ClientCache({ maxAgeMs: 10_000, maxEntries: 10 });
    cache.set(row(1, 'pk_a'), 0, cache.readVersion);
    expect(cache.get('pk_a', 1)).toBeUndefined(); // not listening yet
    cache.setListening(true);
    cache.set(row(1, 'pk_a'), 0, cache.readVersion);
    cache.set(row(2, 'pk_b'), 0, cache.readVersion);
    expect(cache.get('pk_a', 1)?.id).toBe(1);
    cache.handle('c:1');
    expect(cache.get('pk_a', 1)).toBeUndefined();
    expect(cache.get('pk_b', 1)?.id).toBe(2);
    cache.handle('t:whatever'); // token announcements leave clients alone
    expect(cache.get('pk_b', 1)?.id).toBe(2);
    expect(cache.get('pk_b', 10_000)).toBeUndefined(); // too old
    cache.set(row(2, 'pk_b'), 0, cache.readVersion);
    cache.setListening(false);
    expect(cache.get('pk_b', 1)).toBeUndefined();
  });

  it('does not keep a read that an announcement overtook', () => {
    const cache = new ClientCache({ maxAgeMs: 10_000, maxEntries: 10 });
    cache.setListening(true);
    const before = cache.readVersion;
    cache.handle('c:1');
    cache.set(row(1, 'pk_a'), 0, before);
    expect(cache.get('pk_a', 1)).toBeUndefined();
  });
});
