import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { NotFound } from '../../lib/errors.js';
import { generateSecret, hashSecret, PREFIX } from '../../lib/secrets.js';
import { type AuditEvent, recordAudit } from '../audit/audit.repository.js';
import { fieldProblem } from '../clients/client-input.js';
import { lockOwner, RegistrationClosed, userActor } from './app-changes.js';
import {
  endRegistrationToken,
  insertRegistrationToken,
  listActiveRegistrationTokens,
  type RegistrationTokenRow,
  takeRegistrationTokenUse,
} from './registration-tokens.repository.js';

const DAY_SECONDS = 86_400;
/** An initial access token registers for 7 days unless told otherwise, and for at most 90. */
export const REGISTRATION_TOKEN_DEFAULT_SECONDS = 7 * DAY_SECONDS;
export const REGISTRATION_TOKEN_MAX_SECONDS = 90 * DAY_SECONDS;
/** At most this many registrations with one token. */
export const REGISTRATION_TOKEN_MAX_USES = 1000;

/** A token as its owner sees it in a list: never the token. */
export interface RegistrationTokenView {
  id: number;
  uses_left: number;
  created_at: string;
  expires_at: string;
}

function present(row: RegistrationTokenRow): RegistrationTokenView {
  return {
    id: row.id,
    uses_left: row.usesLeft,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt.toISOString(),
  };
}

/**
 * Makes an RFC 7591 §3 initial access token: `uses` registrations (1 by default) until
 * `expiresInSeconds` from now (7 days by default, at most 90). Stored as its hash; returned this
 * once. A portal owner's (`ownerUserId`) registers applications owned by them and counts among
 * their changes per hour; an operator's (`ownerUserId` null or given by `idp registration-tokens
 * create --owner`, `createdBy: 'cli'`) is not limited.
 * @throws ClientInputError (`uses`, `expiresInSeconds`); RegistrationClosed for an account's token
 * while registration is closed; RateLimited
 */
export async function createRegistrationToken(
  db: Kysely<Database>,
  ctx: Context,
  input: {
    ownerUserId: number | null;
    createdBy: string;
    uses?: number;
    expiresInSeconds?: number;
    ip?: string | null;
  },
): Promise<{ token: string; id: number; expires_at: string; uses: number }> {
  const uses = input.uses ?? 1;
  if (!Number.isInteger(uses) || uses < 1 || uses > REGISTRATION_TOKEN_MAX_USES)
    throw fieldProblem('uses', `uses must be a whole number from 1 to ${REGISTRATION_TOKEN_MAX_USES}`);
  const seconds = input.expiresInSeconds ?? REGISTRATION_TOKEN_DEFAULT_SECONDS;
  if (!Number.isInteger(seconds) || seconds < 60 || seconds > REGISTRATION_TOKEN_MAX_SECONDS)
    throw fieldProblem(
      'expiresInSeconds',
      `the token must expire in 60 to ${REGISTRATION_TOKEN_MAX_SECONDS} seconds (90 days)`,
    );
  const byUser = input.createdBy !== 'cli';
  if (byUser && ctx.config.CLIENT_REGISTRATION === 'closed') throw new RegistrationClosed();
  const token = generateSecret('registrationToken');
  return inTransaction(db, async (trx) => {
    if (byUser && input.ownerUserId !== null) await lockOwner(trx, ctx, input.ownerUserId);
    const at = ctx.clock.now();
    const row = await insertRegistrationToken(trx, {
      tokenHash: hashSecret(token),
      ownerUserId: input.ownerUserId,
      createdBy: input.createdBy,
      uses,
      at,
      expiresAt: new Date(at.getTime() + seconds * 1000),
    });
    // The CLI records its commands' events itself (actor `operator`).
    if (byUser)
      await recordAudit(trx, {
        at,
        actor: input.createdBy,
        action: 'registration_token_created',
        subject: `registration_token:${row.id}`,
        ip: input.ip ?? null,
        details: { uses, expires_at: row.expiresAt.toISOString() },
      } satisfies AuditEvent);
    return { token, id: row.id, expires_at: row.expiresAt.toISOString(), uses };
  });
}

/**
 * Takes one use of an initial access token (RFC 7591 §3), atomically: run it in the registration's
 * transaction so that a refused registration gives the use back. Null for anything but an unexpired
 * token with uses left; `ownerUserId` null for an operator's token without an owner.
 */
export async function consumeRegistrationToken(
  trx: Kysely<Database>,
  token: string,
  now: Date,
): Promise<{ ownerUserId: number | null; tokenId: number } | null> {
  if (!token.startsWith(PREFIX.registrationToken) || token.length > 100) return null;
  const taken = await takeRegistrationTokenUse(trx, hashSecret(token), now);
  return taken ? { ownerUserId: taken.ownerUserId, tokenId: taken.id } : null;
}

/** The account's tokens that still register, newest first. */
export async function listRegistrationTokens(
  db: Kysely<Database>,
  ctx: Context,
  ownerUserId: number,
): Promise<RegistrationTokenView[]> {
  return (await listActiveRegistrationTokens(db, ownerUserId, ctx.clock.now())).map(present);
}

/**
 * Ends one of the account's tokens at once. Audited.
 * @throws NotFound when the account has no such active token; RateLimited
 */
export async function revokeRegistrationToken(
  db: Kysely<Database>,
  ctx: Context,
  ownerUserId: number,
  tokenId: number,
  options: { ip?: string | null } = {},
): Promise<void> {
  await inTransaction(db, async (trx) => {
    await lockOwner(trx, ctx, ownerUserId);
    const at = ctx.clock.now();
    if (!Number.isSafeInteger(tokenId) || !(await endRegistrationToken(trx, ownerUserId, tokenId, at)))
      throw new NotFound('No active registration token of yours has this id.');
    await recordAudit(trx, {
      at,
      actor: userActor(ownerUserId),
      action: 'registration_token_revoked',
      subject: `registration_token:${tokenId}`,
      ip: options.ip ?? null,
    });
  });
}
