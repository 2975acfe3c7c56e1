import { generateKeyPairSync, sign } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { usernameSkeleton } from '../../src/lib/username-skeleton.js';
import { findCredentials, findUserByUsername } from '../../src/modules/accounts/accounts.repository.js';
import { enableUser, updateUserProfile } from '../../src/modules/accounts/accounts.service.js';
import { listAuditEventsAbout } from '../../src/modules/audit/audit.repository.js';
import { listConsentsOfUser } from '../../src/modules/oauth/consents.repository.js';
import {
  insertPasskey,
  type Passkey,
  recordPasskeyUse,
} from '../../src/modules/passkeys/passkeys.repository.js';
import { listPeriodsOfUser } from '../../src/modules/premium/premium.repository.js';
import { grantPremium } from '../../src/modules/premium/premium.service.js';
import { listEntriesOfUser } from '../../src/modules/wallet/wallet.repository.js';
import { credit, verifyLedger } from '../../src/modules/wallet/wallet.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { expectApiError } from '../helpers/assertions.js';
import { Browser, hiddenFields } from '../helpers/browser.js';
import {
  depsOf,
  makeClient,
  makeOfficialApp,
  makeUser,
  mintCode,
  type TestClient,
  type TestUser,
} from '../helpers/factories.js';
import { basic, exchangeCode, postForm } from '../helpers/http.js';

/*
 * /account/export and /account/delete, on a user with something in
 * every table the export reads: a full profile, premium, an app with live tokens, a phone signed
 * in to the mobile app, a wallet with a credit and a charge, browser sessions and audit events.
 */

let t: TestApp;
/** `m` has the skeleton `rn`: the username skeleton differs from the username. */
let maria: TestUser;
let bob: TestUser;
let shop: TestClient;
let tokens: { access_token: string; refresh_token: string };
let phone: { deviceId: string; publicKey: string; accessToken: string; refreshToken: string };

/** Every string in a JSON value, keys included. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(strings);
  if (value !== null && typeof value === 'object')
    return Object.entries(value).flatMap(([key, inner]) => [key, ...strings(inner)]);
  return [];
}

/** A phone of the official app signs `who` in, as mobile.fixture.ts does. */
async function signInPhone(appClientId: string, who: TestUser) {
  const keys = generateKeyPairSync('ed25519');
  const deviceId = `device-${Math.random().toString(36).slice(2, 12)}`;
  const post = (url: string, body: unknown) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'user-agent': 'MariaPhone/2.0 (Android 15)' },
      payload: JSON.stringify(body),
    });
  const { challenge } = (
    await post('/api/v1/mobile/challenge', { client_id: appClientId, device_id: deviceId })
  ).json();
  const publicKey = keys.publicKey.export({ format: 'jwk' }).x as string;
  const res = await post('/api/v1/mobile/verify', {
    client_id: appClientId,
    device_id: deviceId,
    challenge,
    signature: sign(null, Buffer.from(`${challenge}.${deviceId}`), keys.privateKey).toString('base64url'),
    public_key: publicKey,
    username: who.username,
    password: who.password,
  });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { access_token: string; refresh_token: string };
  return { deviceId, publicKey, accessToken: body.access_token, refreshToken: body.refresh_token };
}

function userinfo(token: string): Promise<LightMyRequestResponse> {
  return t.app.inject({
    method: 'GET',
    url: '/api/v1/oauth/userinfo',
    headers: { authorization: `Bearer ${token}` },
  });
}

async function signedIn(who: TestUser): Promise<Browser> {
  const browser = new Browser(t.app);
  await browser.signIn(who);
  return browser;
}

/** What the user row holds, secrets included (read as an operator would). */
function userRow(id: number) {
  return t.database.db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
}

