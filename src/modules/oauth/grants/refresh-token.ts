import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { InvalidGrant, InvalidScope } from '../../../lib/errors.js';
import { hashSecret } from '../../../lib/secrets.js';
import type { Client } from '../../clients/client.js';
import { findRefreshToken, revokeGrants } from '../grants.repository.js';
import { rotateRefreshToken } from '../refresh-rotation.repository.js';
import { normalizeScopes } from '../scopes.js';
import { newTokenPair, tokenResponse } from '../tokens.service.js';
import type { Grant } from './grant.js';

/** Why a refresh token was refused, for the error description (nothing was written). */
async function explainRefreshFailure(
  db: Kysely<Database>,
  client: Client,
  input: { tokenHash: string; asked: string[] | null; jkt: string | null; now: Date },
): Promise<never> {
  const token = await findRefreshToken(db, input.tokenHash);
  if (!token || token.revokedAt !== null) throw new InvalidGrant('The refresh token is invalid or revoked.');
  if (token.clientPk !== client.id) throw new InvalidGrant('The refresh token was issued to another client.');
  // RFC 9449 §5: a bound refresh token is used only with a proof of its key. Checked before the
  // reuse detection, so that someone without the key cannot revoke the grant with a stolen one.
  if (token.jkt !== null && token.jkt !== input.jkt) {
    throw new InvalidGrant(
      input.jkt === null
        ? 'This refresh token is bound to a DPoP key: send a DPoP proof signed by it.'
        : 'The DPoP proof is signed by another key than the one this refresh token is bound to.',
    );
  }
  if (token.ofDevice) {
    throw new InvalidGrant(
      'This refresh token is of a device of the mobile app: refresh it at /api/v1/mobile/refresh.',
    );
  }
  if (token.rotatedAt !== null) {
    // OAuth 2.0 Security BCP (RFC 9700 §4.14.2): reuse of a rotated refresh token means it leaked.
    await revokeGrants(db, { id: token.grantId }, input.now);
    throw new InvalidGrant('The refresh token was already used; the grant is revoked.');
  }
  if (token.grantRevokedAt !== null) throw new InvalidGrant('The refresh token has been revoked.');
  if (token.expiresAt.getTime() <= input.now.getTime())
    throw new InvalidGrant('The refresh token has expired.');
  if (token.userDisabledAt !== null) throw new InvalidGrant('The user of this refresh token is disabled.');
  const extra = (input.asked ?? []).filter((scope) => !token.scopes.includes(scope));
  if (extra.length > 0)
    throw new InvalidScope('The scope asked for exceeds the scope the refresh token was granted.');
  throw new InvalidGrant('The refresh token is invalid or revoked.');
}

/** RFC 6749 §6, with rotation: a refresh token is exchanged once; presenting it again revokes the grant. */
export const refreshToken: Grant = {
  grantType: 'refresh_token',
  parameters: { required: ['refresh_token'], optional: ['scope'] },
  async handle(db, ctx, client, params, jkt) {
    const tokenHash = hashSecret(params.refresh_token as string);
    const now = ctx.clock.now();

    // RFC 6749 §6: a narrower scope may be asked for, never a wider one (checked against the grant
    // in the statement; an unknown or empty scope cannot be within it).
    let asked: string[] | null = null;
    if (params.scope !== undefined) {
      const unique = [...new Set(params.scope.split(' ').filter(Boolean))];
      if (unique.length === 0)
        throw new InvalidScope('scope is empty; leave it out to keep the scope of the grant.');
      // Known scopes in their canonical order; with an unknown one, as sent (it fails the check).
      const known = normalizeScopes(unique);
      asked = known.length === unique.length ? known : unique;
    }
    const tokens = newTokenPair(ctx, now);
    const issued = await rotateRefreshToken(db, {
      tokenHash,
      clientPk: client.id,
      scopes: asked,
      jkt,
      now,
      tokens,
    });
    if (!issued) return explainRefreshFailure(db, client, { tokenHash, asked, jkt, now });
    return tokenResponse(tokens, issued.scopes, undefined, jkt);
  },
};
