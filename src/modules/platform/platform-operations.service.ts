import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { maskEmail } from '../../lib/email-mask.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { isSigningAlgorithm, SIGNING_ALGORITHMS_TEXT } from '../../lib/signing-algorithms.js';
import { type AuditEvent, recordAudit } from '../audit/audit.repository.js';
import { usernamesOf } from '../audit/audit-log.repository.js';
import { countLogouts, latestLogouts, retryFailedLogout } from '../backchannel/logout-outbox.repository.js';
import { countMail, latestMail, retryFailedMail } from '../mail/outbox.repository.js';
import { listSigningKeys, rotateSigningKey, type SigningKeyView } from '../oidc/keys.service.js';
import type { Incident, IncidentInput, PlatformStatus } from './platform.schemas.js';
import { getPlatformStatus, openIncident, resolveIncident } from './platform.service.js';

/**
 * The operators' view of the platform (the console's platform page): the status and incidents as
 * /api/v1/platform/status shows them, both outboxes (e-mail and back-channel logouts) with their
 * latest rows, and the signing keys; and the actions on them. Each action and its audit event are
 * one transaction: the event is built by the caller (the console's operatorAuditEvent) from the
 * outcome, so a rolled-back action leaves no event and an event never lacks its action.
 */

/** Builds the audit event of an action from its outcome. */
export type AuditOf<T> = (outcome: T) => AuditEvent;

export type DeliveryState = 'waiting' | 'sent' | 'failed';

/** An outbox message as the page lists it: the recipient masked, never a body, token or link. */
export interface MailRow {
  id: number;
  kind: string;
  recipient: string;
  createdAt: Date;
  attempts: number;
  state: DeliveryState;
  lastError: string | null;
}

/** A back-channel logout as the page lists it: never the session id or a token. */
export interface LogoutRow {
  id: number;
  clientId: string;
  clientName: string;
  username: string | null;
  reason: string;
  createdAt: Date;
  attempts: number;
  state: DeliveryState;
  lastError: string | null;
}

export interface PlatformOverview {
  status: PlatformStatus;
  mail: { pending: number; sent: number; failed: number; latest: MailRow[] };
  logouts: { pending: number; delivered: number; failed: number; latest: LogoutRow[] };
  keys: SigningKeyView[];
}

/** How many rows of each outbox the page shows. */
export const LATEST_ROWS = 20;