beforeAll(async () => {
  t = await createTestApp();
  const { db, ctx } = depsOf(t);
  maria = await makeUser(t, { username: 'maria_m', password: 'maria’s long secret 1' });
  bob = await makeUser(t, { username: 'bob_b' });
  await updateUserProfile(db, ctx, {
    username: maria.username,
    avatarUrl: 'https://img.example/maria.png',
    gameName: 'Chess',
    gameUrl: 'https://chess.example/maria',
    tagLabel: 'Champion',
    tagKind: 'award',
    tagSlug: 'champion',
  });
  await grantPremium(db, ctx, { username: maria.username, period: 'month', days: 30 });
  shop = await makeClient(t, { name: 'Maria’s shop', wallet: true, siteUrl: 'https://shop.example' });
  const exchanged = await exchangeCode(
    t.app,
    shop,
    await mintCode(t, shop, maria, { scopes: ['openid', 'profile', 'email', 'wallet', 'offline_access'] }),
  );
  expect(exchanged.statusCode, exchanged.body).toBe(200);
  tokens = exchanged.json();
  await credit(db, ctx, { username: maria.username, amount: 50, description: 'Top-up' });
  const charged = await t.app.inject({
    method: 'POST',
    url: '/api/v1/wallet/charge',
    headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
    payload: JSON.stringify({
      amount: 12.5,
      currency: 'COIN',
      description: 'A chess set',
      idempotency_key: 'k-1',
    }),
  });
  expect(charged.statusCode, charged.body).toBe(201);
  phone = await signInPhone((await makeOfficialApp(t)).clientId, maria);
  // Bob's failed sign-in with Maria's name: an event about her. Bob's own sign-in: not about her.
  await new Browser(t.app).submit('/signin', '/signin', { username: maria.username, password: 'wrong one!' });
  await signedIn(bob);
});
afterAll(() => t.close());

describe('the account page', () => {
  it('ends with "Your data" (export) and "Danger zone" (delete)', async () => {
    const browser = await signedIn(maria);
    for (const [lang, data, danger] of [
      ['en', 'Your data', 'Danger zone'],
      ['ru', 'Ваши данные', 'Опасная зона'],
    ] as const) {
      const page = await browser.get(`/account?lang=${lang}`);
      expect(page.statusCode).toBe(200);
      const tail = page.body.slice(page.body.indexOf('action="/signout"'));
      expect(tail).toContain(`<h2 id="data-heading">${data}</h2>`);
      expect(tail).toContain('href="/account/export"');
      expect(tail).toContain(`<h2 id="danger-heading">${danger}</h2>`);
      expect(tail).toContain('href="/account/delete"');
    }
  });
});

