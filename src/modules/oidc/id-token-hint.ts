import { compactVerify, createLocalJWKSet, type JSONWebKeySet } from 'jose';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { readJwks } from './keys.service.js';

/** What a verified id_token_hint tells: whose session it was issued in, and for which clients. */
export interface IdTokenHint {
  /** The user (`sub`). */
  sub: string;
  /** The clients it was issued to (`aud`, always as a list). */
  aud: string[];
  /** When the user signed in for it (`auth_time`, seconds), or null when it has none. */
  authTime: number | null;
  /** The browser session it was issued in (`sid`, Back-Channel Logout 1.0 §2.4), or null. */
  sid: string | null;
}

/** Longer than any id_token we issue (the profile claims included), far shorter than a page's limit. */
export const ID_TOKEN_HINT_MAX_LENGTH = 8192;

const isStringList = (value: unknown): value is string[] =>
  Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'string');

/**
 * Verifies an `id_token_hint` (OIDC RP-Initiated Logout 1.0 §2): a JWS signed by one of the keys the
 * JWKS publishes (retired keys no longer verify), issued by this provider (`iss` = PUBLIC_URL).
 * Its expiry is not checked: §2 says the OP SHOULD accept a hint whose `exp` has passed, since a
 * site often asks for logout long after the hour an id_token lives. A logout token (typed
 * `logout+jwt`, with `events`, OIDC Back-Channel Logout 1.0 §2.4) is signed by the same keys and is
 * never taken for an id_token. Returns null for anything else.
 */
export async function verifyIdTokenHint(
  db: Kysely<Database>,
  ctx: Context,
  token: string,
): Promise<IdTokenHint | null> {
  if (token.length > ID_TOKEN_HINT_MAX_LENGTH) return null;
  const jwks = (await readJwks(db, ctx)) as JSONWebKeySet;
  const algorithms = [...new Set(jwks.keys.map((key) => key.alg).filter((alg) => alg !== undefined))];
  let payload: Uint8Array;
  try {
    const verified = await compactVerify(token, createLocalJWKSet(jwks), { algorithms });
    const typ = verified.protectedHeader.typ;
    if (typ !== undefined && typ.toUpperCase() !== 'JWT') return null;
    payload = verified.payload;
  } catch {
    return null;
  }
  let claims: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(payload));
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
    claims = parsed as Record<string, unknown>;
  } catch {
    return null;
  }
  if (claims.iss !== ctx.config.PUBLIC_URL || claims.events !== undefined) return null;
  if (typeof claims.sub !== 'string' || claims.sub === '') return null;
  const aud = typeof claims.aud === 'string' ? [claims.aud] : claims.aud;
  if (!isStringList(aud)) return null;
  const authTime = Number.isSafeInteger(claims.auth_time) ? (claims.auth_time as number) : null;
  const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : null;
  return { sub: claims.sub, aud, authTime, sid };
}
