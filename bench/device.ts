/**
 * The device authorization grant's hot path (RFC 8628 §3.4–3.5): a device waiting for its person
 * polls the token endpoint every 5 seconds, and is answered `authorization_pending` until the
 * person decides. Thousands of TVs and command-line tools waiting at once are thousands of such
 * polls a second. The scenario polls with many pending codes in turn, each no sooner than its
 * interval (a faster one would be told `slow_down`, which the scenario counts as a failure), from a
 * public client as a TV is (client_id alone: no secret to check).
 *
 * It measures the steady state: a device polls some 120 times in its request's 10 minutes, and only
 * its first poll at an instance asks the database (one statement, pollDeviceCode); the instance
 * answers the rest from memory (src/modules/device/device-poll-cache.ts). So every code is polled
 * once before the measured runs, which start an interval after that pass. The runs are paced to
 * bring each code back after 1.25 intervals: 16,000 polls a second with 100,000 devices waiting,
 * about what two cores answer; the target is the CPU per answer, not the rate.
 */
import { setTimeout } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Context } from '../src/context.js';
import type { Database } from '../src/db/schema.js';
import { systemClock } from '../src/lib/clock.js';
import { generateSecret, hashSecret } from '../src/lib/secrets.js';
import { generateUserCode, normalizeUserCode } from '../src/lib/user-code.js';
import { findClientByClientId } from '../src/modules/clients/clients.repository.js';
import { createClient } from '../src/modules/clients/clients.service.js';
import {
  DEVICE_CODE_TTL_SECONDS,
  DEVICE_POLL_INTERVAL_SECONDS,
} from '../src/modules/device/device.service.js';
import { DEVICE_CODE_GRANT_TYPE } from '../src/modules/oauth/grants/device-code.js';
import { normalizeScopes } from '../src/modules/oauth/scopes.js';
import { failedRequests, type LoadOptions, load, type Scenario } from './harness.js';

/** The scenario's name, which bench/targets.ts judges. */
export const DEVICE_POLL_SCENARIO = 'device_code poll (authorization_pending)';

/**
 * Pending device requests of a public client allowed the grant, as the device authorization
 * endpoint stores them (the SHA-256 of each code; scope `openid profile offline_access`), written
 * in bulk, expiring DEVICE_CODE_TTL_SECONDS from now: seed them right before the scenario runs.
 */
export async function seedDeviceCodes(
  db: Kysely<Database>,
  ctx: Context,
  count: number,
): Promise<{ clientId: string; deviceCodes: string[] }> {
  const created = await createClient(
    db,
    { config: ctx.config, clock: systemClock },
    {
      name: 'Bench TV',
      siteUrl: 'https://tv.bench.example',
      redirectUris: ['https://tv.bench.example/cb'],
      isPublic: true,
      deviceGrant: true,
    },
  );
  const client = await findClientByClientId(db, created.client_id);
  if (!client) throw new Error('the bench TV client is gone');
  const now = systemClock.now();
  const expiresAt = new Date(now.getTime() + DEVICE_CODE_TTL_SECONDS * 1000);
  const scopes = normalizeScopes(['openid', 'profile', 'offline_access']);
  const deviceCodes: string[] = [];
  // User codes are unique among live requests; 20^8 codes make a repeat likely among 100,000.
  const userCodes = new Set<string>();
  for (let offset = 0; offset < count; offset += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - offset) }, (_, i) => {
      const deviceCode = generateSecret('deviceCode');
      deviceCodes.push(deviceCode);
      let userCode = normalizeUserCode(generateUserCode()) as string;
      while (userCodes.has(userCode)) userCode = normalizeUserCode(generateUserCode()) as string;
      userCodes.add(userCode);
      return {
        device_code_hash: hashSecret(deviceCode),
        user_code_hash: hashSecret(userCode),
        client_pk: client.id,
        scopes,
        device_label: `BenchTV/1.0 (${offset + i})`,
        interval_seconds: DEVICE_POLL_INTERVAL_SECONDS,
        created_at: now,
        expires_at: expiresAt,
      };
    });
    await db.insertInto('device_codes').values(batch).execute();
  }
  return { clientId: created.client_id, deviceCodes };
}

/**
 * Polls taking the codes in turn: each comes back every `deviceCodes.length` requests, no sooner
 * than 1.25 intervals later at the rate `paced` caps them to (a faster machine would otherwise
 * bring a code back within its interval). Every answer must be `400 authorization_pending`;
 * anything else (a `slow_down` included) counts as failed.
 */
export function devicePolls(
  clientId: string,
  deviceCodes: string[],
  { paced }: { paced: boolean } = { paced: true },
): LoadOptions {
  let index = 0;
  const prefix = `grant_type=${encodeURIComponent(DEVICE_CODE_GRANT_TYPE)}&client_id=${clientId}&device_code=`;
  return {
    method: 'POST',
    ...(paced ? { overallRate: Math.floor(deviceCodes.length / (DEVICE_POLL_INTERVAL_SECONDS * 1.25)) } : {}),
    expect: { status: 400, body: (body) => body.includes('"error":"authorization_pending"') },
    next: () => ({
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: prefix + deviceCodes[index++ % deviceCodes.length],
    }),
  };
}

/** The scenario, on the service at `base` (process `pid`), with codes seeded just now. */
export async function deviceScenario(
  db: Kysely<Database>,
  ctx: Context,
  service: { base: string; pid: number | undefined },
  count: number,
): Promise<Scenario> {
  const { clientId, deviceCodes } = await seedDeviceCodes(db, ctx, count);
  const url = `${service.base}/api/v1/oauth/token`;
  // Each code once, as fast as answered.
  const firstPolls = devicePolls(clientId, deviceCodes, { paced: false });
  const failed = failedRequests(await load(url, { ...firstPolls, amount: count }, 0), firstPolls.expect);
  if (failed > 0) throw new Error(`${failed} first polls were not answered authorization_pending`);
  // The runs take the codes in the same order: each comes back at least an interval after its first poll.
  await setTimeout(DEVICE_POLL_INTERVAL_SECONDS * 1000);
  return {
    name: `${DEVICE_POLL_SCENARIO}, ${count.toLocaleString('en')} waiting devices`,
    target: 'idp',
    url,
    options: devicePolls(clientId, deviceCodes),
    pid: service.pid,
  };
}
