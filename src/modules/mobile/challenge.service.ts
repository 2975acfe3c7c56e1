import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { hashSecret } from '../../lib/secrets.js';
import type { Client } from '../clients/client.js';
import { insertChallenge } from './mobile.repository.js';
import { CHALLENGE_TTL_SECONDS, type ChallengeBody } from './mobile.schemas.js';

/** POST /api/v1/mobile/challenge: a single-use nonce for this device, valid CHALLENGE_TTL_SECONDS. */
export async function issueChallenge(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: ChallengeBody,
): Promise<{ ok: true; challenge: string; expires_in: number }> {
  const challenge = randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  await insertChallenge(db, {
    hash: hashSecret(challenge),
    clientPk: client.id,
    deviceId: input.device_id,
    at: now,
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SECONDS * 1000),
  });
  return { ok: true, challenge, expires_in: CHALLENGE_TTL_SECONDS };
}