const ADDRESS = /[^\s<>"'(),;:]+@[^\s<>"'(),;:]+/g;
const LINK = /\b[a-z][a-z0-9+.-]*:\/\/\S+/gi;

/**
 * An error text as an operator may read it: an SMTP server's refusal may quote the address (masked
 * here) and a link (dropped: a message's links carry tokens); cut to 300 characters.
 */
export function presentableError(text: string | null): string | null {
  if (text === null) return null;
  const cleaned = text.replace(LINK, '[link]').replace(ADDRESS, (address) => maskEmail(address));
  return cleaned.length > 300 ? `${cleaned.slice(0, 300)}…` : cleaned;
}

/** Everything the platform page shows, read in a handful of queries; `failedOnly`: only the failed rows of the outboxes. */
export async function platformOverview(
  db: Kysely<Database>,
  ctx: Context,
  options: { failedOnly?: boolean } = {},
): Promise<PlatformOverview> {
  const rows = { limit: LATEST_ROWS, failedOnly: options.failedOnly ?? false };
  const [status, mailCounts, mail, logoutCounts, logouts, keys] = await Promise.all([
    getPlatformStatus(db, ctx),
    countMail(db),
    latestMail(db, rows),
    countLogouts(db),
    latestLogouts(db, rows),
    listSigningKeys(db),
  ]);
  const usernames = await usernamesOf(
    db,
    logouts.map((row) => row.userId),
  );
  return {
    status,
    mail: {
      ...mailCounts,
      latest: mail.map((row) => ({
        id: row.id,
        kind: row.kind,
        recipient: maskEmail(row.recipient),
        createdAt: row.createdAt,
        attempts: row.attempts,
        state: row.sentAt ? 'sent' : row.failedAt ? 'failed' : 'waiting',
        lastError: presentableError(row.lastError),
      })),
    },
    logouts: {
      ...logoutCounts,
      latest: logouts.map((row) => ({
        id: row.id,
        clientId: row.clientId,
        clientName: row.clientName,
        username: usernames.get(row.userId) ?? null,
        reason: row.reason,
        createdAt: row.createdAt,
        attempts: row.attempts,
        state: row.deliveredAt ? 'sent' : row.failedAt ? 'failed' : 'waiting',
        lastError: presentableError(row.lastError),
      })),
    },
    keys,
  };
}

/** An outbox row's id as a form sends it. */
function rowId(text: string | number, what: string): number {
  const id = typeof text === 'number' ? text : /^\d{1,15}$/.test(text) ? Number(text) : Number.NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw new InvalidRequest(`${what} id must be a number`);
  return id;
}

/** Queues a message given up on again; NotFound when there is no failed message with that id. */
export async function retryMail(
  db: Kysely<Database>,
  ctx: Context,
  id: string | number,
  audit: AuditOf<{ id: number; kind: string; recipient: string }>,
): Promise<void> {
  const mailId = rowId(id, 'message');
  await inTransaction(db, async (trx) => {
    const retried = await retryFailedMail(trx, mailId, ctx.clock.now());
    if (!retried) throw new NotFound(`no failed message with id ${mailId}`);
    await recordAudit(trx, audit({ ...retried, recipient: maskEmail(retried.recipient) }));
  });
}

/** Queues a logout given up on again; NotFound when there is no failed logout with that id. */
export async function retryLogout(
  db: Kysely<Database>,
  ctx: Context,
  id: string | number,
  audit: AuditOf<{ id: number; clientId: string; userId: number }>,
): Promise<void> {
  const logoutId = rowId(id, 'logout');
  await inTransaction(db, async (trx) => {
    const retried = await retryFailedLogout(trx, logoutId, ctx.clock.now());
    if (!retried) throw new NotFound(`no failed logout with id ${logoutId}`);
    await recordAudit(trx, audit(retried));
  });
}

/** Adds a new signing key of `alg` (as `idp keys rotate`), recorded in the same transaction. */
export async function rotateKey(
  db: Kysely<Database>,
  ctx: Context,
  alg: string,
  audit: AuditOf<{ kid: string; algorithm: string }>,
): Promise<{ kid: string; algorithm: string }> {
  if (!isSigningAlgorithm(alg)) throw new InvalidRequest(`the algorithm must be ${SIGNING_ALGORITHMS_TEXT}`);
  const key = await rotateSigningKey(db, ctx, alg, (trx, key) =>
    recordAudit(trx, audit({ kid: key.kid, algorithm: key.algorithm })),
  );
  return { kid: key.kid, algorithm: key.algorithm };
}

/** Opens an incident (as `idp incidents open`), recorded in the same transaction. */
export function openIncidentAudited(
  db: Kysely<Database>,
  ctx: Context,
  input: IncidentInput,
  audit: AuditOf<Incident>,
): Promise<Incident> {
  return inTransaction(db, async (trx) => {
    const incident = await openIncident(trx, ctx, input);
    await recordAudit(trx, audit(incident));
    return incident;
  });
}

/** Resolves an incident (as `idp incidents resolve`), recorded in the same transaction. */
export function resolveIncidentAudited(
  db: Kysely<Database>,
  ctx: Context,
  id: string,
  audit: AuditOf<Incident>,
): Promise<Incident> {
  return inTransaction(db, async (trx) => {
    const incident = await resolveIncident(trx, ctx, id);
    await recordAudit(trx, audit(incident));
    return incident;
  });
}
