import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidGrant } from '../../lib/errors.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { findUserById } from '../accounts/accounts.repository.js';
import type { Client } from '../clients/client.js';
import type { MailLocale } from '../mail/mail.service.js';
import {
  consumeMobilePendingSignIn,
  findLiveMobilePendingSignIn,
  insertMobilePendingSignIn,
} from '../mfa/pending-sign-ins.repository.js';
import { codeMethodsOf, verifySecondFactor } from '../mfa/second-factor.service.js';
import { knownDevice, startDeviceSession } from './device-session.service.js';
import {
  MFA_TOKEN_TTL_SECONDS,
  type MfaRequiredResponse,
  type SecondFactorBody,
  type SessionResponse,
} from './mobile.schemas.js';
import { signedByKey, useChallenge } from './mobile.service.js';

/** One answer for a token or signature that does not hold, so that none tells which part was wrong. */
export const STEP_REFUSED =
  'The second step was refused: the mfa_token is unknown, used, expired or not this device, or the challenge was not signed with the key of the password step. Sign in with the password again.';

const WRONG_CODE =
  'The code is wrong or was used already. Enter a current code from the authenticator app or an unused recovery code; the mfa_token stays valid until it expires, and each try needs a fresh signed challenge.';

const LOCKED =
  'Too many wrong codes in a row for this account: codes are taken only on a device or browser that signed in to it before, until a code passes there or the password is reset.';

const DESCRIPTION = {
  codes:
    'This account has two-step sign-in: send a code from one of the methods to POST /api/v1/mobile/verify/second-factor with the mfa_token and a freshly signed challenge.',
  none: 'This account signs in with a passkey, which the app cannot use: add an authenticator app on the account security page, or sign in on the web.',
};

/**
 * After a right password for an account with a second factor: the password step, stored for
 * MFA_TOKEN_TTL_SECONDS as the SHA-256 of a fresh `mfa_…` token and bound to the client, the
 * device id and the key that signed it. It grants nothing itself; `methods` are the codes the
 * account can answer with (a passkey ceremony is the web's only).
 */
export async function startMobileSecondStep(
  db: Kysely<Database>,
  ctx: Context,
  input: { clientPk: number; deviceId: string; publicKey: string; userId: number },
): Promise<MfaRequiredResponse> {
  const token = generateSecret('mfaToken');
  const at = ctx.clock.now();
  await insertMobilePendingSignIn(db, {
    ...input,
    tokenHash: hashSecret(token),
    at,
    expiresAt: new Date(at.getTime() + MFA_TOKEN_TTL_SECONDS * 1000),
  });
  const methods = await codeMethodsOf(db, input.userId);
  return {
    ok: false,
    error: 'mfa_required',
    error_description: methods.length > 0 ? DESCRIPTION.codes : DESCRIPTION.none,
    mfa_token: token,
    methods,
    expires_in: MFA_TOKEN_TTL_SECONDS,
  };
}

/**
 * POST /api/v1/mobile/verify/second-factor: the challenge is used up first, the token must be a
 * live one of this client and device, and the challenge signed by the key of its password step.
 * The code is checked as at the web's second step (verifySecondFactor: the account's budgets, the
 * cap on failures in a row, this device's own budget if it signed in before). On a right code the
 * token is consumed (once, in the transaction that registers the device) and the session starts
 * exactly as after verify.
 * @throws InvalidGrant for a bad challenge, token or signature, a wrong code, or a locked second step.
 */
export async function finishMobileSecondStep(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: SecondFactorBody & { label: string; ip: string | null; locale: MailLocale },
): Promise<{ session: SessionResponse; userId: number; method: 'totp' | 'recovery_code' }> {
  const now = await useChallenge(db, ctx, client, input);
  const pending = await findLiveMobilePendingSignIn(db, {
    tokenHash: hashSecret(input.mfa_token),
    clientPk: client.id,
    deviceId: input.device_id,
    now,
  });
  if (!pending || !signedByKey(pending.publicKey, input.signature, input.challenge, input.device_id)) {
    throw new InvalidGrant(STEP_REFUSED);
  }
  const device = { clientPk: client.id, deviceId: input.device_id, publicKey: pending.publicKey };
  const result = await verifySecondFactor(db, ctx, {
    userId: pending.userId,
    code: input.code.trim(),
    trustedSource: knownDevice(db, device),
    ip: input.ip,
    locale: input.locale,
  });
  if (!result.ok) throw new InvalidGrant(result.locked === 'failures' ? LOCKED : WRONG_CODE);
  const session = await startDeviceSession(db, ctx, {
    ...device,
    userId: pending.userId,
    label: input.label,
    now,
    claim: async (trx) => {
      // Single use: of two requests with right codes, one consumes the token; the other is refused.
      if (!(await consumeMobilePendingSignIn(trx, pending.id, now))) throw new InvalidGrant(STEP_REFUSED);
      const user = await findUserById(trx, pending.userId);
      if (!user || user.disabledAt !== null || user.deletedAt !== null) throw new InvalidGrant(STEP_REFUSED);
    },
  });
  return { session, userId: pending.userId, method: result.method };
}
