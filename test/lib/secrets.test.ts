import { describe, expect, it } from 'vitest';
import { generateSecret, hashSecret, PREFIX, secretMatchesHash } from '../../src/lib/secrets.js';

describe('secrets', () => {
  it.each([
    ['clientId', /^pk_[A-Za-z0-9_-]{22}$/],
    ['clientSecret', /^sk_[A-Za-z0-9_-]{43}$/],
    ['authorizationCode', /^ac_[A-Za-z0-9_-]{43}$/],
    ['accessToken', /^at_[A-Za-z0-9_-]{43}$/],
    ['refreshToken', /^rt_[A-Za-z0-9_-]{43}$/],
    ['emailVerification', /^ev_[A-Za-z0-9_-]{43}$/],
    ['requestUri', /^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/],
  ] as const)('%s has its prefix and at least 128 bits of base64url', (kind, pattern) => {
    const values = new Set(Array.from({ length: 200 }, () => generateSecret(kind)));
    expect(values.size).toBe(200);
    for (const value of values) expect(value).toMatch(pattern);
    expect([...values][0]?.startsWith(PREFIX[kind])).toBe(true);
  });

  it('hashes with SHA-256 and compares against the hash', () => {
    const secret = generateSecret('clientSecret');
    const hash = hashSecret(secret);
    expect(hash).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(hash).not.toContain(secret.slice(3));
    expect(hashSecret('abc')).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(secretMatchesHash(secret, hash)).toBe(true);
    expect(secretMatchesHash(`${secret}x`, hash)).toBe(false);
    expect(secretMatchesHash(secret, 'short')).toBe(false);
  });
});
