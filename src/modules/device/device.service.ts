import type { Kysely } from 'kysely';
import type { Context } from '../../context.js';
import type { Database } from '../../db/schema.js';
import { InvalidScope, UnauthorizedClient } from '../../lib/errors.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { generateUserCode, normalizeUserCode } from '../../lib/user-code.js';
import type { Client } from '../clients/client.js';
import { ALL_SCOPES, DEFAULT_SCOPES, isScope, normalizeScopes } from '../oauth/scopes.js';
import { insertDeviceCode } from './device-codes.repository.js';

/** RFC 8628 §3.2: a device code lives 10 minutes, and the device polls every 5 seconds at first. */
export const DEVICE_CODE_TTL_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** What the device says it is (its User-Agent), cut to this length for the confirmation page. */
const DEVICE_LABEL_MAX_LENGTH = 120;

/** The device authorization response (RFC 8628 §3.2). */
export interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

/** The scopes asked for, checked as authorize checks them (known ones; wallet only with the right). */
function requestedScopes(client: Client, scope: string | undefined): string[] {
  const requested = scope === undefined ? [...DEFAULT_SCOPES] : scope.split(' ').filter(Boolean);
  if (requested.length === 0) throw new InvalidScope('scope is empty.');
  if (requested.some((name) => !isScope(name)))
    throw new InvalidScope(`scope has an unknown value; the scopes are: ${ALL_SCOPES.join(' ')}.`);
  if (requested.includes('wallet') && !client.wallet)
    throw new InvalidScope('This application may not request the wallet scope.');
  return normalizeScopes(requested);
}

/**
 * RFC 8628 §3.1–3.2: a device's request. The device code and the user code are stored only as
 * their SHA-256 (the user code in its normalised form); the user code is retried on the rare
 * collision with a live one.
 * @throws UnauthorizedClient when the client was not registered with the grant; InvalidScope
 */
export async function startDeviceAuthorization(
  db: Kysely<Database>,
  ctx: Context,
  client: Client,
  input: { scope: string | undefined; deviceLabel: string | undefined },
): Promise<DeviceAuthorization> {
  if (!client.deviceGrant)
    throw new UnauthorizedClient(
      'This client is not registered for the device authorization grant (RFC 8628).',
    );
  const scopes = requestedScopes(client, input.scope);
  const deviceCode = generateSecret('deviceCode');
  const deviceCodeHash = hashSecret(deviceCode);
  const at = ctx.clock.now();
  const expiresAt = new Date(at.getTime() + DEVICE_CODE_TTL_SECONDS * 1000);
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode();
    try {
      const readVersion = ctx.devicePollCache?.readVersion ?? 0;
      const id = await insertDeviceCode(db, {
        deviceCodeHash,
        userCodeHash: hashSecret(normalizeUserCode(userCode) as string),
        clientPk: client.id,
        scopes,
        deviceLabel: input.deviceLabel?.slice(0, DEVICE_LABEL_MAX_LENGTH) ?? null,
        intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
        at,
        expiresAt,
      });
      // Remembered at once, so that a device polling this instance never needs a statement.
      ctx.devicePollCache?.set(
        deviceCodeHash,
        {
          id,
          clientPk: client.id,
          expiresAt: expiresAt.getTime(),
          intervalSeconds: DEVICE_POLL_INTERVAL_SECONDS,
          lastPollAt: Number.NEGATIVE_INFINITY,
        },
        readVersion,
      );
      const verification = `${ctx.config.PUBLIC_URL}/device`;
      return {
        device_code: deviceCode,
        user_code: userCode,
        verification_uri: verification,
        verification_uri_complete: `${verification}?user_code=${userCode}`,
        expires_in: DEVICE_CODE_TTL_SECONDS,
        interval: DEVICE_POLL_INTERVAL_SECONDS,
      };
    } catch (error) {
      // 2^34.6 codes: a collision with a live one is rare; a second in a row means something else.
      if (attempt >= 2 || !(error instanceof Error) || !/device_codes_user_code_hash_key/.test(error.message))
        throw error;
    }
  }
}
