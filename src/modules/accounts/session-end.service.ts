import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { queueLogouts } from '../backchannel/logout-outbox.repository.js';
import { deleteUnredeemedCodes } from '../oauth/authorization-codes.repository.js';
import { deleteBrowserSessions, type SessionSelector } from './sessions.repository.js';

/** Why browser sessions end: kept with each queued logout, for the operator. */
export type SessionEndReason =
  | 'sign_out'
  | 'replaced'
  | 'expired'
  | 'password_reset'
  | 'password_changed'
  | 'user_disabled'
  | 'account_deleted';

/** What ending sessions did. */
export interface SessionsEnded {
  sessionsEnded: number;
  /** Logout tokens queued for delivery (Back-Channel Logout 1.0 §2.5). */
  logoutsQueued: number;
}

/**
 * Ends browser sessions, the one way every path does it (sign-out, a sign-in replacing a session,
 * expiry, password reset and change, disabling, deletion): the sessions are deleted, the codes
 * their consent issued and no site redeemed yet are deleted (a site cannot start a session tied to
 * one that ended), and one logout per client with a grant in each session and a back-channel
 * logout URI is queued — all in one transaction, `db`'s when it is one.
 */
export function endBrowserSessions(
  db: Kysely<Database>,
  ctx: Context,
  where: SessionSelector,
  reason: SessionEndReason,
): Promise<SessionsEnded> {
  return inTransaction(db, async (trx) => {
    const ended = await deleteBrowserSessions(trx, where);
    if (ended.length === 0) return { sessionsEnded: 0, logoutsQueued: 0 };
    const sids = ended.map((session) => session.sid);
    // After the codes' deletion, which waits for a redemption in progress: its grant is then seen.
    await deleteUnredeemedCodes(trx, { sids });
    const logoutsQueued = await queueLogouts(trx, { sids, reason, now: ctx.clock.now() });
    return { sessionsEnded: ended.length, logoutsQueued };
  });
}
