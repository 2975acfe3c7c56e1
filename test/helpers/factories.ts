// Users, clients and codes made through the services, as the app itself makes them.
import type { Deps } from '../../src/context.js';
import { createUser } from '../../src/modules/accounts/accounts.service.js';
import { findClientByClientId } from '../../src/modules/clients/clients.repository.js';
import { createClient } from '../../src/modules/clients/clients.service.js';
import { issueCode } from '../../src/modules/oauth/authorize/code.service.js';
import type { AuthorizationRequest } from '../../src/modules/oauth/authorize/request.js';
import { normalizeScopes } from '../../src/modules/oauth/scopes.js';
import type { TestApp } from './app.js';

export interface TestClient {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
}

export interface TestUser {
  id: number;
  username: string;
  password: string;
}

export function depsOf(t: TestApp): Deps {
  return { db: t.database.db, ctx: { config: t.config, clock: t.clock } };
}

let counter = 0;

/**
 * A user's fields. Those not given get a full profile (e-mail confirmed, a display name, level 1), or,
 * with `bare`, what the service gives when they are left out (none, unconfirmed, level 0).
 */
export interface UserOptions {
  username?: string;
  password?: string;
  email?: string;
  emailVerified?: boolean;
  displayName?: string;
  verificationLevel?: number;
  bare?: boolean;
}

export async function makeUser(t: TestApp, options: UserOptions = {}): Promise<TestUser> {
  counter += 1;
  const { bare, ...given } = options;
  const username = given.username ?? `user_${counter}_${Math.random().toString(36).slice(2, 8)}`;
  const password = given.password ?? 'correct horse battery staple';
  const profile = bare
    ? {}
    : {
        email: `${username}@example.com`,
        emailVerified: true,
        displayName: `Display ${username}`,
        verificationLevel: 1,
      };
  const user = await createUser(t.database.db, depsOf(t).ctx, { ...profile, ...given, username, password });
  return { id: user.id, username: user.username, password };
}

export async function makeClient(
  t: TestApp,
  options: {
    name?: string;
    wallet?: boolean;
    redirectUris?: string[];
    postLogoutRedirectUris?: string[];
    siteUrl?: string;
    officialMobile?: boolean;
    requirePar?: boolean;
    deviceGrant?: boolean;
  } = {},
): Promise<TestClient> {
  const redirectUris = options.redirectUris ?? ['https://site.example/callback', 'http://127.0.0.1:8080/cb'];
  const client = await createClient(t.database.db, depsOf(t).ctx, {
    name: options.name ?? 'Test Site',
    siteUrl: options.siteUrl ?? 'https://site.example',
    redirectUris,
    postLogoutRedirectUris: options.postLogoutRedirectUris ?? [],
    wallet: options.wallet ?? false,
    officialMobile: options.officialMobile ?? false,
    requirePar: options.requirePar ?? false,
    deviceGrant: options.deviceGrant ?? false,
  });
  return {
    clientId: client.client_id,
    clientSecret: client.client_secret,
    redirectUri: redirectUris[0] as string,
  };
}

/** The official mobile app's client: the only one the mobile routes serve. */
export function makeOfficialApp(
  t: TestApp,
  options: { name?: string; redirectUris?: string[] } = {},
): Promise<TestClient> {
  return makeClient(t, {
    name: options.name ?? 'Official app',
    siteUrl: 'https://id.example',
    redirectUris: options.redirectUris ?? ['https://id.example/app'],
    officialMobile: true,
  });
}

/** A code minted through the same service the consent page uses. */
export async function mintCode(
  t: TestApp,
  client: TestClient,
  user: TestUser,
  options: { scopes?: string[]; codeChallenge?: string; nonce?: string; redirectUri?: string } = {},
): Promise<string> {
  const deps = depsOf(t);
  const registered = await findClientByClientId(t.database.db, client.clientId);
  if (!registered) throw new Error(`no client ${client.clientId}`);
  const scopes = normalizeScopes(options.scopes ?? ['openid', 'profile', 'email', 'verified']);
  const request: AuthorizationRequest = {
    client: registered,
    redirectUri: options.redirectUri ?? client.redirectUri,
    scopes,
    state: 'state-1',
    nonce: options.nonce ?? null,
    codeChallenge: options.codeChallenge ?? null,
    prompt: new Set(),
    maxAge: null,
    requireMfa: false,
  };
  // As the consent page does: the user allows the scopes, which are remembered with the code.
  const location = await issueCode(deps.db, deps.ctx, request, {
    userId: user.id,
    authTime: t.clock.now(),
    amr: ['pwd'],
    scopes,
    remember: { withheld: [] },
  });
  const code = new URL(location).searchParams.get('code');
  if (!code) throw new Error(`no code in ${location}`);
  return code;
}
