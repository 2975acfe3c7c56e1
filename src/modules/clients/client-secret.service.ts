import type { Kysely, Transaction } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import type { Client } from './client.js';
import { type ClientAudit, type ClientChangeRecord, fieldProblem } from './client-input.js';
import {
  type ClientSecretRecord,
  insertClientSecret,
  listValidSecrets,
  setSecretsExpiry,
} from './client-secrets.repository.js';
import { presentClient } from './client-view.js';
import { findClientWithSecretHash, lockClientForSecrets, updateClientColumns } from './clients.repository.js';
import type { ClientView } from './clients.schemas.js';

/** The longest a replaced secret may stay valid beside the new one: 7 days. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/** How many secrets of one client may be valid at once through addClientSecret. */
export const MAX_ACTIVE_CLIENT_SECRETS = 5;

/** A secret as its owners see it: never the secret or its hash, only its last four characters. */
export interface ClientSecretView {
  id: number;
  /** The secret's last four characters ('' for secrets made before they were kept). */
  hint: string;
  created_at: string;
  /** When it stops being accepted (ISO 8601), or null: until it is expired or replaced. */
  expires_at: string | null;
}

/** A rotation's answer: the new secret this once, and until when the old one still works when it does. */
export type RotatedClient = ClientView & {
  client_secret: string;
  /** Present only with an overlap: when the replaced secret stops being accepted (ISO 8601). */
  previous_secret_expires_at?: string;
};

export function presentSecret(record: ClientSecretRecord): ClientSecretView {
  return {
    id: record.id,
    hint: record.hint,
    created_at: record.createdAt.toISOString(),
    expires_at: record.expiresAt?.toISOString() ?? null,
  };
}

/** Why `seconds` cannot be an overlap, or null when it can: a whole number from 0 to 7 days. */
export function secretOverlapProblem(seconds: number): string | null {
  return Number.isSafeInteger(seconds) && seconds >= 0 && seconds <= MAX_SECRET_OVERLAP_SECONDS
    ? null
    : `the overlap must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days)`;
}

/**
 * Makes a new secret for the client and stores only its SHA-256 hash and last four characters;
 * the secret is returned this once. The caller updates the client's row (its `c:` announcement).
 */
export async function storeNewSecret(
  trx: Transaction<Database>,
  clientPk: number,
  at: Date,
  expiresAt: Date | null,
): Promise<{ clientSecret: string; record: ClientSecretRecord }> {
  const clientSecret = generateSecret('clientSecret');
  const record = await insertClientSecret(trx, {
    clientPk,
    secretHash: hashSecret(clientSecret),
    hint: clientSecret.slice(-4),
    at,
    expiresAt,
  });
  return { clientSecret, record };
}

/**
 * The confidential client and its secrets valid at `now`, locked for a change of them.
 * @throws NotFound for an unknown or deleted client; InvalidRequest for a public one.
 */
async function lockSecrets(
  trx: Transaction<Database>,
  clientId: string,
  now: Date,
  refusal: 'no secret to rotate' | 'no secret' = 'no secret',
) {
  const client = clientId.length <= 200 ? await lockClientForSecrets(trx, clientId) : undefined;
  if (!client || client.deletedAt !== null) throw new NotFound(`no client with client_id ${clientId}`);
  if (client.isPublic) {
    throw new InvalidRequest(
      `client ${clientId} is public (token_endpoint_auth_method none): it has ${refusal}`,
    );
  }
  return { client, valid: await listValidSecrets(trx, client.id, now) };
}

/**
 * Ends the change of a client's secrets: the row's new updated_at makes the database announce
 * it (`c:<id>`), so that every instance's client cache reads the client again; the audit event,
 * if asked for, joins the same transaction.
 */
async function finishChange(
  trx: Transaction<Database>,
  client: Client,
  now: Date,
  audit: ClientAudit | undefined,
  event: Omit<ClientChangeRecord, 'subject'>,
): Promise<Client> {
  const row = await updateClientColumns(trx, client.id, { updatedAt: now });
  // Never the secret or its hash: which one (its id and last four characters) and until when.
  if (audit) await recordAudit(trx, audit({ ...event, subject: `client:${client.clientId}` }));
  return row;
}

/** The latest expiry among these secrets, or null when none has one. */
export function latestExpiry(secrets: readonly { expiresAt: Date | null }[]): Date | null {
  let latest: Date | null = null;
  for (const { expiresAt } of secrets)
    if (expiresAt !== null && (latest === null || expiresAt > latest)) latest = expiresAt;
  return latest;
}

/**
 * Replaces a client's secrets with a new one, returned this once and stored only as its SHA-256
 * hash. With `overlapSeconds` > 0 the secrets it replaces (those without an expiry, and the
 * newest) stay accepted until then beside the new one, so that a site can deploy the new secret
 * without failing token calls; an expiry already sooner is kept. With 0 (the default) they stop
 * working at once, and so does a secret still in an earlier rotation's overlap in any case.
 * @throws NotFound for an unknown client_id; InvalidRequest for a public client (it has no
 *   secret) or an overlap outside 0 to 7 days.
 */
