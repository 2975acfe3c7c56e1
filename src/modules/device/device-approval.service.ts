import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { hashSecret } from '../../lib/secrets.js';
import { normalizeUserCode } from '../../lib/user-code.js';
import { countSignInAttempt } from '../accounts/accounts.repository.js';
import type { TrustedSource } from '../accounts/sign-in-result.js';
import { countEventsSince, recordAudit } from '../audit/audit.repository.js';
import type { Client } from '../clients/client.js';
import { findClientById } from '../clients/clients.repository.js';
import { findConsent, saveConsent } from '../oauth/consents.repository.js';
import {
  decideDeviceCode,
  findPendingDeviceCode,
  type PendingDeviceCode,
} from './device-codes.repository.js';

/**
 * RFC 8628 §5.1: guessing a user code is limited per address (the page's sign-in limit), per
 * account (a wrong code counts as a wrong password, in the same budget) and for the whole service:
 * past this many wrong codes a minute, no code is looked up until the minute has passed.
 */
export const DEVICE_CODE_FAILURES_PER_MINUTE = 300;

/** A request found by its user code, with its client, for the confirmation page. */
export interface DeviceRequest {
  code: PendingDeviceCode;
  client: Client;
  /** Scopes the user allowed this client before (remembered consent). */
  allowedBefore: string[];
}

export type UserCodeCheck =
  | { ok: true; request: DeviceRequest }
  | { ok: false; problem: 'wrong' | 'locked' | 'busy' };

/**
 * Looks up the code a signed-in person typed. A wrong one is counted against the account's sign-in
 * budget (past SIGN_IN_MAX_ATTEMPTS in the window nothing is looked up), and audited, which the
 * service-wide limit counts.
 */
export async function checkUserCode(
  db: Kysely<Database>,
  ctx: Context,
  input: { userId: number; typed: string; trustedSource?: TrustedSource; ip: string | null },
): Promise<UserCodeCheck> {
  const now = ctx.clock.now();
  if (
    (await countEventsSince(db, 'device_code_failed', new Date(now.getTime() - 60_000))) >=
    DEVICE_CODE_FAILURES_PER_MINUTE
  )
    return { ok: false, problem: 'busy' };
  // The account's own run of wrong codes in the sign-in window: past the budget nothing is looked up.
  const windowStart = new Date(now.getTime() - ctx.config.SIGN_IN_WINDOW_SECONDS * 1000);
  const failures = await countEventsSince(db, 'device_code_failed', windowStart, `user:${input.userId}`);
  if (failures >= ctx.config.SIGN_IN_MAX_ATTEMPTS) return { ok: false, problem: 'locked' };
  const normalised = normalizeUserCode(input.typed);
  const code = normalised ? await findPendingDeviceCode(db, hashSecret(normalised), now) : undefined;
  const client = code && (await findClientById(db, code.clientPk));
  if (code && client && client.disabledAt === null && client.deviceGrant) {
    const consent = await findConsent(db, input.userId, client.id);
    return { ok: true, request: { code, client, allowedBefore: consent?.scopes ?? [] } };
  }
  const source = (await input.trustedSource?.(input.userId)) || '';
  const attempt = await countSignInAttempt(
    db,
    { userId: input.userId, source },
    now,
    ctx.config.SIGN_IN_WINDOW_SECONDS * 1000,
  );
  await recordAudit(db, {
    at: now,
    actor: `user:${input.userId}`,
    action: 'device_code_failed',
    subject: `user:${input.userId}`,
    ip: input.ip,
  });
  return { ok: false, problem: attempt > ctx.config.SIGN_IN_MAX_ATTEMPTS ? 'locked' : 'wrong' };
}

/**
 * The person's decision on a device's request, found by checkUserCode (the decision's form carries
 * the code again, so it passes the same limits): allowed (the consent remembered, with the scopes
 * allowed before), or denied; recorded with how they had signed in, for the id_token. False when it
 * was decided already or expired meanwhile.
 */
export async function decideDeviceRequest(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    userId: number;
    request: DeviceRequest;
    allow: boolean;
    session: { authTime: Date; amr: readonly string[]; sid: string | null };
    ip: string | null;
  },
): Promise<{ ok: true; client: Client } | { ok: false }> {
  const now = ctx.clock.now();
  const { code, client } = input.request;
  return inTransaction(db, async (trx) => {
    if (input.allow) {
      const before = (await findConsent(trx, input.userId, client.id))?.scopes ?? [];
      await saveConsent(trx, {
        userId: input.userId,
        clientPk: client.id,
        scopes: [...new Set([...before, ...code.scopes])],
        at: now,
      });
    }
    const decided = await decideDeviceCode(trx, {
      id: code.id,
      status: input.allow ? 'allowed' : 'denied',
      userId: input.userId,
      authTime: input.session.authTime,
      amr: input.session.amr,
      sid: input.session.sid,
      at: now,
    });
    if (!decided) return { ok: false };
    await recordAudit(trx, {
      at: now,
      actor: `user:${input.userId}`,
      action: input.allow ? 'device_code_allowed' : 'device_code_denied',
      subject: `client:${client.clientId}`,
      ip: input.ip,
      details: { scopes: code.scopes, device: code.deviceLabel },
    });
    return { ok: true, client };
  });
}
