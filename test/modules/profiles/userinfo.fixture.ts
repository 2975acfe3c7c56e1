import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, expect } from 'vitest';
import { createUser } from '../../../src/modules/accounts/accounts.service.js';
import { createClient } from '../../../src/modules/clients/clients.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
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
    const user = await createUser(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        username: 'bearer_bob',
        password: 'correct horse battery staple',
        email: 'bob@example.com',
        emailVerified: true,
        displayName: 'Bob B',
        verificationLevel: 1,
      },
    );
    userId = user.id;
    const client = await createClient(
      t.database.db,
      { config: t.config, clock: t.clock },
      {
        name: 'Shop',
        siteUrl: 'https://shop.example',
        redirectUris: ['https://shop.example/cb'],
      },
    );
    clientId = client.client_id;
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