export async function rotateClientSecret(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  options: { overlapSeconds?: number; audit?: ClientAudit } = {},
): Promise<RotatedClient> {
  const overlapSeconds = options.overlapSeconds ?? 0;
  const problem = secretOverlapProblem(overlapSeconds);
  if (problem) throw fieldProblem('overlap', problem);
  const now = ctx.clock.now();
  const until = new Date(now.getTime() + overlapSeconds * 1000);
  const { row, clientSecret, keptUntil } = await inTransaction(db, async (trx) => {
    const { client, valid } = await lockSecrets(trx, clientId, now, 'no secret to rotate');
    const replaced = overlapSeconds === 0 ? [] : valid.filter((s, i) => s.expiresAt === null || i === 0);
    const kept = replaced.filter((s) => s.expiresAt !== null && s.expiresAt < until);
    const overlapping = replaced.filter((s) => !kept.includes(s));
    const ending = valid.filter((s) => !replaced.includes(s));
    await setSecretsExpiry(
      trx,
      client.id,
      ending.map((s) => s.id),
      now,
    );
    await setSecretsExpiry(
      trx,
      client.id,
      overlapping.map((s) => s.id),
      until,
    );
    const latest = overlapping.length > 0 ? until : latestExpiry(kept);
    const added = await storeNewSecret(trx, client.id, now, null);
    const updated = await finishChange(trx, client, now, options.audit, {
      action: 'client_secret_rotated',
      details: {
        overlap_seconds: overlapSeconds,
        previous_secret_expires_at: latest?.toISOString() ?? null,
        secret_id: added.record.id,
        hint: added.record.hint,
      },
    });
    return { row: updated, clientSecret: added.clientSecret, keptUntil: latest };
  });
  const { client_id, ...rest } = presentClient(row);
  return keptUntil === null
    ? { client_id, client_secret: clientSecret, ...rest }
    : {
        client_id,
        client_secret: clientSecret,
        ...rest,
        previous_secret_expires_at: keptUntil.toISOString(),
      };
}

/**
 * The client's secrets valid now, newest first (its owners' list): empty for a public client, and
 * for a deleted one (client authentication refuses it whatever it sends).
 * @throws NotFound for an unknown client.
 */
export async function listClientSecrets(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
): Promise<ClientSecretView[]> {
  const now = ctx.clock.now();
  const client = clientId.length <= 200 ? await findClientWithSecretHash(db, clientId, now) : undefined;
  if (!client) throw new NotFound(`no client with client_id ${clientId}`);
  if (client.deletedAt !== null) return [];
  return (await listValidSecrets(db, client.id, now)).map(presentSecret);
}

/**
 * Adds a secret beside the client's others (its owners deploy it, then expire the old one: a
 * rotation without downtime), valid until `expiresAt` (a later time) or, without it, until
 * expired. Returned this once; stored only as its SHA-256 hash.
 * @throws NotFound for an unknown or deleted client; InvalidRequest for a public client, with
 *   MAX_ACTIVE_CLIENT_SECRETS valid already (field `secrets`), or an expiry not in the future
 *   (field `expiresAt`).
 */
export async function addClientSecret(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  options: { expiresAt?: Date | null; audit?: ClientAudit } = {},
): Promise<ClientSecretView & { client_secret: string }> {
  const now = ctx.clock.now();
  const expiresAt = options.expiresAt ?? null;
  if (expiresAt !== null && !(expiresAt.getTime() > now.getTime())) {
    throw fieldProblem('expiresAt', 'the expiry must be a time in the future');
  }
  return inTransaction(db, async (trx) => {
    const { client, valid } = await lockSecrets(trx, clientId, now);
    if (valid.length >= MAX_ACTIVE_CLIENT_SECRETS) {
      throw fieldProblem(
        'secrets',
        `a client may have at most ${MAX_ACTIVE_CLIENT_SECRETS} valid secrets: expire one first`,
      );
    }
    const { clientSecret, record } = await storeNewSecret(trx, client.id, now, expiresAt);
    const view = presentSecret(record);
    await finishChange(trx, client, now, options.audit, {
      action: 'client_secret_added',
      details: { secret_id: view.id, hint: view.hint, expires_at: view.expires_at },
    });
    return { ...view, client_secret: clientSecret };
  });
}

/**
 * Makes one of the client's valid secrets stop being accepted at `at` (now, or later so that its
 * site has time to switch; a time already past means now). An expiry is only ever brought
 * forward. The last secret without an expiry cannot be expired while no other is valid: the
 * client would be left without a way to authenticate.
 * @throws NotFound for an unknown or deleted client, or a secret of it that is not valid now;
 *   InvalidRequest for a public client, a later expiry than the secret has (field `at`), or the
 *   client's last secret (field `secrets`).
 */
export async function expireClientSecret(
  db: Kysely<Database>,
  ctx: Context,
  clientId: string,
  secretId: number,
  options: { at: Date; audit?: ClientAudit },
): Promise<ClientSecretView> {
  const now = ctx.clock.now();
  if (Number.isNaN(options.at.getTime())) throw fieldProblem('at', 'the expiry must be a valid time');
  const at = options.at.getTime() < now.getTime() ? now : options.at;
  return inTransaction(db, async (trx) => {
    const { client, valid } = await lockSecrets(trx, clientId, now);
    const secret = valid.find((s) => s.id === secretId);
    if (!secret) throw new NotFound(`client ${clientId} has no valid secret ${secretId}`);
    if (secret.expiresAt !== null && at > secret.expiresAt) {
      throw fieldProblem('at', `the secret already stops working at ${secret.expiresAt.toISOString()}`);
    }
    if (secret.expiresAt === null && valid.length === 1) {
      throw fieldProblem(
        'secrets',
        'this is the only secret of the client: add another secret first, then expire this one',
      );
    }
    await setSecretsExpiry(trx, client.id, [secret.id], at);
    const view = presentSecret({ ...secret, expiresAt: at });
    await finishChange(trx, client, now, options.audit, {
      action: 'client_secret_expired',
      details: { secret_id: view.id, hint: view.hint, expires_at: view.expires_at },
    });
    return view;
  });
}
