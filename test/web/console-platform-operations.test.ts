import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock } from '../../src/lib/clock.js';
import { ApiError } from '../../src/lib/errors.js';
import { latestAuditEvents } from '../../src/modules/audit/audit.repository.js';
import { ensureSigningKeys, listSigningKeys } from '../../src/modules/oidc/keys.service.js';
import { getPlatformStatus } from '../../src/modules/platform/platform.service.js';
import {
  openIncidentAudited,
  platformOverview,
  presentableError,
  retryLogout,
  retryMail,
  rotateKey,
} from '../../src/modules/platform/platform-operations.service.js';
import { testConfig } from '../helpers/app.js';
import { createTestDatabase, type TestDatabase, usingPostgres } from '../helpers/database.js';

/*
 * The services behind the console's platform page, on a real database: each action and its audit
 * event commit together or not at all (an event that cannot be written leaves the action undone),
 * and what the page reads never carries an address, a link or a body.
 */

const ctx = { config: testConfig(), clock: fixedClock('2026-06-01T12:00:00Z') };
let database: TestDatabase;
let mailId = 0;

const failing = () => {
  throw new Error('the audit log refused the event');
};

beforeAll(async () => {
  database = await createTestDatabase();
  await ensureSigningKeys(database.db, ctx);
  const now = ctx.clock.now();
  const row = await database.db
    .insertInto('mail_outbox')
    .values({
      kind: 'password_reset',
      recipient: 'carla.private@example.org',
      locale: 'en',
      subject: 'Reset',
      text_body: 'https://id.example/reset?token=pr_never_shown',
      html_body: '',
      created_at: now,
      next_attempt_at: now,
      attempts: 5,
      failed_at: now,
      last_error: 'timeout',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  mailId = Number(row.id);
});
afterAll(() => database.drop());

describe('presentableError', () => {
  it('masks addresses, drops links and cuts long texts', () => {
    expect(presentableError(null)).toBeNull();
    expect(presentableError('550 <bob.smith@example.org>: unknown, see https://mx.example/x?token=t')).toBe(
      '550 <b…@example.org>: unknown, see [link]',
    );
    expect(presentableError('x'.repeat(400))).toHaveLength(301);
  });
});

describe(`the platform operations on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('lists the outbox with the recipient masked, never the body', async () => {
    const overview = await platformOverview(database.db, ctx);
    expect(overview.mail).toMatchObject({ pending: 0, sent: 0, failed: 1 });
    expect(overview.mail.latest).toEqual([
      expect.objectContaining({
        id: mailId,
        recipient: 'c…@example.org',
        state: 'failed',
        lastError: 'timeout',
      }),
    ]);
    expect(JSON.stringify(overview)).not.toMatch(/carla\.private|pr_never_shown/);
    expect(overview.logouts).toEqual({ pending: 0, delivered: 0, failed: 0, latest: [] });
    expect(
      overview.keys
        .filter((key) => key.signing)
        .map((key) => key.algorithm)
        .sort(),
    ).toEqual(['ES256', 'EdDSA', 'RS256']);
  });

  it('leaves a retry undone when its audit event cannot be written, and does it with the event', async () => {
    await expect(retryMail(database.db, ctx, String(mailId), failing)).rejects.toThrow('refused');
    expect((await platformOverview(database.db, ctx)).mail.failed).toBe(1);
    await retryMail(database.db, ctx, String(mailId), (mail) => ({
      at: ctx.clock.now(),
      actor: 'operator:1',
      action: 'mail_retried',
      subject: `mail:${mail.id}`,
      details: { recipient: mail.recipient },
    }));
    expect((await platformOverview(database.db, ctx)).mail).toMatchObject({ pending: 1, failed: 0 });
    const [event] = await latestAuditEvents(database.db, 1);
    expect(event).toMatchObject({ action: 'mail_retried', details: { recipient: 'c…@example.org' } });
    const again = await retryMail(database.db, ctx, String(mailId), failing).catch((error: unknown) => error);
    expect(again).toBeInstanceOf(ApiError);
    expect((again as ApiError).status).toBe(404);
    await expect(retryLogout(database.db, ctx, '12', failing)).rejects.toMatchObject({ status: 404 });
    await expect(retryMail(database.db, ctx, '0', failing)).rejects.toMatchObject({ status: 400 });
  });

  it('leaves a key rotation and an incident undone when their audit events cannot be written', async () => {
    const keys = (await listSigningKeys(database.db)).length;
    await expect(rotateKey(database.db, ctx, 'ES256', failing)).rejects.toThrow('refused');
    expect(await listSigningKeys(database.db)).toHaveLength(keys);
    await expect(rotateKey(database.db, ctx, 'HS256', failing)).rejects.toMatchObject({ status: 400 });
    await expect(
      openIncidentAudited(database.db, ctx, { title: 'Never opened', severity: 'minor' }, failing),
    ).rejects.toThrow('refused');
    expect((await getPlatformStatus(database.db, ctx)).incidents).toEqual([]);
  });
});