describe('/account/export', () => {
  it('explains the download in English and Russian, with a form carrying the CSRF token', async () => {
    const browser = await signedIn(maria);
    const page = await browser.get('/account/export');
    expect(page.statusCode).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<title>Download your data · idp</title>');
    expect(page.body).toContain('wallet balance');
    expect(hiddenFields(page.body, '/account/export').csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const russian = await browser.get('/account/export?lang=ru');
    expect(russian.body).toContain('<h1>Скачать ваши данные</h1>');
    expect(russian.body).toContain('баланс кошелька');
  });

  it('needs a session: without one the page and the form send the browser to sign in', async () => {
    const stranger = new Browser(t.app);
    const page = await stranger.get('/account/export');
    expect(page.statusCode).toBe(302);
    expect(page.headers.location).toBe('/signin?return_to=/account');
    // With a CSRF token of its own, but no session: no download.
    const signInPage = await stranger.get('/signin');
    const res = await stranger.post('/account/export', {
      csrf_token: hiddenFields(signInPage.body, '/signin').csrf_token ?? '',
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/signin?return_to=/account');
    expect(res.headers['content-disposition']).toBeUndefined();
  });

  it('needs the CSRF token: without it, the form-expired page and no download', async () => {
    const browser = await signedIn(maria);
    const before = (await listAuditEventsAbout(t.database.db, maria)).length;
    const forms: Array<Record<string, string>> = [{}, { csrf_token: 'x'.repeat(43) }];
    for (const form of forms) {
      const res = await browser.post('/account/export', form);
      expect(res.statusCode).toBe(403);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['content-disposition']).toBeUndefined();
    }
    expect(await listAuditEventsAbout(t.database.db, maria)).toHaveLength(before);
  });

  it('downloads every part of what is stored about the user, and no secret or hash', async () => {
    const browser = await signedIn(maria);
    const res = await browser.submit('/account/export', '/account/export', {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['content-disposition']).toBe('attachment; filename="idp-export-maria_m.json"');
    expect(res.headers['cache-control']).toBe('no-store');
    const data = res.json();

    expect(data.profile).toEqual({
      id: maria.id,
      username: 'maria_m',
      display_name: 'Display maria_m',
      email: 'maria_m@example.com',
      email_verified: true,
      verification_level: 1,
      avatar_url: 'https://img.example/maria.png',
      game_name: 'Chess',
      game_url: 'https://chess.example/maria',
      tag_label: 'Champion',
      tag_kind: 'award',
      tag_slug: 'champion',
      disabled_at: null,
      deleted_at: null,
      created_at: '2026-06-01T12:00:00.000Z',
      updated_at: '2026-06-01T12:00:00.000Z',
    });
    expect(data.premium_periods).toEqual([
      {
        billing_period: 'month',
        starts_at: '2026-06-01T12:00:00.000Z',
        ends_at: '2026-07-01T12:00:00.000Z',
        created_at: '2026-06-01T12:00:00.000Z',
      },
    ]);
    expect(data.apps).toEqual([
      expect.objectContaining({
        client_id: shop.clientId,
        name: 'Maria’s shop',
        site_url: 'https://shop.example',
        scopes: expect.arrayContaining(['openid', 'wallet']),
        allowed_at: '2026-06-01T12:00:00.000Z',
      }),
    ]);
    expect(data.grants).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          client_id: shop.clientId,
          client_name: 'Maria’s shop',
          scopes: expect.arrayContaining(['wallet']),
        }),
      ]),
    );
    expect(data.grants).toHaveLength(2); // the shop's, and the phone's
    expect(data.devices).toEqual([
      {
        label: expect.stringContaining('MariaPhone'),
        signed_in_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    expect(data.wallet).toEqual({
      currency: 'COIN',
      balance: 37.5,
      entries: [
        expect.objectContaining({
          type: 'credit',
          amount: 50,
          balance_after: 50,
          description: 'Top-up',
          client: null,
        }),
        expect.objectContaining({
          type: 'charge',
          amount: 12.5,
          balance_after: 37.5,
          description: 'A chess set',
          client: { client_id: shop.clientId, name: 'Maria’s shop' },
        }),
      ],
    });
    expect(data.browser_sessions.length).toBeGreaterThanOrEqual(2);
    expect(data.browser_sessions[0]).toEqual({
      signed_in_at: expect.any(String),
      created_at: expect.any(String),
      expires_at: expect.any(String),
      user_agent: 'lightMyRequest',
      ip: '127.0.0.1',
    });
    const actions = data.audit_events.map((event: { action: string }) => event.action);
    expect(actions).toEqual(
      expect.arrayContaining([
        'sign_in',
        'sign_in_failed',
        'wallet_charged',
        'device_signed_in',
        'account_exported',
      ]),
    );
    // Bob's own sign-in is not about Maria.
    expect(data.audit_events.some((event: { subject: string }) => event.subject === `user:${bob.id}`)).toBe(
      false,
    );

    const secrets = [
      tokens.access_token,
      tokens.refresh_token,
      phone.accessToken,
      phone.refreshToken,
      phone.publicKey,
      shop.clientSecret,
      maria.password,
      (await findCredentials(t.database.db, maria.username))?.passwordHash as string,
      (await userRow(maria.id)).username_skeleton as string,
      (
        await t.database.db
          .selectFrom('client_secrets')
          .innerJoin('clients', 'clients.id', 'client_secrets.client_pk')
          .select('client_secrets.secret_hash')
          .where('clients.client_id', '=', shop.clientId)
          .executeTakeFirstOrThrow()
      ).secret_hash,
      ...[...browser.cookies.values()],
    ];
    const hashes = secrets.map(hashSecret);
    const stored = await t.database.db.selectFrom('browser_sessions').select('id_hash').execute();
    const all = [...secrets, ...hashes, ...stored.map((row) => row.id_hash)];
    expect(usernameSkeleton('maria_m')).toBe('rnaria_rn');
    for (const secret of all) expect(secret.length).toBeGreaterThanOrEqual(8);
    const values = strings(data);
    for (const secret of all)
      for (const value of values) expect(value.includes(secret), `${value} contains a secret`).toBe(false);
    expect(res.body).not.toMatch(/hash|secret|password|skeleton|public_key|idempotency/i);
  });
});

describe('/account/export of an account with passkeys', () => {
  it('lists each passkey: its name, when it was added and last used, never its credential or key', async () => {
    const pia = await makeUser(t, { username: 'pia_p' });
    // Signed in before the passkeys are added: with them, a password alone no longer signs in.
    const browser = await signedIn(pia);
    const { db } = depsOf(t);
    const added = async (name: string, at: string) =>
      (await insertPasskey(db, {
        userId: pia.id,
        credentialId: `credential-${name.replaceAll(' ', '-')}`,
        publicKey: `pQECAyYgASFYIP${name.length}KEYKEYKEYKEYKEYKEYKEYKEYKEYKEYKEY`,
        counter: 0,
        transports: ['internal'],
        aaguid: '00000000-0000-0000-0000-000000000000',
        backupEligible: true,
        backedUp: true,
        name,
        createdAt: new Date(at),
      })) as Passkey;
    const laptop = await added('Work laptop', '2026-05-02T08:00:00Z');
    const phonePasskey = await added('Phone', '2026-05-10T09:30:00Z');
    await recordPasskeyUse(db, phonePasskey.id, {
      counter: 3,
      backedUp: true,
      at: new Date('2026-05-31T18:45:00Z'),
    });

    const page = await browser.get('/account/export');
    expect(page.body).toContain(
      'your passkeys: the name of each, when it was added and when it was last used;',
    );
    const russian = await browser.get('/account/export?lang=ru');
    expect(russian.body).toContain('ваши ключи доступа: название каждого');

    const res = await browser.submit('/account/export', '/account/export', {});
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().passkeys).toEqual([
      { name: 'Work laptop', created_at: '2026-05-02T08:00:00.000Z', last_used_at: null },
      { name: 'Phone', created_at: '2026-05-10T09:30:00.000Z', last_used_at: '2026-05-31T18:45:00.000Z' },
    ]);
    for (const stored of [laptop, phonePasskey]) {
      expect(res.body).not.toContain(stored.credentialId);
      expect(res.body).not.toContain(stored.publicKey);
    }
    // An account without passkeys exports an empty list.
    const none = await (await signedIn(bob)).submit('/account/export', '/account/export', {});
    expect(none.json().passkeys).toEqual([]);
  });
});

