import type { Kysely } from 'kysely';
import type { Context } from '../../../context.js';
import type { Database } from '../../../db/schema.js';
import { generateSecret, hashSecret } from '../../../lib/secrets.js';
import { insertAuthorizationCode } from '../authorization-codes.repository.js';
import { findConsent, saveConsent } from '../consents.repository.js';
import { normalizeScopes, type Scope } from '../scopes.js';
import { redirectBack } from './error-redirect.js';
import type { AuthorizationRequest } from './request.js';

/** docs/api.md: a code is valid for about 10 minutes. */
export const AUTHORIZATION_CODE_TTL_MS = 10 * 60 * 1000;

/** Whether the user already allowed this client every requested scope. */
export async function consentCovers(
  db: Kysely<Database>,
  userId: number,
  request: AuthorizationRequest,
): Promise<boolean> {
  const consent = await findConsent(db, userId, request.client.id);
  return consent !== undefined && request.scopes.every((scope) => consent.scopes.includes(scope));
}

/**
 * Issues a one-time code for the granted scopes and returns the redirect carrying it
 * (RFC 6749 §4.1.2). Remembers the consent when `remember` is given (the user just clicked Allow).
 */
export async function issueCode(
  db: Kysely<Database>,
  ctx: Context,
  request: AuthorizationRequest,
  grant: {
    userId: number;
    authTime: Date;
    amr: readonly string[];
    /** The browser session approving: its `sid` goes into the id_token (Back-Channel Logout 1.0 §2.4). */
    sid?: string | null;
    scopes: Scope[];
    remember?: { withheld: Scope[] };
  },
): Promise<string> {
  const code = generateSecret('authorizationCode');
  const now = ctx.clock.now();
  await db.transaction().execute(async (trx) => {
    if (grant.remember) {
      const previous = await findConsent(trx, grant.userId, request.client.id);
      const remembered = normalizeScopes([...(previous?.scopes ?? []), ...grant.scopes]).filter(
        (scope) => !grant.remember?.withheld.includes(scope),
      );
      await saveConsent(trx, {
        userId: grant.userId,
        clientPk: request.client.id,
        scopes: remembered,
        at: now,
      });
    }
    await insertAuthorizationCode(trx, {
      codeHash: hashSecret(code),
      clientPk: request.client.id,
      userId: grant.userId,
      redirectUri: request.redirectUri,
      scopes: grant.scopes,
      codeChallenge: request.codeChallenge,
      nonce: request.nonce,
      authTime: grant.authTime,
      amr: [...grant.amr],
      sid: grant.sid ?? null,
      at: now,
      expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_MS),
    });
  });
  return redirectBack(request.redirectUri, ctx.config.PUBLIC_URL, { code, state: request.state });
}
