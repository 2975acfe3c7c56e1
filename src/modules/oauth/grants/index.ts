import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { InvalidRequest, UnsupportedGrantType } from '../../../lib/errors.js';
import type { Client } from '../../clients/client.js';
import type { TokenResponse } from '../tokens.service.js';
import { authorizationCode } from './authorization-code.js';
import type { Grant, TokenParameters } from './grant.js';
import { refreshToken } from './refresh-token.js';

export type { Grant, TokenParameters } from './grant.js';

/** The grants this endpoint supports, by `grant_type`. */
export const GRANTS: ReadonlyMap<string, Grant> = new Map(
  [authorizationCode, refreshToken].map((grant) => [grant.grantType, grant]),
);

/** The token endpoint (RFC 6749 §3.2): dispatches on `grant_type` after checking its parameters. */
export async function handleTokenRequest(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  params: TokenParameters,
): Promise<TokenResponse> {
  const grantType = params.grant_type;
  if (!grantType) throw new InvalidRequest('grant_type is required.');
  const grant = GRANTS.get(grantType);
  if (!grant)
    throw new UnsupportedGrantType(
      'This grant_type is not supported; use authorization_code or refresh_token.',
    );
  for (const name of grant.parameters.required) {
    if (!params[name]) throw new InvalidRequest(`${name} is required.`);
  }
  return grant.handle(db, ctx, client, params);
}
