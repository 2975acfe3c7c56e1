import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findClientByClientId } from '../../src/modules/clients/clients.repository.js';
import { addRollups } from '../../src/modules/rollups/rollups.repository.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { Browser, unescapeHtml } from '../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../helpers/console.js';
import { usingPostgres } from '../helpers/database.js';
import { makeUser, mintCode, type TestClient } from '../helpers/factories.js';
import { exchangeCode } from '../helpers/http.js';

/*
 * The console's applications as an owner drives them through app.inject: the list and its search,
 * registration with the secret shown once, the edit of every setting with the CLI's validation
 * (problems by field, never a 500), rotation with an overlap, disable and enable, each with its
 * audit event; and a change refused without a recent second-factor proof.
 */
let t: TestApp;
let owner: ConsoleSession;
let ownerId = 0;

beforeAll(async () => {
  // A console session that outlives the hour the overlap test moves the clock on.
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '86400' } });
  const operator = await makeOperator(t, 'owner', { username: 'olga_owner' });
  ownerId = operator.user.id;
  owner = await enterConsole(t, operator);
});
afterAll(() => t.close());

const text = (body: string) => unescapeHtml(body.replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');
const secretOf = (body: string) => /id="client-secret"[^>]*value="(sk_[^"]+)"/.exec(body)?.[1];
const clientIdOf = (body: string) => /<code>(pk_[^<]+)<\/code>/.exec(body)?.[1] ?? '';
const tokenStatus = async (client: TestClient) =>
  (await exchangeCode(t.app, client, await mintCode(t, client, await makeUser(t)))).statusCode;
const auditOf = (clientId: string) =>
  t.database.db
    .selectFrom('audit_events')
    .select(['actor', 'action', 'details'])
    .where('subject', '=', `client:${clientId}`)
    .orderBy('id')
    .execute();

const validForm = {
  name: 'Book Shop',
  site_url: 'https://books.example',
  redirect_uris: 'https://books.example/cb\nhttps://books.example/cb2',
  post_logout_redirect_uris: '',
  backchannel_logout_uri: '',
  logo_uri: '',
  id_token_alg: 'RS256',
};

