import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { findUserById } from '../accounts/accounts.repository.js';
import { listSessionsOfUser } from '../accounts/sessions.repository.js';
import type { User } from '../accounts/user.js';
import { countUnusedRecoveryCodes } from '../mfa/recovery-codes.repository.js';
import { findTotpCredential } from '../mfa/totp.repository.js';
import { listSignedInDevices } from '../mobile/devices.service.js';
import { listAuthorizedApps } from '../oauth/consents.repository.js';
import { listPasskeys } from '../passkeys/passkeys.repository.js';
import type { PremiumStatus } from '../premium/premium.schemas.js';
import { getPremiumStatus } from '../premium/premium.service.js';
import { listRecentEntriesOfUser } from '../wallet/wallet.repository.js';
import { toCoins } from '../wallet/wallet.schemas.js';
import { listRecentAuditEventsAbout } from './user-detail.repository.js';

/** How many ledger entries and audit events the user's page shows (the newest). */
export const RECENT_LEDGER_ENTRIES = 20;
export const RECENT_AUDIT_EVENTS = 30;

/** One audit event as the console lists it: who (an operator by name), what, when, from where. */
export interface AuditLine {
  at: Date;
  action: string;
  /** `self` (the user), `operator` (with `operator`'s name and role), or the stored actor as it is. */
  actorKind: 'self' | 'operator' | 'other';
  actor: string;
  operator: { username: string; role: string } | null;
  ip: string | null;
  /** The event's details without the operator's name and role (shown as the actor), as `key: value`. */
  details: Array<[string, string]>;
}

/**
 * Everything the console shows about one account. Built from each table's owning repository, whose
 * domain objects carry no secret: no password hash, session id, token, TOTP key, recovery code,
 * passkey credential or public key, device key or idempotency key reaches this object.
 */
export interface UserDetail {
  user: User;
  secondFactors: {
    totp: 'off' | 'pending' | 'on';
    totpSince: Date | null;
    recoveryCodesUnused: number;
    passkeys: Array<{ name: string; createdAt: Date; lastUsedAt: Date | null }>;
  };
  sessions: Array<{
    createdAt: Date;
    authTime: Date;
    expiresAt: Date;
    ip: string | null;
    userAgent: string | null;
    live: boolean;
  }>;
  devices: Array<{ label: string; signedInAt: Date; lastUsedAt: Date }>;
  apps: Array<{ clientId: string; name: string; siteUrl: string; scopes: string[]; grantedAt: Date }>;
  premium: PremiumStatus;
  wallet: {
    balance: number;
    entries: Array<{
      id: string;
      type: string;
      amount: number;
      balanceAfter: number;
      description: string;
      createdAt: Date;
    }>;
  };
  audit: AuditLine[];
}

/** A detail value as one line of text: JSON for objects, as it is otherwise. */
function detailText(value: unknown): string {
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}

function auditLine(
  event: Awaited<ReturnType<typeof listRecentAuditEventsAbout>>[number],
  self: string,
): AuditLine {
  const { operator, role, ...rest } = event.details as Record<string, unknown>;
  const isOperator = event.actor.startsWith('operator:') && typeof operator === 'string';
  return {
    at: event.at,
    action: event.action,
    actorKind: event.actor === self ? 'self' : isOperator ? 'operator' : 'other',
    actor: event.actor,
    operator: isOperator ? { username: operator, role: String(role ?? '') } : null,
    ip: event.ip,
    details: Object.entries(isOperator ? rest : (event.details as Record<string, unknown>)).map(
      ([key, value]) => [key, detailText(value)],
    ),
  };
}

/** The account's page in the console, or undefined when there is no user with this id. */
export async function userDetail(
  db: Kysely<Database>,
  ctx: Context,
  userId: number,
): Promise<UserDetail | undefined> {
  const user = await findUserById(db, userId);
  if (!user) return undefined;
  const now = ctx.clock.now();
  const [totp, recoveryCodesUnused, passkeys, sessions, devices, apps, premium, entries, events] =
    await Promise.all([
      findTotpCredential(db, userId),
      countUnusedRecoveryCodes(db, userId),
      listPasskeys(db, userId),
      listSessionsOfUser(db, userId),
      listSignedInDevices(db, userId),
      listAuthorizedApps(db, userId),
      getPremiumStatus(db, ctx, userId),
      listRecentEntriesOfUser(db, userId, RECENT_LEDGER_ENTRIES),
      listRecentAuditEventsAbout(db, user, RECENT_AUDIT_EVENTS),
    ]);
  return {
    user,
    secondFactors: {
      totp: !totp ? 'off' : totp.confirmedAt ? 'on' : 'pending',
      totpSince: totp?.confirmedAt ?? null,
      recoveryCodesUnused,
      passkeys: passkeys.map(({ name, createdAt, lastUsedAt }) => ({ name, createdAt, lastUsedAt })),
    },
    // Newest first: the one the user is asking about is usually the latest.
    sessions: sessions
      .map((session) => ({ ...session, live: session.expiresAt.getTime() > now.getTime() }))
      .reverse(),
    devices,
    apps,
    premium,
    wallet: {
      balance: premium.wallet_balance,
      entries: entries.map((entry) => ({
        id: entry.publicId,
        type: entry.type,
        amount: toCoins(entry.amount),
        balanceAfter: toCoins(entry.balanceAfter),
        description: entry.description,
        createdAt: entry.createdAt,
      })),
    },
    audit: events.map((event) => auditLine(event, `user:${userId}`)),
  };
}
