import { decodeJwt } from 'jose';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deleteAccount } from '../../../src/modules/accounts/account-deletion.service.js';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import {
  resetPassword,
  sendPasswordResetByOperator,
} from '../../../src/modules/accounts/password-reset.service.js';
import { purgeExpired } from '../../../src/modules/housekeeping/purge.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { hiddenFields } from '../../helpers/browser.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf, makeUser, mintCode } from '../../helpers/factories.js';
import { exchangeCode } from '../../helpers/http.js';
import { approve, makeSite, queuedLogouts, signedIn, signInTo } from './backchannel.fixture.js';

/*
 * `sid` and the queueing of back-channel logouts (OIDC Back-Channel Logout 1.0
 * §2.4): every way a browser session ends queues one logout per site with a grant made in that
 * session and a back-channel logout URI, in the transaction that ends it.
 */

let t: TestApp;
const URI = 'https://rp.example/backchannel';

beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());
beforeEach(async () => {
  await t.database.db.deleteFrom('backchannel_logouts').execute();
});

describe(`sid and queued logouts on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('puts the session sid in id_tokens: one per session, the same across codes of one session', async () => {
    const user = await makeUser(t);
    const [a, b] = [await makeSite(t, URI), await makeSite(t)];
    const browser = await signedIn(t, user);
    const first = await signInTo(t, browser, a);
    const second = await signInTo(t, browser, b);
    expect(first.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.sid).toBe(first.sid);
    const other = await signInTo(t, await signedIn(t, user), a);
    expect(other.sid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(other.sid).not.toBe(first.sid);
    // A code made without a browser session (as the mobile app's sign-ins are) carries no sid.
    const res = await exchangeCode(t.app, a, await mintCode(t, a, user, { scopes: ['openid'] }));
    expect(decodeJwt(res.json().id_token as string)).not.toHaveProperty('sid');
  });

  it('sign-out queues a logout for each site with a grant in the session and a URI, none for others', async () => {
    const user = await makeUser(t);
    const [withUri, alsoWithUri, without, notSignedInHere] = [
      await makeSite(t, URI),
      await makeSite(t, 'http://127.0.0.1:9/bc'),
      await makeSite(t),
      await makeSite(t, URI),
    ];
    const browser = await signedIn(t, user);
    const { sid } = await signInTo(t, browser, withUri);
    await signInTo(t, browser, withUri);
    await signInTo(t, browser, alsoWithUri);
    await signInTo(t, browser, without);
    // The same user in another browser: that session does not end.
    await signInTo(t, await signedIn(t, user), notSignedInHere);

    const page = await browser.get('/account');
    const res = await browser.post('/signout', hiddenFields(page.body, '/signout'));
    expect(res.statusCode).toBe(303);
    const queued = await queuedLogouts(t);
    expect(queued.map((q) => q.clientId).sort()).toEqual([withUri.clientId, alsoWithUri.clientId].sort());
    for (const q of queued) expect(q).toMatchObject({ userId: user.id, sid, reason: 'sign_out' });
  });

  it("ends the session's codes not yet redeemed: no site starts a session tied to an ended one", async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const browser = await signedIn(t, user);
    await signInTo(t, browser, site);
    const code = await approve(browser, site);
    await browser.signIn(await makeUser(t));
    const res = await exchangeCode(t.app, site, code);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_grant');
  });

  it('a new sign-in in the same browser replaces the session and queues its logouts', async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const browser = await signedIn(t, user);
    const { sid } = await signInTo(t, browser, site);
    await browser.signIn(await makeUser(t));
    expect(await queuedLogouts(t)).toEqual([
      { clientId: site.clientId, userId: user.id, sid, reason: 'replaced' },
    ]);
  });

  it('signing in again to the same account continues the session: same sid, no logout, codes stand', async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const browser = await signedIn(t, user);
    const { sid } = await signInTo(t, browser, site);
    const code = await approve(browser, site);
    const before = browser.cookies.get('idp_session');
    await browser.signIn(user);
    // A new cookie id (no session fixation), the same session for the sites.
    expect(browser.cookies.get('idp_session')).not.toBe(before);
    expect(await queuedLogouts(t)).toEqual([]);
    const res = await exchangeCode(t.app, site, code);
    expect(res.statusCode, res.body).toBe(200);
    expect(decodeJwt(res.json().id_token as string).sid).toBe(sid);
    expect((await signInTo(t, browser, site)).sid).toBe(sid);
  });

  it('a password reset ends every session of the account, in the transaction of the reset', async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const one = await signInTo(t, await signedIn(t, user), site);
    const two = await signInTo(t, await signedIn(t, user), site);
    await sendPasswordResetByOperator(t.database.db, depsOf(t).ctx, {
      username: user.username,
      locale: 'en',
    });
    const mail = await t.database.db
      .selectFrom('mail_outbox')
      .select('text_body')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    const token = /pr_[A-Za-z0-9_-]{43}/.exec(mail.text_body)?.[0] as string;
    const result = await resetPassword(t.database.db, depsOf(t).ctx, {
      token,
      password: 'a brand new password',
      passwordConfirm: 'a brand new password',
      revokeApps: true,
      ip: null,
    });
    expect(result.ok).toBe(true);
    const queued = await queuedLogouts(t);
    expect(queued.map((q) => q.sid).sort()).toEqual([one.sid, two.sid].sort());
    for (const q of queued) expect(q).toMatchObject({ clientId: site.clientId, reason: 'password_reset' });
  });

  it('account deletion and disabling queue the logouts of every session', async () => {
    const deleted = await makeUser(t);
    const disabled = await makeUser(t);
    const site = await makeSite(t, URI);
    const a = await signInTo(t, await signedIn(t, deleted), site);
    const b = await signInTo(t, await signedIn(t, disabled), site);
    const result = await deleteAccount(t.database.db, depsOf(t).ctx, {
      userId: deleted.id,
      password: deleted.password,
      ip: null,
    });
    expect(result.ok).toBe(true);
    await disableUser(t.database.db, depsOf(t).ctx, { username: disabled.username });
    expect(await queuedLogouts(t)).toEqual([
      { clientId: site.clientId, userId: deleted.id, sid: a.sid, reason: 'account_deleted' },
      { clientId: site.clientId, userId: disabled.id, sid: b.sid, reason: 'user_disabled' },
    ]);
  });

  it('a password change ends the other sessions: their sites get logouts, this one keeps its own', async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const here = await signedIn(t, user);
    await signInTo(t, here, site);
    const other = await signInTo(t, await signedIn(t, user), site);
    const page = await here.get('/account/password');
    const res = await here.post('/account/password', {
      ...hiddenFields(page.body, '/account/password'),
      current_password: user.password,
      new_password: 'another long password',
      password_confirm: 'another long password',
    });
    expect(res.statusCode).toBeLessThan(400);
    expect(await queuedLogouts(t)).toEqual([
      { clientId: site.clientId, userId: user.id, sid: other.sid, reason: 'password_changed' },
    ]);
  });

  it('the housekeeping purge of expired sessions queues their logouts', async () => {
    const user = await makeUser(t);
    const site = await makeSite(t, URI);
    const { sid } = await signInTo(t, await signedIn(t, user), site);
    const ctx = {
      ...depsOf(t).ctx,
      clock: { now: () => new Date(t.clock.now().getTime() + (t.config.SESSION_TTL_SECONDS + 1) * 1000) },
    };
    const report = await purgeExpired(t.database.db, ctx, { batchSize: 100, pauseMs: 0 });
    expect(report.browser_sessions).toBeGreaterThanOrEqual(1);
    expect(await queuedLogouts(t)).toContainEqual({
      clientId: site.clientId,
      userId: user.id,
      sid,
      reason: 'expired',
    });
  });
});
