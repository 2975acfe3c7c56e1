import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/lib/secrets.js';
import { findUserById } from '../../../src/modules/accounts/accounts.repository.js';
import { insertSession } from '../../../src/modules/accounts/sessions.repository.js';
import type { OperatorActor } from '../../../src/modules/operators/operator-audit.js';
import { UserActionRefused } from '../../../src/modules/user-admin/user-action-refused.js';
import {
  deleteUserAccount,
  markUserEmailVerified,
  resetUserSecondFactors,
  sendUserResetLink,
  setUserDisabled,
  signOutEverywhere,
} from '../../../src/modules/user-admin/user-actions.service.js';
import { userDetail } from '../../../src/modules/user-admin/user-detail.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { depsOf, makeClient, makeUser, type TestUser } from '../../helpers/factories.js';
import { insertAccessToken } from '../../helpers/tokens.js';
import { makeTotpUser } from '../../helpers/totp.js';

/*
 * The console's actions on an account: each through the service the CLI or the account page uses,
 * with the operator's audit event in the same transaction; a refusal changes nothing.
 */

let t: TestApp;
let clientId: string;
let actor: OperatorActor;

beforeAll(async () => {
  t = await createTestApp();
  clientId = (await makeClient(t)).clientId;
  const operator = await makeUser(t, { username: 'op_owner' });
  actor = { userId: operator.id, username: operator.username, role: 'owner', ip: '203.0.113.9' };
});
afterAll(() => t.close());

const ctx = () => depsOf(t).ctx;
const db = () => t.database.db;

/** A browser session and a live token of `user`. */
async function signedIn(user: TestUser): Promise<void> {
  const now = t.clock.now();
  await insertSession(db(), {
    idHash: hashSecret(randomBytes(16).toString('hex')),
    userId: user.id,
    authTime: now,
    amr: ['pwd'],
    createdAt: now,
    expiresAt: new Date(now.getTime() + 3600_000),
    userAgent: 'Test/1.0',
    ip: '198.51.100.7',
  });
  await insertAccessToken(db(), { userId: user.id, clientId, scopes: ['openid'], clock: t.clock });
}

const liveSessions = async (userId: number) =>
  (await db().selectFrom('browser_sessions').select('sid').where('user_id', '=', userId).execute()).length;
const liveGrants = async (userId: number) =>
  (
    await db()
      .selectFrom('grants')
      .select('id')
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .execute()
  ).length;
const eventsAbout = (userId: number) =>
  db().selectFrom('audit_events').selectAll().where('subject', '=', `user:${userId}`).orderBy('id').execute();

async function refusal(work: Promise<unknown>): Promise<string> {
  const error = await work.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UserActionRefused);
  return (error as UserActionRefused).reason;
}

describe('disable and enable', () => {
  it('disables through the CLI service (sessions and grants end) and records the operator, before and after', async () => {
    const user = await makeUser(t);
    await signedIn(user);
    expect(await setUserDisabled(db(), ctx(), actor, { userId: user.id, disabled: true })).toEqual({
      disabled: true,
    });
    expect((await findUserById(db(), user.id))?.disabledAt).not.toBeNull();
    expect(await liveSessions(user.id)).toBe(0);
    expect(await liveGrants(user.id)).toBe(0);
    await setUserDisabled(db(), ctx(), actor, { userId: user.id, disabled: false });
    expect((await findUserById(db(), user.id))?.disabledAt).toBeNull();
    const events = await eventsAbout(user.id);
    expect(events.map((event) => [event.action, event.actor])).toEqual([
      ['user_disabled', `operator:${actor.userId}`],
      ['user_enabled', `operator:${actor.userId}`],
    ]);
    expect(events[0]?.ip).toBe('203.0.113.9');
    expect(events[0]?.details).toMatchObject({
      operator: 'op_owner',
      role: 'owner',
      before: { disabled: false },
      after: { disabled: true },
    });
  });
});

describe('sign out everywhere', () => {
  it('ends sessions and grants but leaves the account usable', async () => {
    const user = await makeUser(t);
    await signedIn(user);
    await signedIn(user);
    expect(await signOutEverywhere(db(), ctx(), actor, { userId: user.id })).toEqual({
      sessionsEnded: 2,
      grantsRevoked: 2,
    });
    expect(await liveSessions(user.id)).toBe(0);
    expect(await liveGrants(user.id)).toBe(0);
    expect((await findUserById(db(), user.id))?.disabledAt).toBeNull();
    const [event] = await eventsAbout(user.id);
    expect(event?.action).toBe('user_signed_out_everywhere');
    expect(event?.details).toMatchObject({ sessions_ended: 2, grants_revoked: 2 });
  });
});

