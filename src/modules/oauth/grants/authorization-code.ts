import type { Kysely } from 'kysely';
import type { Database } from '../../../db/schema.js';
import { InvalidGrant } from '../../../lib/errors.js';
import { isCodeVerifier, s256 } from '../../../lib/pkce.js';
import { hashSecret } from '../../../lib/secrets.js';
import type { Client } from '../../clients/client.js';
import { signIdToken } from '../../oidc/id-token.js';
import { currentSigner } from '../../oidc/keys.service.js';
import { findAuthorizationCode, redeemAuthorizationCode } from '../authorization-codes.repository.js';
import { revokeGrants } from '../grants.repository.js';
import { newTokenPair, tokenResponse } from '../tokens.service.js';
import type { Grant } from './grant.js';

/** Why a code could not be redeemed, for the error description (nothing was written). */
async function explainRedeemFailure(
  db: Kysely<Database>,
  client: Client,
  input: {
    codeHash: string;
    redirectUri: string;
    challenge: string | null;
    verifierSent: boolean;
    now: Date;
  },
): Promise<never> {
  const code = await findAuthorizationCode(db, input.codeHash);
  if (!code) throw new InvalidGrant('The code is invalid.');
  if (code.consumedAt !== null) {
    // RFC 6749 §4.1.2: a code used twice revokes every token issued from it.
    await revokeGrants(db, { codeHash: input.codeHash }, input.now);
    throw new InvalidGrant('The code was already used; the tokens issued from it are revoked.');
  }
  if (code.clientPk !== client.id) throw new InvalidGrant('The code was issued to another client.');
  if (code.expiresAt.getTime() <= input.now.getTime()) throw new InvalidGrant('The code has expired.');
  if (code.redirectUri !== input.redirectUri) {
    // The owners' log of refused requests shows both (never the code).
    throw new InvalidGrant('redirect_uri differs from the one sent to authorize.', {
      receivedValues: { authorize_redirect_uri: code.redirectUri },
    });
  }
  if (code.codeChallenge !== null && !input.verifierSent) {
    throw new InvalidGrant('code_verifier is required: the code was issued with a code_challenge.');
  }
  if (code.codeChallenge === null && input.verifierSent) {
    // The PKCE downgrade (RFC 9700 §2.1.1): a verifier for a code issued without a challenge.
    throw new InvalidGrant('code_verifier was sent, but the code was issued without a code_challenge.');
  }
  if (code.codeChallenge !== input.challenge) throw new InvalidGrant('code_verifier does not match.');
  if (code.userDisabledAt !== null) throw new InvalidGrant('The user of this code is disabled.');
  const consentStands =
    code.consentCreatedAt !== null &&
    code.consentCreatedAt.getTime() <= code.createdAt.getTime() &&
    code.scopes.every((scope) => code.consentScopes?.includes(scope));
  if (!consentStands) throw new InvalidGrant('The user has revoked the access this code was issued for.');
  throw new InvalidGrant('The code is invalid.');
}

/** RFC 6749 §4.1.3 and RFC 7636 §4.6: exchange a code for tokens, once. */
export const authorizationCode: Grant = {
  grantType: 'authorization_code',
  parameters: { required: ['code', 'redirect_uri'], optional: ['code_verifier'] },
  async handle(db, ctx, client, params, jkt) {
    const code = params.code as string;
    const redirectUri = params.redirect_uri as string;
    const verifier = params.code_verifier;
    if (verifier !== undefined && !isCodeVerifier(verifier)) {
      throw new InvalidGrant(
        'code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~ (RFC 7636 section 4.1).',
      );
    }
    const codeHash = hashSecret(code);
    const challenge = verifier === undefined ? null : s256(verifier);
    const now = ctx.clock.now();
    // Taken first, from the process cache, so signing after the redemption needs no query and
    // cannot fail for want of a key; the key of the client's algorithm (OIDC Registration §2).
    const signer = await currentSigner(db, ctx, client.idTokenAlg);
    const tokens = newTokenPair(ctx, now);
    const redeemed = await redeemAuthorizationCode(db, {
      codeHash,
      clientPk: client.id,
      redirectUri,
      challenge,
      now,
      tokens,
      // RFC 9449 §5: a confidential client's refresh token is not bound (its secret already
      // constrains it); a public client's is bound to the DPoP key, and without one it gets none.
      binding: {
        accessJkt: jkt,
        refreshJkt: client.isPublic ? jkt : null,
        refreshAllowed: !client.isPublic || jkt !== null,
      },
    });
    if (!redeemed) {
      return explainRedeemFailure(db, client, {
        codeHash,
        redirectUri,
        challenge,
        verifierSent: verifier !== undefined,
        now,
      });
    }
    const idToken = redeemed.scopes.includes('openid')
      ? await signIdToken(
          db,
          ctx,
          {
            user: redeemed.user,
            clientId: client.clientId,
            scopes: redeemed.scopes,
            nonce: redeemed.nonce,
            authTime: redeemed.authTime,
            amr: redeemed.amr,
            sid: redeemed.sid,
            accessToken: tokens.accessToken,
            alg: client.idTokenAlg,
          },
          signer,
        )
      : undefined;
    // The refresh token is stored only with offline_access (the statement says whether it was).
    const issued = redeemed.refreshIssued
      ? tokens
      : { accessToken: tokens.accessToken, expiresIn: tokens.expiresIn };
    // A public client without DPoP was granted offline_access but gets no refresh token: the
    // response's scope says so (RFC 6749 §5.1).
    const scopes = redeemed.refreshIssued
      ? redeemed.scopes
      : redeemed.scopes.filter((each) => each !== 'offline_access');
    return tokenResponse(issued, scopes, idToken, jkt);
  },
};
