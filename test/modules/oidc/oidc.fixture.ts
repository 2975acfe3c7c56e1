import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { afterAll, beforeAll, expect } from 'vitest';
import type { Context } from '../../../src/context.js';
import type { SigningAlgorithm } from '../../../src/lib/signing-algorithms.js';
import { findUserById } from '../../../src/modules/accounts/accounts.repository.js';
import type { User } from '../../../src/modules/accounts/user.js';
import { signIdToken } from '../../../src/modules/oidc/id-token.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, makeUser } from '../../helpers/factories.js';

/** What the id_token and signing-key test files share: one user, one client, and a client's view of the JWKS. */
export let t: TestApp;
export let ctx: Context;
export let user: User;
export let clientId: string;

export const ISSUER = 'http://localhost:3000';

/** A fresh app with a verified user (`oidc_alice`, level 2) and one client. */
export function setUpOidcApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    ctx = { config: t.config, clock: t.clock };
    const created = await makeUser(t, {
      username: 'oidc_alice',
      email: 'alice@example.com',
      displayName: 'Alice',
      verificationLevel: 2,
    });
    const row = await findUserById(t.database.db, created.id);
    if (!row) throw new Error('the user is gone');
    user = row;
    clientId = (await makeClient(t)).clientId;
  });
  afterAll(() => t.close());
}

export async function getJwks(): Promise<JSONWebKeySet> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/oauth/jwks' });
  expect(res.statusCode).toBe(200);
  return res.json() as JSONWebKeySet;
}

/**
 * Verifies an id_token the way a client registered for `alg` does: against the published JWKS, at
 * the test clock's time, accepting only that algorithm.
 */
export async function verify(idToken: string, jwks?: JSONWebKeySet, alg: SigningAlgorithm = 'RS256') {
  return jwtVerify(idToken, createLocalJWKSet(jwks ?? (await getJwks())), {
    issuer: ISSUER,
    audience: clientId,
    algorithms: [alg],
    currentDate: t.clock.now(),
  });
}

export const sign = (overrides: Partial<Parameters<typeof signIdToken>[2]> = {}) =>
  signIdToken(t.database.db, ctx, {
    user,
    clientId,
    scopes: ['openid', 'profile', 'email', 'verified'],
    nonce: null,
    authTime: t.clock.now(),
    amr: ['pwd'],
    ...overrides,
  });