describe('second factors', () => {
  it('removes the TOTP key and recovery codes', async () => {
    const { user } = await makeTotpUser(t);
    expect((await userDetail(db(), ctx(), user.id))?.secondFactors.totp).toBe('on');
    await resetUserSecondFactors(db(), ctx(), actor, { userId: user.id });
    const detail = await userDetail(db(), ctx(), user.id);
    expect(detail?.secondFactors).toMatchObject({ totp: 'off', recoveryCodesUnused: 0 });
    const events = await eventsAbout(user.id);
    expect(events.at(-1)?.action).toBe('second_factors_reset');
    expect(events.at(-1)?.details).toMatchObject({ totp_removed: true, operator: 'op_owner' });
  });
});

describe('reset link', () => {
  it('queues a message and records the operator with it, never the link', async () => {
    const user = await makeUser(t);
    const sent = await sendUserResetLink(db(), ctx(), actor, { userId: user.id, locale: 'en' });
    expect(Date.parse(sent.expiresAt)).toBeGreaterThan(t.clock.now().getTime());
    const mail = await db().selectFrom('mail_outbox').selectAll().where('user_id', '=', user.id).execute();
    expect(mail).toHaveLength(1);
    const [event] = await eventsAbout(user.id);
    expect(event).toMatchObject({ action: 'password_reset_sent', actor: `operator:${actor.userId}` });
    expect(event?.details).toMatchObject({ via: 'console', operator: 'op_owner', role: 'owner' });
    expect(JSON.stringify(event?.details)).not.toMatch(/pr_|token/);
  });

  it('is refused for an account without an address, or a disabled one', async () => {
    const bare = await makeUser(t, { bare: true });
    expect(await refusal(sendUserResetLink(db(), ctx(), actor, { userId: bare.id, locale: 'en' }))).toBe(
      'no_email',
    );
    const user = await makeUser(t);
    await setUserDisabled(db(), ctx(), actor, { userId: user.id, disabled: true });
    expect(await refusal(sendUserResetLink(db(), ctx(), actor, { userId: user.id, locale: 'en' }))).toBe(
      'disabled',
    );
  });
});

describe('e-mail verified', () => {
  it('marks the address confirmed, with before and after', async () => {
    const user = await makeUser(t, { emailVerified: false });
    expect(await markUserEmailVerified(db(), ctx(), actor, { userId: user.id })).toEqual({
      claimWithheld: false,
    });
    expect((await findUserById(db(), user.id))?.emailVerified).toBe(true);
    const [event] = await eventsAbout(user.id);
    expect(event?.details).toMatchObject({
      before: { email_verified: false },
      after: { email_verified: true, claim_withheld: false },
    });
  });

  it('is refused for an account without an address', async () => {
    const bare = await makeUser(t, { bare: true });
    expect(await refusal(markUserEmailVerified(db(), ctx(), actor, { userId: bare.id }))).toBe('no_email');
    expect(await eventsAbout(bare.id)).toEqual([]);
  });
});

describe('delete', () => {
  it('erases the account as the account page does, audited as the operator', async () => {
    const user = await makeUser(t);
    await signedIn(user);
    await deleteUserAccount(db(), ctx(), actor, { userId: user.id, locale: 'en' });
    const after = await findUserById(db(), user.id);
    expect(after?.deletedAt).not.toBeNull();
    expect(after?.email).toBeNull();
    expect(await liveSessions(user.id)).toBe(0);
    const events = await eventsAbout(user.id);
    expect(events.at(-1)).toMatchObject({ action: 'account_deleted', actor: `operator:${actor.userId}` });
    expect(events.at(-1)?.details).toMatchObject({ via: 'console', sessions_ended: 1 });
    // Deleted is final: every later action is refused.
    expect(await refusal(deleteUserAccount(db(), ctx(), actor, { userId: user.id, locale: 'en' }))).toBe(
      'deleted',
    );
    expect(await refusal(setUserDisabled(db(), ctx(), actor, { userId: user.id, disabled: false }))).toBe(
      'deleted',
    );
  });

  it('refuses an unknown account', async () => {
    expect(await refusal(signOutEverywhere(db(), ctx(), actor, { userId: 987654 }))).toBe('not_found');
  });
});
