import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { acrOf } from '../../lib/amr.js';
import { signCompactJwt } from '../../lib/compact-jws.js';
import {
  DEFAULT_SIGNING_ALGORITHM,
  leftHalfHash,
  type SigningAlgorithm,
} from '../../lib/signing-algorithms.js';
import type { User } from '../accounts/user.js';
import { presentUserinfo } from '../profiles/profile.presenter.js';
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
  /** How the user signed in (RFC 8176), and so the `acr`. */
  amr: readonly string[];
  /** The browser session the sign-in belongs to (Back-Channel Logout 1.0 §2.4 `sid`); null for none. */
  sid?: string | null;
  /** The access token issued alongside, for `at_hash` (OIDC Core §3.1.3.6). */
  accessToken?: string;
  /** The client's `id_token_signed_response_alg` (OIDC Registration §2); RS256 when absent. */
  alg?: SigningAlgorithm;
}

/**
 * `at_hash` (OIDC Core §3.1.3.6): base64url of the left half of the hash of the ASCII access token,
 * the hash going with the id_token's `alg`: SHA-256 for RS256 and ES256, SHA-512 for EdDSA.
 */
export function accessTokenHash(
  accessToken: string,
  alg: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
): string {
  return leftHalfHash(accessToken, alg);
}

/**
 * Signs an id_token with the current key of `input.alg` (header `alg` and `kid`; OIDC Core §2):
 * the profile claims come from the same presenter as userinfo, so a withheld e-mail appears
 * nowhere. Inside a transaction pass `trx` (on PGlite the root handle would wait for it forever),
 * or a `signer` of that algorithm taken before it: then signing costs no query.
 * @throws Error when `signer` is of another algorithm than `input.alg` (a caller's mistake).
 */
export async function signIdToken(
  db: Kysely<Database>,
  ctx: Context,
  input: IdTokenInput,
  signer?: Signer,
): Promise<string> {
  const alg = input.alg ?? DEFAULT_SIGNING_ALGORITHM;
  signer ??= await currentSigner(db, ctx, alg);
  // A client that registered an algorithm checks the header against it (OIDC Core §3.1.3.7 step 7).
  if (signer.alg !== alg) throw new Error(`an id_token for ${alg} cannot be signed by a ${signer.alg} key`);
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
  if (input.accessToken !== undefined) claims.at_hash = accessTokenHash(input.accessToken, alg);
  return signCompactJwt({ alg, kid: signer.kid, typ: 'JWT' }, claims, signer.keyObject);
}