describe(`the console's applications on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  let created: TestClient;

  it('sends a browser without a session to sign in', async () => {
    const res = await new Browser(t.app).get('/admin/clients');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Fclients');
  });

  it('registers an application and shows its secret this once', async () => {
    const form = await owner.get('/admin/clients/new');
    expect(form.statusCode).toBe(200);
    const res = await owner.post('/admin/clients', { ...validForm, wallet: '1' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.headers['cache-control']).toBe('no-store');
    const secret = secretOf(res.body);
    expect(secret).toMatch(/^sk_[A-Za-z0-9_-]{43}$/);
    const clientId = clientIdOf(res.body);
    created = { clientId, clientSecret: secret as string, redirectUri: 'https://books.example/cb' };
    expect(await tokenStatus(created)).toBe(200);

    const page = await owner.get(`/admin/clients/${clientId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(secret);
    expect(text(page.body)).toContain('https://books.example/cb, https://books.example/cb2');
    const [event] = await auditOf(clientId);
    expect(event).toMatchObject({
      actor: `operator:${ownerId}`,
      action: 'client_created',
      details: { operator: 'olga_owner', role: 'owner', after: { name: 'Book Shop', wallet: true } },
    });
    expect(JSON.stringify(event)).not.toContain(secret);
  });

  it('registers a public client without a secret, and offers it no rotation', async () => {
    const res = await owner.post('/admin/clients', { ...validForm, name: 'Pocket App', is_public: '1' });
    expect(res.statusCode).toBe(201);
    expect(secretOf(res.body)).toBeUndefined();
    expect(text(res.body)).toContain('A public client has no secret');
    const page = await owner.get(`/admin/clients/${clientIdOf(res.body)}`);
    expect(page.body).not.toContain('/rotate-secret"');
    expect(
      (await owner.post(`/admin/clients/${clientIdOf(res.body)}/rotate-secret`, { overlap: '0' })).statusCode,
    ).toBe(400);
  });

  it('registers a device-only application without redirect URIs, and its page says it has none', async () => {
    const device = { ...validForm, name: 'Lantern TV', redirect_uris: '', is_public: '1' };
    const refused = await owner.post('/admin/clients', device);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(
      /id="redirectUris-error">Not accepted: <span lang="en">at least one redirect URI is required, unless the client may use the device grant/,
    );
    const res = await owner.post('/admin/clients', { ...device, device_grant: '1' });
    expect(res.statusCode, res.body).toBe(201);
    const clientId = clientIdOf(res.body);
    expect(await findClientByClientId(t.database.db, clientId)).toMatchObject({
      redirectUris: [],
      deviceGrant: true,
    });
    const page = await owner.get(`/admin/clients/${clientId}`);
    expect(page.statusCode).toBe(200);
    expect(text(page.body)).toContain('Redirect URIs none Post-logout redirect URIs none');
  });

  it('refuses a registration field by field, keeps what was typed, and registers nothing', async () => {
    const before = (await t.database.db.selectFrom('clients').select('id').execute()).length;
    const res = await owner.post('/admin/clients', {
      ...validForm,
      name: 'Broken <b>',
      site_url: 'ftp://books.example',
      redirect_uris: 'http://books.example/cb',
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('id="siteUrl-error"');
    expect(res.body).toContain('id="redirectUris-error"');
    expect(res.body).not.toContain('id="name-error"');
    expect(res.body).toContain('value="Broken &lt;b&gt;"');
    expect(res.body).toMatch(
      /id="siteUrl"[^>]*aria-describedby="siteUrl-hint siteUrl-error"[^>]*aria-invalid="true"/,
    );
    expect((await t.database.db.selectFrom('clients').select('id').execute()).length).toBe(before);
  });

  it('refuses an invalid edit by field (never a 500) and then saves a valid one with its audit event', async () => {
    const path = `/admin/clients/${created.clientId}`;
    const current = { ...validForm, wallet: '1' };
    const bad = await owner.post(path, { ...current, redirect_uris: 'javascript:alert(1)' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="redirectUris-error"');
    expect(bad.body).toContain('javascript:alert(1)</textarea>');
    const alg = await owner.post(path, { ...current, id_token_alg: 'none' });
    expect(alg.statusCode).toBe(400);
    expect(alg.body).toContain('id="idTokenAlg-error"');
    expect((await findClientByClientId(t.database.db, created.clientId))?.redirectUris).toHaveLength(2);

    const good = await owner.post(path, {
      name: 'Book Shop Two',
      site_url: 'https://books2.example',
      redirect_uris: 'https://books.example/cb\nhttps://books2.example/cb',
      post_logout_redirect_uris: 'https://books2.example/bye',
      backchannel_logout_uri: 'https://books2.example/logout',
      logo_uri: 'https://books2.example/logo.png',
      id_token_alg: 'ES256',
      require_dpop: '1',
      require_par: '1',
      device_grant: '1',
      official_mobile: '1',
    });
    expect(good.statusCode, good.body).toBe(303);
    expect(good.headers.location).toBe(`${path}?done=updated`);
    const after = await findClientByClientId(t.database.db, created.clientId);
    expect(after).toMatchObject({
      name: 'Book Shop Two',
      siteUrl: 'https://books2.example',
      redirectUris: ['https://books.example/cb', 'https://books2.example/cb'],
      postLogoutRedirectUris: ['https://books2.example/bye'],
      backchannelLogoutUri: 'https://books2.example/logout',
      logoUri: 'https://books2.example/logo.png',
      idTokenAlg: 'ES256',
      requireDpop: true,
      requirePar: true,
      deviceGrant: true,
      wallet: false,
      officialMobile: true,
    });
    const shown = await owner.get(`${path}?done=updated`);
    expect(shown.body).toMatch(/role="status">The settings were saved\./);
    expect(shown.body).toMatch(/id="deviceGrant" name="device_grant" type="checkbox" value="1" checked/);
    expect(shown.body).toContain('<label for="deviceGrant">Device sign-in (RFC 8628)</label>');
    const edit = (await auditOf(created.clientId)).find((e) => e.action === 'client_updated');
    expect(edit?.details).toMatchObject({
      operator: 'olga_owner',
      before: { name: 'Book Shop', wallet: true, id_token_signed_response_alg: 'RS256' },
      after: {
        name: 'Book Shop Two',
        wallet: false,
        id_token_signed_response_alg: 'ES256',
        device_grant: true,
      },
    });
    // Back to what the token tests below need.
    const back = await owner.post(path, { ...validForm, name: 'Book Shop Two', id_token_alg: 'RS256' });
    expect(back.headers.location).toBe(`${path}?done=updated`);
    const same = await owner.post(path, { ...validForm, name: 'Book Shop Two', id_token_alg: 'RS256' });
    expect(same.headers.location).toBe(`${path}?done=unchanged`);
    // A box left unticked turns the device grant off again.
    expect((await findClientByClientId(t.database.db, created.clientId))?.deviceGrant).toBe(false);
  });

  it('rotates the secret with an overlap: both work until it ends, the new one shown once', async () => {
    const path = `/admin/clients/${created.clientId}`;
    const bad = await owner.post(`${path}/rotate-secret`, { overlap: 'forever' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="overlap-error"');
    expect(await tokenStatus(created)).toBe(200);

    const res = await owner.post(`${path}/rotate-secret`, { overlap: '3600' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    const renewed = { ...created, clientSecret: secretOf(res.body) as string };
    expect(renewed.clientSecret).toMatch(/^sk_/);
    // To the minute and in UTC: an overlap may be an hour.
    const until = new Intl.DateTimeFormat('en', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' });
    expect(text(res.body)).toContain(
      `The old secret works until ${until.format(t.clock.now().getTime() + 3600_000)} UTC.`,
    );
    await t.sync();
    expect(await tokenStatus(created)).toBe(200);
    expect(await tokenStatus(renewed)).toBe(200);
    expect((await owner.get(path)).body).not.toContain(renewed.clientSecret);
    const during = text((await owner.get(path)).body);
    expect(during).toContain('The previous secret still works until');
    // Both valid secrets listed by their last four characters, the newest first; never a secret.
    const inUntil = `works until ${until.format(t.clock.now().getTime() + 3600_000)} UTC`;
    expect(during).toMatch(
      new RegExp(
        `…${literally(renewed.clientSecret.slice(-4))}, made [\\s\\S]+?, no expiry[\\s\\S]*…${literally(created.clientSecret.slice(-4))}, made [\\s\\S]+?, ${inUntil}`,
      ),
    );
    expect(during).not.toContain(created.clientSecret);
    t.clock.advance(3600_000);
    expect(text((await owner.get(path)).body)).not.toContain(`…${created.clientSecret.slice(-4)},`);
    expect(await tokenStatus(created)).toBe(401);
    expect(await tokenStatus(renewed)).toBe(200);
    const rotation = (await auditOf(created.clientId)).find((e) => e.action === 'client_secret_rotated');
    expect(rotation?.details).toMatchObject({ operator: 'olga_owner', overlap_seconds: 3600 });
    expect(JSON.stringify(rotation)).not.toContain(renewed.clientSecret);

    await owner.reauthenticate();
    const now = await owner.post(`${path}/rotate-secret`, { overlap: '0' });
    const newest = { ...created, clientSecret: secretOf(now.body) as string };
    expect(text(now.body)).toContain('The old secret no longer works.');
    await t.sync();
    expect(await tokenStatus(renewed)).toBe(401);
    expect(await tokenStatus(newest)).toBe(200);
    created = newest;
  });

  it('disables the application (its secret refused, its tokens ended) and enables it again', async () => {
    const path = `/admin/clients/${created.clientId}`;
    const user = await makeUser(t);
    const tokens = (await exchangeCode(t.app, created, await mintCode(t, created, user))).json();
    const off = await owner.post(`${path}/disable`);
    expect(off.statusCode).toBe(303);
    expect(off.headers.location).toBe(`${path}?done=disabled`);
    expect(await tokenStatus(created)).toBe(401);
    const userinfo = await t.app.inject({
      method: 'GET',
      url: '/api/v1/oauth/userinfo',
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.statusCode).toBe(401);
    const page = await owner.get(`${path}?done=disabled`);
    expect(page.body).toContain(`action="${path}/enable"`);
    const on = await owner.post(`${path}/enable`);
    expect(on.headers.location).toBe(`${path}?done=enabled`);
    expect(await tokenStatus(created)).toBe(200);
    const actions = (await auditOf(created.clientId)).map((e) => e.action);
    expect(actions.slice(-2)).toEqual(['client_disabled', 'client_enabled']);
  });

  it("shows the application's tokens per day from the rollups, and no other application's", async () => {
    const minute = new Date(Math.floor(t.clock.now().getTime() / 60_000) * 60_000);
    const dayBefore = new Date(minute.getTime() - 24 * 3600_000);
    await addRollups(t.database.db, [
      { minute, name: 'tokens_issued', key: created.clientId, value: 7 },
      { minute: new Date(minute.getTime() - 60_000), name: 'tokens_issued', key: created.clientId, value: 5 },
      { minute: dayBefore, name: 'tokens_issued', key: created.clientId, value: 3 },
      { minute, name: 'tokens_issued', key: 'pk_someone_else', value: 100 },
    ]);
    const html = (await owner.get(`/admin/clients/${created.clientId}`)).body;
    // The dashboard's chart (uPlot and its script, from this origin) draws the same days.
    expect(html).toContain('<script src="/assets/uplot.iife.min.js');
    const chart = JSON.parse(unescapeHtml(/data-chart="([^"]+)"/.exec(html)?.[1] ?? '{}'));
    expect(chart.times).toHaveLength(14);
    expect(chart.series[0].values.slice(-2)).toEqual([3, 12]);
    const page = text(html);
    const day = (at: Date) => at.toISOString().slice(0, 10);
    expect(page).toContain(`Tokens issued per day, last 14 days (UTC)`);
    // The test's fixed clock stands at 13:xx UTC: both minutes are on one day.
    expect(page).toMatch(new RegExp(`${day(minute)} 12 ${day(dayBefore)} 3 `));
  });

  it('answers an unknown or malformed client id with 404 or 400, never a 500', async () => {
    expect((await owner.get('/admin/clients/pk_unknown')).statusCode).toBe(404);
    expect((await owner.post('/admin/clients/pk_unknown', validForm)).statusCode).toBe(404);
    expect((await owner.post('/admin/clients/pk_unknown/disable')).statusCode).toBe(404);
    // Fastify refuses a path parameter over 100 characters before any route (414).
    expect((await owner.get(`/admin/clients/${'x'.repeat(300)}`)).statusCode).toBe(414);
    expect((await owner.get(`/admin/clients/${encodeURIComponent('<x>%00')}`)).statusCode).toBe(404);
  });

  it('in Russian, names the fields and shows the problems beside them', async () => {
    const res = await owner.get(`/admin/clients/new?lang=ru`);
    expect(res.statusCode).toBe(200);
    expect(text(res.body)).toContain('Адреса возврата (redirect URI)');
    expect(res.body).toContain('<label for="deviceGrant">Вход на устройствах (RFC 8628)</label>');
    const refused = await owner.post('/admin/clients?lang=ru', { ...validForm, site_url: 'nope' });
    expect(refused.statusCode).toBe(400);
    expect(text(refused.body)).toContain('Некоторые поля нужно исправить');
    expect(refused.body).toMatch(
      /id="siteUrl-error">Не принято: <span lang="ru">Адрес сайта — абсолютный адрес https/,
    );
  });

  it('asks for a recent second-factor proof before a change, and changes nothing until then', async () => {
    t.clock.advance((t.config.ADMIN_REAUTH_MAX_AGE_SECONDS + 1) * 1000);
    const path = `/admin/clients/${created.clientId}`;
    const res = await owner.post(`${path}/disable`);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/admin/reauthenticate?return_to=${encodeURIComponent(path)}`);
    expect((await findClientByClientId(t.database.db, created.clientId))?.disabledAt).toBeNull();
    const create = await owner.post('/admin/clients', validForm);
    expect(create.headers.location).toBe(
      `/admin/reauthenticate?return_to=${encodeURIComponent('/admin/clients/new')}`,
    );
    await owner.reauthenticate();
    expect((await owner.post(`${path}/disable`)).statusCode).toBe(303);
    expect((await findClientByClientId(t.database.db, created.clientId))?.disabledAt).not.toBeNull();
  });
});

/** `value` matched literally in a RegExp. */
function literally(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
