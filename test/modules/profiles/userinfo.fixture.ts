import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { makeClient, makeUser } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/** What the userinfo test files share. Tokens are inserted directly, as the token endpoint stores them. */
export let t: TestApp;
export let userId: number;
export let clientId: string;

export const ALL = ['openid', 'profile', 'email', 'verified'];

/** A fresh app with one user (every profile field set) and one client. */
export function setUpUserinfoApp(): void {
  beforeAll(async () => {
    t = await createTestApp();
    const user = await makeUser(t, {
      username: 'bearer_bob',
      email: 'bob@example.com',
      displayName: 'Bob B',
    });
    userId = user.id;
    clientId = (await makeClient(t)).clientId;
  });
  afterAll(() => t.close());
}

export const token = (
  options: { scopes?: string[]; expiresAt?: Date; revoked?: boolean; grantRevoked?: boolean } = {},
) => insertAccessToken(t.database.db, { userId, clientId, scopes: ALL, clock: t.clock, ...options });

export const userinfo = (headers: Record<string, string> = {}, url = '/api/v1/oauth/userinfo') =>
  t.app.inject({ method: 'GET', url, headers });

export function expectNoStore(res: LightMyRequestResponse): void {
  expect(res.headers['cache-control']).toBe('no-store');
  expect(res.headers.pragma).toBe('no-cache');
}
