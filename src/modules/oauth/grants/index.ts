import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { InvalidGrant, InvalidRequest, UnsupportedGrantType } from '../../../lib/errors.js';
import type { Client } from '../../clients/client.js';
import type { TokenResponse } from '../tokens.service.js';
import { authorizationCode } from './authorization-code.js';
import { deviceCode } from './device-code.js';
import type { Grant, TokenParameters } from './grant.js';
import { refreshToken } from './refresh-token.js';

export type { Grant, TokenParameters } from './grant.js';

/** The grants this endpoint supports, by `grant_type`. */
export const GRANTS: ReadonlyMap<string, Grant> = new Map(
  [authorizationCode, refreshToken, deviceCode].map((grant) => [grant.grantType, grant]),
);

/**
 * The token endpoint (RFC 6749 §3.2): dispatches on `grant_type` after checking its parameters.
 * `jkt`: the thumbprint of the key of the request's DPoP proof, already checked, or null.
 */
export async function handleTokenRequest(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  params: TokenParameters,
  jkt: string | null = null,
): Promise<TokenResponse> {
  const grantType = params.grant_type;
  if (!grantType) throw new InvalidRequest('grant_type is required.');
  const grant = GRANTS.get(grantType);
  if (!grant)
    throw new UnsupportedGrantType(
      `This grant_type is not supported; use one of: ${[...GRANTS.keys()].join(', ')}.`,
    );
  for (const name of grant.parameters.required) {
    if (!params[name]) throw new InvalidRequest(`${name} is required.`);
  }
  // RFC 9449 §5.2 `dpop_bound_access_tokens`; invalid_grant as node-oidc-provider answers it.
  if (client.requireDpop && jkt === null) {
    throw new InvalidGrant('This client must send a DPoP proof with every token request (RFC 9449).');
  }
  return grant.handle(db, ctx, client, params, jkt);
}
