import type {
  PublicKeyCredentialRequestOptionsJSON,
  VerifiedAuthenticationResponse,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { recordAudit } from '../audit/audit.repository.js';
import {
  CEREMONY_TTL_MS,
  encodedUserHandleOf,
  relyingParty,
  startCeremony,
  takeCeremony,
} from './ceremony.js';
import { lockPasskeyByCredentialId, recordPasskeyUse } from './passkeys.repository.js';
import type { AuthenticationResponse } from './passkeys.schemas.js';
import { webauthnServer } from './webauthn.js';

/** Why a passkey sign-in was refused. */
export type PasskeySignInProblem = 'expired' | 'unknown_passkey' | 'invalid' | 'account_disabled';

export type PasskeySignInResult =
  | { ok: true; userId: number; passkeyId: number }
  | { ok: false; reason: PasskeySignInProblem };

/**
 * Starts a passkey sign-in: no allowCredentials, so the browser offers the discoverable
 * credentials it holds for this RP ID (no username needed, WebAuthn §5.1.4.1), also in the
 * username field's autofill (conditional mediation); user verification required.
 */
export async function beginPasskeySignIn(
  db: Kysely<Database>,
  ctx: Context,
): Promise<{ ceremonyId: string; options: PublicKeyCredentialRequestOptionsJSON }> {
  const { generateAuthenticationOptions } = await webauthnServer();
  const options = await generateAuthenticationOptions({
    rpID: relyingParty(ctx.config).id,
    userVerification: 'required',
    timeout: CEREMONY_TTL_MS,
  });
  const ceremonyId = await startCeremony(db, ctx, {
    challenge: options.challenge,
    purpose: 'authenticate',
    userId: null,
  });
  return { ceremonyId, options };
}

/**
 * Finishes a passkey sign-in (WebAuthn §7.2, checked by the library): the ceremony is taken once;
 * the credential must be registered, its owner enabled, the user handle (when sent) the owner's;
 * the assertion must carry user verification, so the passkey is two factors in one (docs/pages.md);
 * a signature counter that did not grow, when either is non-zero, is refused as a possible
 * clone (§6.1.1). The new counter, backup state and time of use are kept, and the sign-in audited.
 */
export async function finishPasskeySignIn(
  db: Kysely<Database>,
  ctx: Context,
  input: { ceremonyId: string | undefined; response: AuthenticationResponse; ip: string | null },
): Promise<PasskeySignInResult> {
  return inTransaction(db, async (trx) => {
    const ceremony = await takeCeremony(trx, ctx, { ceremonyId: input.ceremonyId, purpose: 'authenticate' });
    if (!ceremony) return { ok: false, reason: 'expired' };
    const passkey = await lockPasskeyByCredentialId(trx, input.response.id);
    if (!passkey) return { ok: false, reason: 'unknown_passkey' };
    const failed = async (reason: PasskeySignInProblem): Promise<PasskeySignInResult> => {
      await recordAudit(trx, {
        at: ctx.clock.now(),
        actor: 'anonymous',
        action: 'sign_in_failed',
        subject: `user:${passkey.userId}`,
        ip: input.ip,
        details: { via: 'passkey', passkey: passkey.id, reason },
      });
      return { ok: false, reason };
    };
    const handle = input.response.response.userHandle;
    if (handle !== undefined && handle !== encodedUserHandleOf(passkey.userId)) return failed('invalid');
    const rp = relyingParty(ctx.config);
    let verification: VerifiedAuthenticationResponse;
    try {
      const { verifyAuthenticationResponse } = await webauthnServer();
      verification = await verifyAuthenticationResponse({
        response: input.response,
        expectedChallenge: ceremony.matches,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        credential: {
          id: passkey.credentialId,
          publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64url')),
          counter: passkey.counter,
          transports: passkey.transports,
        },
        requireUserVerification: true,
      });
    } catch {
      // Bad signature, no UV flag, a counter gone backwards, malformed data: the library throws.
      return failed('invalid');
    }
    if (!verification.verified || !verification.authenticationInfo.userVerified) return failed('invalid');
    // Only someone holding the passkey learns that its account is disabled, as with a password.
    const user = await findUserById(trx, passkey.userId);
    if (!user || user.disabledAt !== null || user.deletedAt !== null) return failed('account_disabled');
    const now = ctx.clock.now();
    await recordPasskeyUse(trx, passkey.id, {
      counter: verification.authenticationInfo.newCounter,
      backedUp: verification.authenticationInfo.credentialBackedUp,
      at: now,
    });
    await recordAudit(trx, {
      at: now,
      actor: `user:${user.id}`,
      action: 'sign_in',
      subject: `user:${user.id}`,
      ip: input.ip,
      details: { via: 'passkey', passkey: passkey.id },
    });
    return { ok: true, userId: user.id, passkeyId: passkey.id };
  });
}
