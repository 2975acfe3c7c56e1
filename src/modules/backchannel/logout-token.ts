import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import type { Signer } from '../oidc/keys.service.js';

/** The event a logout token carries (Back-Channel Logout 1.0 §2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** A logout token is good for 2 minutes: it is delivered at once, and a retry signs a new one. */
export const LOGOUT_TOKEN_TTL_SECONDS = 120;

export interface LogoutTokenClaims {
  /** PUBLIC_URL: the issuer of the id_tokens. */
  issuer: string;
  /** The client's `client_id`: the audience. */
  clientId: string;
  /** The user id, as `sub` of the id_tokens. */
  userId: number;
  /** The ended browser session's public id, as `sid` of the id_tokens. */
  sid: string;
  now: Date;
}

/**
 * Signs a logout token (Back-Channel Logout 1.0 §2.4): header `typ: logout+jwt` (§2.4, RFC 8725
 * §3.11: no other JWT of ours can pass for one) with the signer's `alg` and `kid`; claims `iss`,
 * `aud`, `iat`, `exp`, a new `jti`, `sub`, `sid` and the `events` member; never a `nonce` (§2.4
 * forbids it, so a logout token cannot pass for an id_token). Pass the signer of the client's
 * id_token algorithm: the spec signs logout tokens with the id_tokens' keys.
 */
export async function signLogoutToken(signer: Signer, claims: LogoutTokenClaims): Promise<string> {
  const iat = Math.floor(claims.now.getTime() / 1000);
  return new SignJWT({
    sub: String(claims.userId),
    sid: claims.sid,
    events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
  })
    .setProtectedHeader({ alg: signer.alg, kid: signer.kid, typ: 'logout+jwt' })
    .setIssuer(claims.issuer)
    .setAudience(claims.clientId)
    .setIssuedAt(iat)
    .setExpirationTime(iat + LOGOUT_TOKEN_TTL_SECONDS)
    .setJti(randomBytes(16).toString('base64url'))
    .sign(signer.key);
}
