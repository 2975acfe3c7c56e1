import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { AccessDenied, NotFound, RateLimited } from '../../lib/errors.js';
import { lockUserById } from '../accounts/accounts.repository.js';
import { type AuditAction, countRecentChanges } from '../audit/audit.repository.js';
import type { ClientAudit } from '../clients/client-input.js';
import { findClientOwnedBy } from './owners.repository.js';

const HOUR_MS = 3600 * 1000;

/** The audit actor of a change made by an account in the portal or through RFC 7591/7592. */
export function userActor(userId: number): string {
  return `user:${userId}`;
}

/** CLIENT_REGISTRATION=closed: only operators register applications. */
export class RegistrationClosed extends AccessDenied {
  constructor() {
    super('Registration of applications is closed on this service: its operators register them.');
  }
}

/** DEVELOPER_APPS_PER_USER reached. */
export class AppLimitReached extends AccessDenied {
  constructor(limit: number) {
    super(`An account may own at most ${limit} applications: delete one before registering another.`);
  }
}

/** An action only the application's owner may take (deleting it), tried by a co-owner. */
export class OwnerOnly extends AccessDenied {}

/** The answer for an application the account neither owns nor co-owns: never saying that it exists. */
export function unknownApp(): InstanceType<typeof NotFound> {
  return new NotFound('No application of yours has this client_id.');
}

/** Actions that count as changes without an application as their subject. */
const OTHER_CHANGES: readonly AuditAction[] = ['registration_token_created', 'registration_token_revoked'];

/**
 * DEVELOPER_CHANGES_PER_HOUR: counts the account's changes to applications in the last hour from the
 * audit log (each change records one event in its own transaction), the portal's and RFC 7591/7592's
 * together. Run it in the change's transaction after locking the account, so that concurrent
 * changes are counted one after another.
 * @throws RateLimited (429) with Retry-After when the account made as many changes in the last hour.
 */
export async function assertChangeAllowed(db: Kysely<Database>, ctx: Context, userId: number): Promise<void> {
  const now = ctx.clock.now().getTime();
  const limit = ctx.config.DEVELOPER_CHANGES_PER_HOUR;
  const recent = await countRecentChanges(db, {
    actor: userActor(userId),
    since: new Date(now - HOUR_MS),
    actions: OTHER_CHANGES,
  });
  if (recent.count < limit) return;
  const retryAfter = recent.oldest
    ? Math.max(1, Math.ceil((recent.oldest.getTime() + HOUR_MS - now) / 1000))
    : 3600;
  throw new RateLimited(
    `At most ${limit} changes to applications per hour: retry in ${Math.ceil(retryAfter / 60)} minutes.`,
    { headers: { 'retry-after': String(retryAfter) } },
  );
}

/** The audit events of an account's change: actor `user:<id>`, what changed as `before`/`after`. */
export function ownerAudit(ctx: Context, userId: number | null, ip?: string | null): ClientAudit {
  return (change) => ({
    at: ctx.clock.now(),
    actor: userId === null ? 'registration' : userActor(userId),
    action: change.action,
    subject: change.subject,
    ip: ip ?? null,
    details: {
      ...(change.before ? { before: change.before } : {}),
      ...(change.after ? { after: change.after } : {}),
      ...change.details,
    },
  });
}

/**
 * Locks the acting account (its changes are then counted one after another) and checks its hourly
 * limit; a disabled account changes nothing.
 */
export async function lockOwner(trx: Transaction<Database>, ctx: Context, userId: number) {
  const user = await lockUserById(trx, userId);
  if (!user || user.disabledAt !== null) throw unknownApp();
  await assertChangeAllowed(trx, ctx, userId);
  return user;
}

/**
 * `lockOwner`, then the application as one the account owns or co-owns: an owner's change starts
 * here. Another account's application is unknown (404), never forbidden.
 */
export async function lockOwnedApp(
  trx: Transaction<Database>,
  ctx: Context,
  userId: number,
  clientId: string,
) {
  const owner = await lockOwner(trx, ctx, userId);
  const found = await findClientOwnedBy(trx, userId, clientId);
  if (!found) throw unknownApp();
  return { owner, found };
}
