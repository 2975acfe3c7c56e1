import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenForChanges } from '../../../src/db/change-feed.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { decideDeviceCode } from '../../../src/modules/device/device-codes.repository.js';
import { DevicePollCache } from '../../../src/modules/device/device-poll-cache.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { makeClient, makeUser, type TestClient } from '../../helpers/factories.js';
import { basic, postForm } from '../../helpers/http.js';

/*
 * Two instances on one database, each answering waiting devices from its own memory
 * (DevicePollCache): a poll after the first costs no statement, and whatever ends a pending request
 * (a decision, a deletion) on one instance or in the database reaches the other's memory.
 */
const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
let database: TestDatabase;
let a: TestApp;
let b: TestApp;
let memoryB: DevicePollCache;
let device: TestClient;
const stops: Array<() => Promise<void>> = [];

beforeAll(async () => {
  database = await createTestDatabase();
  a = await createTestApp({ database });
  memoryB = new DevicePollCache({ maxEntries: 1000 });
  stops.push(await listenForChanges(database.listen, [memoryB]));
  b = await createTestApp({ database, devicePollCache: memoryB });
  device = await makeClient(a, { name: 'Arcade Console', deviceGrant: true });
});

afterAll(async () => {
  await a?.app.close();
  await b?.app.close();
  for (const stop of stops) await stop();
  await database?.drop();
});

/** A device's request, made on instance `made` (a unless said). */
async function started(made: TestApp = a): Promise<{ deviceCode: string; id: number }> {
  const res = await postForm(
    made.app,
    '/api/v1/oauth/device_authorization',
    { scope: 'openid' },
    {
      authorization: basic(device),
    },
  );
  expect(res.statusCode, res.body).toBe(200);
  const deviceCode = (res.json() as { device_code: string }).device_code;
  const row = await database.db
    .selectFrom('device_codes')
    .select('id')
    .where('device_code_hash', '=', hashSecret(deviceCode))
    .executeTakeFirstOrThrow();
  return { deviceCode, id: Number(row.id) };
}

const pollOnB = async (deviceCode: string) => {
  const res = await postForm(
    b.app,
    '/api/v1/oauth/token',
    { grant_type: GRANT, device_code: deviceCode },
    {
      authorization: basic(device),
    },
  );
  return (res.json() as { error: string }).error;
};

const later = (ms: number) => {
  a.clock.advance(ms);
  b.clock.advance(ms);
};

const lastPolledAt = async (id: number) =>
  (
    await database.db
      .selectFrom('device_codes')
      .select(['last_polled_at', 'interval_seconds'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow()
  ).last_polled_at;

describe("a waiting device's polls answered from memory", () => {
  it('asks the database once: later polls, slow_down included, leave the row as the first poll wrote it', async () => {
    const { deviceCode, id } = await started();
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    const first = await lastPolledAt(id);
    expect(first).toEqual(b.clock.now());
    expect(memoryB.size).toBe(1);

    later(5000);
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    later(1000);
    expect(await pollOnB(deviceCode)).toBe('slow_down');
    later(10_000);
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    expect(await lastPolledAt(id)).toEqual(first);
  });

  it('remembers a request it made: its polls, the first one included, need no statement', async () => {
    const { deviceCode, id } = await started(b);
    // At once, as the statement answers a first poll: pending, not slow_down.
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    later(1000);
    expect(await pollOnB(deviceCode)).toBe('slow_down');
    expect(await lastPolledAt(id)).toBeNull();
  });

  it('hears a decision taken elsewhere: the next poll on the other instance gets it', async () => {
    const { deviceCode, id } = await started();
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    const user = await makeUser(a);
    const decided = await decideDeviceCode(database.db, {
      id,
      status: 'denied',
      userId: user.id,
      authTime: a.clock.now(),
      amr: ['pwd'],
      sid: null,
      at: a.clock.now(),
    });
    expect(decided).toBe(true);
    later(5000);
    await expect.poll(() => pollOnB(deviceCode), { timeout: 1000, interval: 20 }).toBe('access_denied');
  });

  it('hears a deletion (the app revoked, the client disabled): the device is then refused', async () => {
    const { deviceCode, id } = await started();
    expect(await pollOnB(deviceCode)).toBe('authorization_pending');
    await sql`delete from device_codes where id = ${id}`.execute(database.db);
    later(5000);
    await expect.poll(() => pollOnB(deviceCode), { timeout: 1000, interval: 20 }).toBe('invalid_grant');
  });
});
