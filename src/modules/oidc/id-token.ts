import { createHash } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { acrOf } from '../../lib/amr.js';
import type { User } from '../accounts/user.js';
import { presentUserinfo } from '../profiles/profile.presenter.js';
import { SIGNING_ALGORITHM } from './keys.repository.js';
import { currentSigner, type Signer } from './keys.service.js';

/** Lifetime of an id_token: it proves a sign-in to the client now, it is not a session. */
export const ID_TOKEN_TTL_SECONDS = 3600;

export interface IdTokenInput {
  user: User;
  /** The client's public `client_id` (`pk_…`): the audience. */
  clientId: string;
  /** The granted scopes: they gate the profile claims exactly as userinfo does. */
  scopes: readonly string[];
  /** The authorize request's `nonce`, echoed when given (OIDC Core §3.1.2.1). */
  nonce: string | null;
  /** When the user signed in (OIDC Core §2 `auth_time`). */
  authTime: Date;
  /** How the user signed in (RFC 8176), and so the `acr` (CONTRACT.md §8). */
  amr: readonly string[];
  /** The browser session the sign-in belongs to (Back-Channel Logout 1.0 §2.4 `sid`); null for none. */
  sid?: string | null;
  /** The access token issued alongside, for `at_hash` (OIDC Core §3.1.3.6). */
  accessToken?: string;
}

/**
 * `at_hash` (OIDC Core §3.1.3.6): the left half of the SHA-256 of the ASCII access token,
 * base64url without padding (SHA-256 because the id_token is RS256).
 */
export function accessTokenHash(accessToken: string): string {
  return createHash('sha256').update(accessToken, 'ascii').digest().subarray(0, 16).toString('base64url');
}

/**
 * Signs an id_token (RS256, header `kid`; OIDC Core §2): the profile claims come from the same
 * presenter as userinfo, so a withheld e-mail appears nowhere. Inside a transaction pass `trx`
 * (on PGlite the root handle would wait for it forever), or a `signer` taken before it: then
 * signing costs no query.
 */
export async function signIdToken(
  db: Kysely<Database>,
  ctx: Context,
  input: IdTokenInput,
  signer?: Signer,
): Promise<string> {
  signer ??= await currentSigner(db, ctx);
  const iat = Math.floor(ctx.clock.now().getTime() / 1000);
  const profile = presentUserinfo(input.user, input.scopes, ctx.config.PUBLIC_URL);
  // The protocol claims come last: a profile field can never override them.
  const claims: Record<string, unknown> = {
    ...profile,
    iss: ctx.config.PUBLIC_URL,
    sub: String(input.user.id),
    aud: input.clientId,
    iat,
    exp: iat + ID_TOKEN_TTL_SECONDS,
    auth_time: Math.floor(input.authTime.getTime() / 1000),
  };
  claims.amr = input.amr;
  const acr = acrOf(input.amr);
  if (acr !== undefined) claims.acr = acr;
  if (input.nonce !== null) claims.nonce = input.nonce;
  if (input.sid) claims.sid = input.sid;
  if (input.accessToken !== undefined) claims.at_hash = accessTokenHash(input.accessToken);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: SIGNING_ALGORITHM, kid: signer.kid, typ: 'JWT' })
    .sign(signer.key);
}
