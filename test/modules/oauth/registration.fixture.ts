import type { LightMyRequestResponse } from 'fastify';
import { createRegistrationToken } from '../../../src/modules/developer-apps/registration-tokens.service.js';
import type { TestApp } from '../../helpers/app.js';
import { depsOf } from '../../helpers/factories.js';

/* RFC 7591/7592 requests as a client sends them, and the initial access tokens they need. */

export const METADATA = {
  client_name: 'Example site',
  client_uri: 'https://site.example',
  redirect_uris: ['https://site.example/callback'],
};

/** An initial access token: an account's (the portal's) or an operator's, owned or not. */
export async function initialToken(
  t: TestApp,
  options: { ownerUserId?: number | null; uses?: number; expiresInSeconds?: number; createdBy?: string } = {},
): Promise<string> {
  const ownerUserId = options.ownerUserId ?? null;
  const { token } = await createRegistrationToken(t.database.db, depsOf(t).ctx, {
    ownerUserId,
    createdBy: options.createdBy ?? (ownerUserId === null ? 'cli' : `user:${ownerUserId}`),
    ...(options.uses === undefined ? {} : { uses: options.uses }),
    ...(options.expiresInSeconds === undefined ? {} : { expiresInSeconds: options.expiresInSeconds }),
  });
  return token;
}

export function register(
  t: TestApp,
  token: string | null,
  body: unknown = METADATA,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'POST',
    url: '/api/v1/oauth/register',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    payload: JSON.stringify(body),
  });
}

/** What a registration answers (RFC 7591 §3.2.1). */
export interface Registered {
  client_id: string;
  client_secret?: string;
  registration_access_token: string;
  registration_client_uri: string;
  [field: string]: unknown;
}

export function manage(
  t: TestApp,
  method: 'GET' | 'PUT' | 'DELETE',
  clientId: string,
  token: string | null,
  body?: unknown,
): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method,
    url: `/api/v1/oauth/register/${encodeURIComponent(clientId)}`,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
  });
}
