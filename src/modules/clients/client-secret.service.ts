import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { InvalidRequest, NotFound } from '../../lib/errors.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { recordAudit } from '../audit/audit.repository.js';
import { type ClientAudit, fieldProblem } from './client-input.js';
import { presentClient } from './client-view.js';
import { lockClientWithSecretHash, updateClientColumns } from './clients.repository.js';
import type { ClientView } from './clients.schemas.js';

/** The longest a replaced secret may stay valid beside the new one: 7 days. */
export const MAX_SECRET_OVERLAP_SECONDS = 7 * 24 * 3600;

/** A rotation's answer: the new secret this once, and until when the old one still works when it does. */
export type RotatedClient = ClientView & {
  client_secret: string;
  /** Present only with an overlap: when the replaced secret stops being accepted (ISO 8601). */
  previous_secret_expires_at?: string;
};

/** Why `seconds` cannot be an overlap, or null when it can: a whole number from 0 to 7 days. */
export function secretOverlapProblem(seconds: number): string | null {
  return Number.isSafeInteger(seconds) && seconds >= 0 && seconds <= MAX_SECRET_OVERLAP_SECONDS
    ? null
    : `the overlap must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (7 days)`;
}

/**
 * Replaces a client's secret. The new one is returned this once and stored only as its SHA-256
 * hash. With `overlapSeconds` > 0 the replaced secret's hash is kept and accepted until then
 * beside the new one, so that a site can deploy the new secret without failing token calls; with
 * 0 (the default) the old one stops working at once. A secret still in an earlier overlap is
 * dropped: only the one just replaced is kept. The `c:` announcement of the row's change makes
 * every instance's client cache read it again.
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
  const clientSecret = generateSecret('clientSecret');
  const now = ctx.clock.now();
  const expiresAt = overlapSeconds > 0 ? new Date(now.getTime() + overlapSeconds * 1000) : null;
  const row = await inTransaction(db, async (trx) => {
    const current = await lockClientWithSecretHash(trx, clientId);
    if (!current) throw new NotFound(`no client with client_id ${clientId}`);
    if (current.isPublic || current.secretHash === null) {
      throw new InvalidRequest(
        `client ${clientId} is public (token_endpoint_auth_method none): it has no secret to rotate`,
      );
    }
    const updated = await updateClientColumns(trx, current.id, {
      secretHash: hashSecret(clientSecret),
      previousSecret: expiresAt === null ? null : { hash: current.secretHash, expiresAt },
      updatedAt: now,
    });
    if (options.audit) {
      // Never the secret or its hash: only that it changed and how long the old one lasts.
      await recordAudit(
        trx,
        options.audit({
          action: 'client_secret_rotated',
          subject: `client:${clientId}`,
          details: {
            overlap_seconds: overlapSeconds,
            previous_secret_expires_at: expiresAt?.toISOString() ?? null,
          },
        }),
      );
    }
    return updated;
  });
  const { client_id, ...rest } = presentClient(row);
  return expiresAt === null
    ? { client_id, client_secret: clientSecret, ...rest }
    : {
        client_id,
        client_secret: clientSecret,
        ...rest,
        previous_secret_expires_at: expiresAt.toISOString(),
      };
}
