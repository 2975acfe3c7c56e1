import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { fixedClock } from '../../../src/lib/clock.js';
import {
  consumeRegistrationToken,
  createRegistrationToken,
  listRegistrationTokens,
  revokeRegistrationToken,
} from '../../../src/modules/developer-apps/registration-tokens.service.js';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import { testConfig } from '../../helpers/app.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/database.js';
import { makeOwner } from './helpers.js';

/*
 * RFC 7591 §3 initial access tokens that owners make in the portal: single or N uses, an expiry,
 * each use taken atomically, listed and revoked by their owner only, and counted among their changes.
 */
let database: TestDatabase;
const clock = fixedClock('2026-05-01T00:00:00Z');
const ctx = (env: Record<string, string> = {}) => ({ config: testConfig(env), clock });

beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(() => database.drop());
beforeEach(() => clock.advance(2 * 3600 * 1000));

const portalToken = (userId: number, more: { uses?: number; expiresInSeconds?: number } = {}) =>
  createRegistrationToken(database.db, ctx(), { ownerUserId: userId, createdBy: `user:${userId}`, ...more });

describe("an owner's tokens", () => {
  it('register for their owner until their uses are taken, audited as the owner', async () => {
    const owner = await makeOwner(database.db, ctx());
    const made = await portalToken(owner.id, { uses: 2 });
    expect(made.token).toMatch(/^rit_/);
    expect(made).toMatchObject({
      uses: 2,
      expires_at: new Date(clock.now().getTime() + 7 * 86_400_000).toISOString(),
    });
    expect(await listRegistrationTokens(database.db, ctx(), owner.id)).toMatchObject([
      { id: made.id, uses_left: 2 },
    ]);
    expect(await consumeRegistrationToken(database.db, made.token, clock.now())).toEqual({
      ownerUserId: owner.id,
      tokenId: made.id,
    });
    expect(await listRegistrationTokens(database.db, ctx(), owner.id)).toMatchObject([{ uses_left: 1 }]);
    expect(await consumeRegistrationToken(database.db, made.token, clock.now())).not.toBeNull();
    expect(await consumeRegistrationToken(database.db, made.token, clock.now())).toBeNull();
    expect(await listRegistrationTokens(database.db, ctx(), owner.id)).toEqual([]);
    const events = await database.db
      .selectFrom('audit_events')
      .select(['actor', 'action', 'details'])
      .where('subject', '=', `registration_token:${made.id}`)
      .execute();
    expect(events).toMatchObject([{ actor: `user:${owner.id}`, action: 'registration_token_created' }]);
    expect(JSON.stringify(events)).not.toContain(made.token);
  });

  it('stop at their expiry', async () => {
    const owner = await makeOwner(database.db, ctx());
    const made = await portalToken(owner.id, { expiresInSeconds: 600 });
    clock.advance(600_000);
    expect(await consumeRegistrationToken(database.db, made.token, clock.now())).toBeNull();
    expect(await listRegistrationTokens(database.db, ctx(), owner.id)).toEqual([]);
  });

  it('are purged once expired, used up or not', async () => {
    const owner = await makeOwner(database.db, ctx());
    const expiring = await portalToken(owner.id, { expiresInSeconds: 60 });
    const live = await portalToken(owner.id);
    clock.advance(61_000);
    await purgeExpired(database.db, ctx(), { batchSize: 100, pauseMs: 0 });
    const left = await database.db
      .selectFrom('registration_tokens')
      .select('id')
      .where('id', 'in', [expiring.id, live.id])
      .execute();
    expect(left.map((row) => Number(row.id))).toEqual([live.id]);
  });

  it('give their last use to one registration of many racing for it', async () => {
    const owner = await makeOwner(database.db, ctx());
    const made = await portalToken(owner.id);
    const taken = await Promise.all(
      Array.from({ length: 6 }, () => consumeRegistrationToken(database.db, made.token, clock.now())),
    );
    expect(taken.filter((use) => use !== null)).toHaveLength(1);
  });

  it('refuse anything else: unknown, another kind of token, too long', async () => {
    expect(await consumeRegistrationToken(database.db, 'rit_unknown', clock.now())).toBeNull();
    expect(await consumeRegistrationToken(database.db, 'at_something', clock.now())).toBeNull();
    expect(await consumeRegistrationToken(database.db, `rit_${'x'.repeat(200)}`, clock.now())).toBeNull();
  });

  it('are revoked by their owner only', async () => {
    const owner = await makeOwner(database.db, ctx());
    const stranger = await makeOwner(database.db, ctx());
    const made = await portalToken(owner.id);
    expect(
      await revokeRegistrationToken(database.db, ctx(), stranger.id, made.id).catch((e) => e),
    ).toMatchObject({
      status: 404,
    });
    expect(await listRegistrationTokens(database.db, ctx(), stranger.id)).toEqual([]);
    await revokeRegistrationToken(database.db, ctx(), owner.id, made.id);
    expect(await consumeRegistrationToken(database.db, made.token, clock.now())).toBeNull();
    expect(
      await revokeRegistrationToken(database.db, ctx(), owner.id, made.id).catch((e) => e),
    ).toMatchObject({
      status: 404,
    });
  });

  it('refuse uses and lives out of bounds by their fields', async () => {
    const owner = await makeOwner(database.db, ctx());
    for (const [more, field] of [
      [{ uses: 0 }, 'uses'],
      [{ uses: 1.5 }, 'uses'],
      [{ uses: 1001 }, 'uses'],
      [{ expiresInSeconds: 59 }, 'expiresInSeconds'],
      [{ expiresInSeconds: 90 * 86_400 + 1 }, 'expiresInSeconds'],
    ] as const) {
      const error = await portalToken(owner.id, more).catch((e: unknown) => e);
      expect(error).toMatchObject({ status: 400, fields: { [field]: expect.any(String) } });
    }
    expect(await listRegistrationTokens(database.db, ctx(), owner.id)).toEqual([]);
  });

  it('are not made while registration is closed, and count among the changes per hour', async () => {
    const owner = await makeOwner(database.db, ctx());
    const closed = await createRegistrationToken(database.db, ctx({ CLIENT_REGISTRATION: 'closed' }), {
      ownerUserId: owner.id,
      createdBy: `user:${owner.id}`,
    }).catch((e: unknown) => e);
    expect(closed).toMatchObject({ status: 403, error: 'access_denied' });
    const limited = ctx({ DEVELOPER_CHANGES_PER_HOUR: '2' });
    const make = () =>
      createRegistrationToken(database.db, limited, { ownerUserId: owner.id, createdBy: `user:${owner.id}` });
    await make();
    await make();
    const error = await make().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, error: 'rate_limited' });
    expect((error as { headers: Record<string, string> }).headers['retry-after']).toBe('3600');
  });
});
