import type {
  PublicKeyCredentialCreationOptionsJSON,
  VerifiedRegistrationResponse,
} from '@simplewebauthn/server';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { findUserById } from '../accounts/accounts.repository.js';
import type { User } from '../accounts/user.js';
import { recordAudit } from '../audit/audit.repository.js';
import { enqueueMail, type MailLocale } from '../mail/mail.service.js';
import { nameOfAuthenticator } from './authenticator-names.js';
import { CEREMONY_TTL_MS, relyingParty, startCeremony, takeCeremony, userHandleOf } from './ceremony.js';
import { type PasskeyChange, passkeyChangedNotice } from './passkey-mail.js';
import {
  deletePasskey,
  insertPasskey,
  listPasskeys,
  type Passkey,
  renamePasskey,
} from './passkeys.repository.js';
import type { RegistrationResponse } from './passkeys.schemas.js';
import { webauthnServer } from './webauthn.js';

/** Why a registration was refused; the page says it in the reader's language. */
export type RegistrationProblem = 'expired' | 'invalid' | 'duplicate' | 'account_disabled';

export type RegistrationResult = { ok: true; passkey: Passkey } | { ok: false; reason: RegistrationProblem };

function usable(user: User | undefined): user is User {
  return user !== undefined && user.disabledAt === null && user.deletedAt === null;
}

/**
 * Starts registering a passkey for a signed-in user (WebAuthn §7.1): a discoverable credential
 * (residentKey required, so it signs in without a username) with user verification required, and
 * none of the user's passkeys again (excludeCredentials). Returns the options for the browser and
 * the ceremony id it must keep; undefined for a disabled or deleted user.
 */
export async function beginRegistration(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number },
): Promise<{ ceremonyId: string; options: PublicKeyCredentialCreationOptionsJSON } | undefined> {
  const user = await findUserById(db, input.userId);
  if (!usable(user)) return undefined;
  const existing = await listPasskeys(db, user.id);
  const { generateRegistrationOptions } = await webauthnServer();
  const options = await generateRegistrationOptions({
    rpName: ctx.config.BRAND_NAME,
    rpID: relyingParty(ctx.config).id,
    userName: user.username,
    userID: userHandleOf(user.id),
    userDisplayName: user.displayName ?? user.username,
    timeout: CEREMONY_TTL_MS,
    // No attestation: the service trusts no particular maker, and "none" asks for no identifying data.
    attestationType: 'none',
    excludeCredentials: existing.map((passkey) => ({
      id: passkey.credentialId,
      transports: passkey.transports,
    })),
    authenticatorSelection: {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    },
  });
  const ceremonyId = await startCeremony(db, ctx, {
    challenge: options.challenge,
    purpose: 'register',
    userId: user.id,
  });
  return { ceremonyId, options };
}

/**
 * Finishes a registration: the ceremony is taken once, the attestation checked for this RP ID,
 * origin and challenge with user verification (WebAuthn §7.1 steps 7–21, by the library), and the
 * passkey stored with a name (the user's, the authenticator's, or "Passkey N"). Audited, and told
 * to the account's address, in one transaction.
 */
export async function finishRegistration(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    ceremonyId: string | undefined;
    response: RegistrationResponse;
    name?: string;
    locale: MailLocale;
    ip: string | null;
  },
): Promise<RegistrationResult> {
  return inTransaction(db, async (trx) => {
    const ceremony = await takeCeremony(trx, ctx, { ceremonyId: input.ceremonyId, purpose: 'register' });
    if (!ceremony || ceremony.userId !== input.userId) return { ok: false, reason: 'expired' };
    const user = await findUserById(trx, input.userId);
    if (!usable(user)) return { ok: false, reason: 'account_disabled' };
    const rp = relyingParty(ctx.config);
    let verification: VerifiedRegistrationResponse;
    try {
      const { verifyRegistrationResponse } = await webauthnServer();
      verification = await verifyRegistrationResponse({
        response: input.response,
        expectedChallenge: ceremony.matches,
        expectedOrigin: rp.origin,
        expectedRPID: rp.id,
        requireUserVerification: true,
      });
    } catch {
      // The library throws on anything malformed or mismatched: a refusal, never a 500.
      return { ok: false, reason: 'invalid' };
    }
    if (!verification.verified) return { ok: false, reason: 'invalid' };
    const info = verification.registrationInfo;
    const existing = await listPasskeys(trx, user.id);
    const passkey = await insertPasskey(trx, {
      userId: user.id,
      credentialId: info.credential.id,
      publicKey: Buffer.from(info.credential.publicKey).toString('base64url'),
      counter: info.credential.counter,
      transports: input.response.response.transports ?? [],
      aaguid: info.aaguid,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backedUp: info.credentialBackedUp,
      name: input.name || nameOfAuthenticator(info.aaguid) || `Passkey ${existing.length + 1}`,
      createdAt: ctx.clock.now(),
    });
    if (!passkey) return { ok: false, reason: 'duplicate' };
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: `user:${user.id}`,
      action: 'passkey_added',
      subject: `user:${user.id}`,
      ip: input.ip,
      details: { passkey: passkey.id, aaguid: passkey.aaguid, name: passkey.name },
    });
    await notify(trx, ctx, { user, change: 'added', passkey, locale: input.locale });
    return { ok: true, passkey };
  });
}

/** Renames a passkey of the user (audited); undefined when the user has no such passkey. */
export async function renameUserPasskey(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; passkeyId: number; name: string; ip: string | null },
): Promise<Passkey | undefined> {
  return inTransaction(db, async (trx) => {
    const passkey = await renamePasskey(trx, input);
    if (!passkey) return undefined;
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: `user:${input.userId}`,
      action: 'passkey_renamed',
      subject: `user:${input.userId}`,
      ip: input.ip,
      details: { passkey: passkey.id, name: passkey.name },
    });
    return passkey;
  });
}

/** Removes a passkey of the user (audited, told by e-mail); undefined when the user has no such passkey. */
export async function removeUserPasskey(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; passkeyId: number; locale: MailLocale; ip: string | null },
): Promise<Passkey | undefined> {
  return inTransaction(db, async (trx) => {
    const passkey = await deletePasskey(trx, input);
    if (!passkey) return undefined;
    await recordAudit(trx, {
      at: ctx.clock.now(),
      actor: `user:${input.userId}`,
      action: 'passkey_removed',
      subject: `user:${input.userId}`,
      ip: input.ip,
      details: { passkey: passkey.id, name: passkey.name },
    });
    const user = await findUserById(trx, input.userId);
    if (user) await notify(trx, ctx, { user, change: 'removed', passkey, locale: input.locale });
    return passkey;
  });
}

/**
 * Tells the account's confirmed address about a passkey added or removed. An unconfirmed address
 * may be someone else's, so it is not written to; past the hourly limit the notice is dropped
 * rather than the change refused.
 */
async function notify(
  trx: Kysely<Database>,
  ctx: Context,
  input: { user: User; change: PasskeyChange; passkey: Passkey; locale: MailLocale },
): Promise<void> {
  const { user } = input;
  if (!user.email || !user.emailVerified) return;
  const message = passkeyChangedNotice({
    to: user.email,
    username: user.username,
    locale: input.locale,
    change: input.change,
    passkeyName: input.passkey.name,
    accountLink: new URL('/account', ctx.config.PUBLIC_URL).href,
  });
  await enqueueMail(trx, ctx, { ...message, userId: user.id });
}
