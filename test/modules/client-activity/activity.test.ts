import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { appActivity } from '../../../src/modules/client-activity/app-activity.js';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import { rollups } from '../../../src/modules/rollups/rollup-recorder.js';
import { addRollups } from '../../../src/modules/rollups/rollups.repository.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { makeClient, makeUser, type TestClient, type TestUser } from '../../helpers/factories.js';
import { authorizeUrl, basic, exchangeCode, postForm } from '../../helpers/http.js';
import { insertAccessToken } from '../../helpers/tokens.js';

/*
 * An application's traffic per UTC day, as its owners' page reads it: sign-ins (codes issued to
 * it), active users (its access tokens' distinct users) and token endpoint answers by outcome, from
 * its own keys only.
 */

let t: TestApp;
let user: TestUser;
beforeAll(async () => {
  t = await createTestApp();
  user = await makeUser(t);
});
afterAll(() => t.close());

beforeEach(async () => {
  // Counts of other apps in this process are not this test's.
  rollups.take();
  await t.database.db.deleteFrom('metric_rollups').execute();
  t.clock.advance(60_000);
});

async function app(): Promise<TestClient & { pk: number }> {
  const client = await makeClient(t);
  const row = await findClientByClientId(t.database.db, client.clientId);
  return { ...client, pk: row?.id as number };
}

const at = (iso: string) => new Date(iso);

describe('appActivity', () => {
  it('gives every day of the window, oldest first, from the rollups of this application only', async () => {
    const site = await app();
    const other = await app();
    await addRollups(t.database.db, [
      { minute: at('2026-05-30T23:59:00Z'), name: 'codes_issued', key: site.clientId, value: 2 },
      { minute: at('2026-05-31T00:00:00Z'), name: 'codes_issued', key: site.clientId, value: 3 },
      { minute: at('2026-05-31T10:00:00Z'), name: 'codes_issued', key: '', value: 50 },
      { minute: at('2026-05-31T10:00:00Z'), name: 'codes_issued', key: other.clientId, value: 7 },
      { minute: at('2026-05-31T10:00:00Z'), name: 'token_requests', key: `${site.clientId}|ok`, value: 4 },
      { minute: at('2026-05-31T11:00:00Z'), name: 'token_requests', key: `${site.clientId}|ok`, value: 1 },
      {
        minute: at('2026-05-31T10:00:00Z'),
        name: 'token_requests',
        key: `${site.clientId}|invalid_grant`,
        value: 2,
      },
      { minute: at('2026-05-31T10:00:00Z'), name: 'token_requests', key: `${other.clientId}|ok`, value: 9 },
      // Before the window: three days ending on 1 June.
      { minute: at('2026-05-29T23:59:00Z'), name: 'codes_issued', key: site.clientId, value: 100 },
    ]);
    const days = await appActivity(t.database.db, {
      clientId: site.clientId,
      clientPk: site.pk,
      now: at('2026-06-01T08:00:00Z'),
      days: 3,
    });
    expect(days).toEqual([
      { day: '2026-05-30', sign_ins: 2, active_users: 0, token_requests: {} },
      { day: '2026-05-31', sign_ins: 3, active_users: 0, token_requests: { ok: 5, invalid_grant: 2 } },
      { day: '2026-06-01', sign_ins: 0, active_users: 0, token_requests: {} },
    ]);
    expect(
      await appActivity(t.database.db, {
        clientId: site.clientId,
        clientPk: site.pk,
        now: at('2026-06-01T08:00:00Z'),
      }),
    ).toHaveLength(30);
  });

  it('counts the distinct users who got an access token of the application each UTC day', async () => {
    const site = await app();
    const other = await app();
    const second = await makeUser(t);
    t.clock.set('2026-07-01T23:30:00Z');
    const token = (userId: number, clientId: string) =>
      insertAccessToken(t.database.db, { userId, clientId, scopes: ['openid'], clock: t.clock });
    await token(user.id, site.clientId);
    await token(user.id, site.clientId);
    await token(second.id, site.clientId);
    await token(second.id, other.clientId);
    t.clock.advance(60 * 60_000); // 2 July, 00:30 UTC
    await token(second.id, site.clientId);
    const days = await appActivity(t.database.db, {
      clientId: site.clientId,
      clientPk: site.pk,
      now: t.clock.now(),
      days: 2,
    });
    expect(days.map((day) => [day.day, day.active_users])).toEqual([
      ['2026-07-01', 2],
      ['2026-07-02', 1],
    ]);
    // Moved on by 40 days: those days are out of the window.
    t.clock.advance(40 * 86_400_000);
    const later = await appActivity(t.database.db, {
      clientId: site.clientId,
      clientPk: site.pk,
      now: t.clock.now(),
    });
    expect(later.every((day) => day.active_users === 0)).toBe(true);
  });
});

describe('the counting hooks, flushed', () => {
  it('count a sign-in through authorize and the token answers by outcome for the application', async () => {
    const site = await app();
    const browser = new Browser(t.app);
    const start = await browser.get(authorizeUrl(site, { scope: 'openid' }));
    const resume = (await browser.signIn(user, start.headers.location as string)).headers.location as string;
    const page = await browser.get(resume);
    const decision = await browser.post('/api/v1/oauth/authorize/decision', {
      ...hiddenFields(page.body, '/api/v1/oauth/authorize/decision'),
      decision: 'allow',
    });
    const code = new URL(decision.headers.location as string).searchParams.get('code') as string;
    expect((await exchangeCode(t.app, site, code)).statusCode).toBe(200);
    expect((await exchangeCode(t.app, site, code)).statusCode).toBe(400);
    await postForm(t.app, '/api/v1/oauth/token', { grant_type: 'password' }, { authorization: basic(site) });
    // A wrong secret counts for the application once its log found it; an unknown client_id never.
    await exchangeCode(t.app, { ...site, clientSecret: 'cs_wrong' }, code);
    await exchangeCode(t.app, { ...site, clientId: 'pk_nobody_registered' }, code);
    await t.app.afterResponse.idle();
    await rollups.flush(t.database.db);
    const days = await appActivity(t.database.db, {
      clientId: site.clientId,
      clientPk: site.pk,
      now: new Date(),
      days: 1,
    });
    expect(days).toHaveLength(1);
    expect(days[0]).toMatchObject({
      day: new Date().toISOString().slice(0, 10),
      sign_ins: 1,
      token_requests: { ok: 1, invalid_grant: 1, unsupported_grant_type: 1, invalid_client: 1 },
    });
    const rows = await t.database.db
      .selectFrom('metric_rollups')
      .select('key')
      .where('name', '=', 'token_requests')
      .execute();
    expect(rows.map((row) => row.key).filter((key) => key.startsWith('pk_nobody'))).toEqual([]);
  });
});