describe('/account/delete', () => {
  it('shows the danger zone page: what happens, and the password to confirm it, in English and Russian', async () => {
    const browser = await signedIn(maria);
    const page = await browser.get('/account/delete');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>Delete your account · idp</title>');
    expect(page.body).toContain('Your username stays reserved');
    expect(page.body).toMatch(
      /<input id="password" name="password" type="password" autocomplete="current-password" required/,
    );
    expect(hiddenFields(page.body, '/account/delete').csrf_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const russian = await browser.get('/account/delete?lang=ru');
    expect(russian.body).toContain('<h1>Удаление аккаунта</h1>');
    expect(russian.body).toContain('Удалить мой аккаунт');
  });

  it('deletes nothing without a session, without the CSRF token, or with a wrong or empty password', async () => {
    const before = await userRow(maria.id);
    // No session (a CSRF token of the sign-in page's): sent to sign in.
    const stranger = new Browser(t.app);
    const signInPage = await stranger.get('/signin');
    const anonymous = await stranger.post('/account/delete', {
      csrf_token: hiddenFields(signInPage.body, '/signin').csrf_token ?? '',
      password: maria.password,
    });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/signin?return_to=/account');

    const browser = await signedIn(maria);
    await browser.get('/account/delete');
    const forged = await browser.post('/account/delete', { password: maria.password });
    expect(forged.statusCode).toBe(403);
    expect(forged.body).toContain('This form has expired');

    const wrong = await browser.submit('/account/delete', '/account/delete', {
      password: 'not her password',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('Wrong password. Your account was not deleted.');
    expect(wrong.body).not.toContain('not her password');
    const empty = await browser.submit('/account/delete', '/account/delete', { password: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.body).toContain('Enter your password to confirm.');

    expect(await userRow(maria.id)).toEqual(before);
    expect((await userinfo(tokens.access_token)).statusCode).toBe(200);
    expect((await browser.get('/account')).statusCode).toBe(200);
  });

  it('with the password: ends everything at once, keeps the username and the ledger, and audits it', async () => {
    const { db } = depsOf(t);
    const other = await signedIn(maria);
    const browser = await signedIn(maria);
    const skeleton = (await userRow(maria.id)).username_skeleton;
    const res = await browser.submit('/account/delete', '/account/delete', { password: maria.password });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/account/deleted');
    expect(browser.cookies.has('idp_session')).toBe(false);
    const deleted = await browser.get('/account/deleted');
    expect(deleted.statusCode).toBe(200);
    expect(deleted.body).toContain('Your account has been deleted');
    expect((await browser.get('/account/deleted?lang=ru')).body).toContain('Ваш аккаунт удалён');

    // Signed out everywhere: this browser and the other one.
    for (const each of [browser, other]) expect((await each.get('/account')).statusCode).toBe(302);
    expect(
      await db.selectFrom('browser_sessions').where('user_id', '=', maria.id).selectAll().execute(),
    ).toEqual([]);

    // Every token: invalid_token; the refresh tokens mint nothing.
    await t.sync();
    expectApiError(await userinfo(tokens.access_token), 401, 'invalid_token');
    expectApiError(await userinfo(phone.accessToken), 401, 'invalid_token');
    const refreshed = await postForm(
      t.app,
      '/api/v1/oauth/token',
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      { authorization: basic(shop) },
    );
    expectApiError(refreshed, 400, 'invalid_grant');

    // Sign-in: the answer to a wrong password, not "disabled".
    const signIn = await new Browser(t.app).submit('/signin', '/signin', {
      username: maria.username,
      password: maria.password,
    });
    const wrongForBob = await new Browser(t.app).submit('/signin', '/signin', {
      username: bob.username,
      password: 'not bob’s password',
    });
    expect(signIn.statusCode).toBe(401);
    expect(signIn.body).toContain('Wrong username or password.');
    expect(signIn.body).not.toContain('disabled');
    const page = (body: string) => body.replace(/name="csrf_token" value="[^"]*"/, '');
    expect(page(signIn.body)).toBe(page(wrongForBob.body).replaceAll(bob.username, maria.username));

    // Gone from search, by username and by display name.
    for (const q of ['maria', 'Display maria']) {
      const search = await t.app.inject({
        method: 'GET',
        url: `/api/users/search?q=${encodeURIComponent(q)}`,
      });
      expect(search.statusCode).toBe(200);
      expect(search.json().results).toEqual([]);
    }

    // The username stays taken, whatever its case.
    for (const username of ['maria_m', 'MARIA_M']) {
      const signUp = await new Browser(t.app).submit('/signup', '/signup', {
        username,
        password: 'a brand new password',
        email: '',
      });
      expect(signUp.statusCode).toBe(400);
      expect(signUp.body).toContain('This username is already taken');
    }

    // The row stays with its username and skeleton, and nothing personal.
    const row = await userRow(maria.id);
    expect(row).toMatchObject({
      username: 'maria_m',
      username_skeleton: skeleton,
      email: null,
      email_verified: false,
      display_name: null,
      verification_level: 0,
      avatar_url: null,
      game_name: null,
      game_url: null,
      tag_label: null,
      tag_kind: null,
      tag_slug: null,
      deleted_at: t.clock.now(),
      disabled_at: t.clock.now(),
    });
    expect(row.password_hash).not.toMatch(/^\$argon2/);
    expect(await findCredentials(db, maria.username)).toBeUndefined();
    expect(await listConsentsOfUser(db, maria.id)).toEqual([]);
    expect(await listPeriodsOfUser(db, maria.id)).toEqual([]);
    const live = await db
      .selectFrom('grants')
      .where('user_id', '=', maria.id)
      .where('revoked_at', 'is', null)
      .select('id')
      .execute();
    expect(live).toEqual([]);
    const devices = await db
      .selectFrom('mobile_devices')
      .where('user_id', '=', maria.id)
      .select('revoked_at')
      .execute();
    expect(devices.map((device) => device.revoked_at)).toEqual([t.clock.now()]);

    // The books: entries kept, and the invariant holds.
    expect((await listEntriesOfUser(db, maria.id)).map((entry) => entry.amount)).toEqual([5000, 1250]);
    expect(await verifyLedger(db)).toMatchObject({ ok: true, mismatches: [] });

    // Audited, in the log with the earlier export.
    const events = await listAuditEventsAbout(db, maria);
    const deletion = events.find((event) => event.action === 'account_deleted');
    expect(deletion).toMatchObject({
      actor: `user:${maria.id}`,
      subject: `user:${maria.id}`,
      ip: '127.0.0.1',
      details: { via: 'account page', grants_revoked: 2, consents_deleted: 1, premium_periods_deleted: 1 },
    });
    expect(events.some((event) => event.action === 'account_exported')).toBe(true);

    // Bob is untouched.
    expect((await findUserByUsername(db, bob.username))?.deletedAt).toBeNull();
    expect((await signedIn(bob)).cookies.has('idp_session')).toBe(true);
  });

  it('takes the account’s e-mail and reset links and its messages with it (they carry the address)', async () => {
    const { db } = depsOf(t);
    const browser = new Browser(t.app);
    const password = 'a password of her own';
    const signUp = await browser.submit('/signup', '/signup', {
      username: 'leaving_soon',
      password,
      email: 'leaving@example.org',
    });
    expect(signUp.statusCode).toBe(303);
    const user = await findUserByUsername(db, 'leaving_soon');
    const rowsOf = async (userId: number) => ({
      links: await db.selectFrom('email_verifications').where('user_id', '=', userId).select('id').execute(),
      mail: await db.selectFrom('mail_outbox').where('user_id', '=', userId).select('id').execute(),
      resets: await db.selectFrom('password_resets').where('user_id', '=', userId).select('id').execute(),
    });
    await new Browser(t.app).submit('/password/forgot', '/password/forgot', { login: 'leaving_soon' });
    await t.app.afterResponse.idle();
    const before = await rowsOf(user?.id as number);
    expect(before.links).toHaveLength(1);
    expect(before.resets).toHaveLength(1);
    expect(before.mail).toHaveLength(2);
    const res = await browser.submit('/account/delete', '/account/delete', { password });
    expect(res.headers.location).toBe('/account/deleted');
    expect(await rowsOf(user?.id as number)).toEqual({ links: [], mail: [], resets: [] });
  });

  it('cannot be undone by an operator: `idp users enable` refuses a deleted account', async () => {
    const { db, ctx } = depsOf(t);
    await expect(enableUser(db, ctx, { username: maria.username })).rejects.toThrow(/deleted/);
    await expect(
      updateUserProfile(db, ctx, { username: maria.username, displayName: 'Back again' }),
    ).rejects.toThrow(/deleted/);
    const row = await userRow(maria.id);
    expect(row.disabled_at).not.toBeNull();
    expect(row.display_name).toBeNull();
    // And the database holds it too: a deleted account is always disabled.
    await expect(
      db.updateTable('users').set({ disabled_at: null }).where('id', '=', maria.id).execute(),
    ).rejects.toThrow();
  });
});

describe('both forms count against the sign-in limit, per IP', () => {
  let limited: TestApp;
  beforeAll(async () => {
    limited = await createTestApp({
      env: { RATE_LIMIT_SIGNIN_PER_MIN: '3', RATE_LIMIT_PUBLIC_PER_MIN: '100' },
    });
  });
  afterAll(() => limited.close());

  it.each(['/account/export', '/account/delete'])('%s', async (path) => {
    const post = () =>
      limited.app.inject({
        method: 'POST',
        url: path,
        remoteAddress: path === '/account/export' ? '10.9.8.7' : '10.9.8.8',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: 'csrf_token=x&password=something',
      });
    for (let i = 0; i < 3; i++) expect((await post()).statusCode).toBe(403);
    const over = await post();
    expect(over.statusCode).toBe(429);
    expect(over.headers['content-type']).toMatch(/^text\/html/);
    expect(Number(over.headers['retry-after'])).toBeGreaterThan(0);
  });
});
