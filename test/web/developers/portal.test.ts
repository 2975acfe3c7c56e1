import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser, hiddenFields } from '../../helpers/browser.js';
import { usingPostgres } from '../../helpers/database.js';
import { createApp, shownValue, signedIn, textOf, validApp } from './portal-helpers.js';

/*
 * The developer portal's entry, list and creation through app.inject: who may enter (signed in,
 * e-mail confirmed), the list of the account's own applications with their status, creation with
 * the CLI's validation and its problems beside each field in English and Russian, the secret
 * shown once, the CSRF check, and CLIENT_REGISTRATION=closed.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe(`the developer portal on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('sends a browser without a session to sign in, and back to the page it asked for', async () => {
    const browser = new Browser(t.app);
    const list = await browser.get('/developers');
    expect(list.statusCode).toBe(302);
    expect(list.headers.location).toBe('/signin?return_to=%2Fdevelopers');
    const page = await browser.get('/developers/apps/pk_x?done=updated');
    expect(page.headers.location).toBe(
      `/signin?return_to=${encodeURIComponent('/developers/apps/pk_x?done=updated')}`,
    );
  });

  it('answers a client_id longer than any with a page back to the portal, as the console does', async () => {
    const res = await new Browser(t.app).get(`/developers/apps/${'a'.repeat(300)}`);
    expect(res.statusCode).toBe(414);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('<a href="/developers">Back to the developer portal</a>');
  });

  it('asks an account without a confirmed e-mail address to confirm it first', async () => {
    const { browser } = await signedIn(t, { emailVerified: false });
    const res = await browser.get('/developers');
    expect(res.statusCode).toBe(403);
    expect(textOf(res.body)).toContain('Confirm your e-mail address first');
    expect(res.body).toContain('href="/account#email"');
    const ru = await browser.get('/developers?lang=ru');
    expect(textOf(ru.body)).toContain('Сначала подтвердите адрес почты');
    // Nor can it create anything.
    const posted = await browser.post('/developers/apps', { ...validApp });
    expect(posted.statusCode).toBe(403);
  });

  it('links to the portal from the account page', async () => {
    const { browser } = await signedIn(t);
    const account = await browser.get('/account');
    expect(account.body).toContain('href="/developers"');
  });

  it('creates an application: the secret shown once, then the list shows it awaiting approval', async () => {
    const { browser } = await signedIn(t);
    const empty = await browser.get('/developers');
    expect(empty.statusCode).toBe(200);
    expect(textOf(empty.body)).toContain('You have no applications yet.');
    expect(empty.headers['cache-control']).toBe('no-store');

    const { clientId, secret, body } = await createApp(browser);
    expect(clientId).toMatch(/^pk_/);
    expect(secret).toMatch(/^sk_/);
    expect(textOf(body)).toContain('only time the secret is shown');
    expect(body).toContain(
      'href="/.well-known/openid-configuration"'.replace('/.well', 'http://localhost:3000/.well'),
    );

    const list = await browser.get('/developers');
    expect(textOf(list.body)).toContain('Book Shop');
    expect(list.body).toContain(clientId);
    expect(textOf(list.body)).toContain('Awaiting approval');
    // The secret is never on any page again.
    expect(list.body).not.toContain(secret);
    const page = await browser.get(`/developers/apps/${clientId}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).not.toContain(secret);
    expect(textOf(page.body)).toContain(`…${secret.slice(-4)}`);
  });

  it('creates an application with every setting its form offers, and edits each of them', async () => {
    const { browser } = await signedIn(t);
    const every = {
      ...validApp,
      logo_uri: 'https://books.example/logo.png',
      post_logout_redirect_uris: 'https://books.example/bye\nhttps://books.example/bye2',
      backchannel_logout_uri: 'https://books.example/backchannel',
      id_token_alg: 'ES256',
      require_dpop: '1',
      require_par: '1',
    };
    const { clientId } = await createApp(browser, every);
    expect(await findClientByClientId(t.database.db, clientId)).toMatchObject({
      name: 'Book Shop',
      siteUrl: 'https://books.example',
      redirectUris: ['https://books.example/cb', 'https://books.example/cb2'],
      logoUri: 'https://books.example/logo.png',
      postLogoutRedirectUris: ['https://books.example/bye', 'https://books.example/bye2'],
      backchannelLogoutUri: 'https://books.example/backchannel',
      idTokenAlg: 'ES256',
      requireDpop: true,
      requirePar: true,
      isPublic: false,
    });
    const page = `/developers/apps/${clientId}`;
    const shown = await browser.get(page);
    expect(shown.body).toContain('value="https://books.example/logo.png"');
    expect(shown.body).toMatch(/<option value="ES256" selected>/);
    expect(shown.body).toMatch(/id="requireDpop"[^>]*checked/);

    const edited = await browser.submit(page, page, {
      ...validApp,
      site_url: 'https://shop.example',
      redirect_uris: 'https://shop.example/cb',
      logo_uri: 'https://shop.example/logo.png',
      post_logout_redirect_uris: 'https://shop.example/bye',
      backchannel_logout_uri: '',
      id_token_alg: 'EdDSA',
    });
    expect(edited.headers.location).toBe(`${page}?done=updated`);
    expect(await findClientByClientId(t.database.db, clientId)).toMatchObject({
      siteUrl: 'https://shop.example',
      redirectUris: ['https://shop.example/cb'],
      logoUri: 'https://shop.example/logo.png',
      postLogoutRedirectUris: ['https://shop.example/bye'],
      backchannelLogoutUri: null,
      idTokenAlg: 'EdDSA',
      requireDpop: false,
      requirePar: false,
    });
  });

  it('creates a public client without a secret', async () => {
    const { browser } = await signedIn(t);
    const res = await browser.submit('/developers/apps/new', '/developers/apps', {
      ...validApp,
      kind: 'public',
    });
    expect(res.statusCode).toBe(201);
    expect(shownValue(res.body, 'client-secret')).toBe('');
    expect(textOf(res.body)).toContain('A public client has no secret');
  });

  it('creates a device-only application without a redirect URI, which keeps its device sign-in', async () => {
    const { browser } = await signedIn(t);
    const device = { ...validApp, name: 'Lantern TV', redirect_uris: '', kind: 'public' };
    const refused = await browser.submit('/developers/apps/new', '/developers/apps', device);
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(
      /id="redirectUris-error"[^>]*>[^<]*<span lang="en">at least one redirect URI is required, unless the client may use the device grant \(RFC 8628\)/,
    );
    const ru = await browser.submit('/developers/apps/new?lang=ru', '/developers/apps', device);
    expect(textOf(ru.body)).toContain(
      'Нужен хотя бы один адрес возврата, если приложению не разрешён вход на устройствах (RFC 8628).',
    );

    const { clientId } = await createApp(browser, { ...device, device_grant: '1' });
    expect(await findClientByClientId(t.database.db, clientId)).toMatchObject({
      redirectUris: [],
      deviceGrant: true,
    });
    const page = `/developers/apps/${clientId}`;
    const shown = await browser.get(page);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toMatch(/id="deviceGrant"[^>]*checked/);
    // Device sign-in unticked while no redirect URI is left: refused beside its box (the browser
    // reads Russian since ?lang=ru).
    const unticked = await browser.submit(page, page, { ...device });
    expect(unticked.statusCode).toBe(400);
    expect(unticked.body).toMatch(
      /id="deviceGrant-error"[^>]*>[^<]*<span lang="ru">Без адресов возврата приложение входит только на устройствах: чтобы отключить этот вход, сначала добавьте адрес возврата\./,
    );
    const en = await browser.submit(`${page}?lang=en`, page, { ...device });
    expect(en.body).toMatch(
      /id="deviceGrant-error"[^>]*>[^<]*<span lang="en">a client without redirect URIs keeps the device grant: add a redirect URI to take the grant away/,
    );
    expect((await findClientByClientId(t.database.db, clientId))?.deviceGrant).toBe(true);
    const withUri = await browser.submit(page, page, {
      ...device,
      redirect_uris: 'https://books.example/cb',
    });
    expect(withUri.headers.location).toBe(`${page}?done=updated`);
    expect(await findClientByClientId(t.database.db, clientId)).toMatchObject({
      redirectUris: ['https://books.example/cb'],
      deviceGrant: false,
    });
  });

  it('refuses a form with problems, each beside its field, in English and in Russian', async () => {
    const { browser } = await signedIn(t);
    const bad = {
      ...validApp,
      name: '',
      site_url: 'ftp://x',
      redirect_uris: 'http://books.example/cb',
      logo_uri: 'not a url',
    };
    const en = await browser.submit('/developers/apps/new', '/developers/apps', bad);
    expect(en.statusCode).toBe(400);
    expect(en.body).toMatch(/id="name-error"[^>]*>[^<]*<span lang="en">name must not be empty/);
    expect(en.body).toContain('id="siteUrl-error"');
    expect(en.body).toContain('id="redirectUris-error"');
    expect(en.body).toContain('id="logoUri-error"');
    expect(en.body).toMatch(/id="redirectUris"[^>]*aria-invalid="true"/);
    // What was typed is kept.
    expect(en.body).toContain('http://books.example/cb</textarea>');

    const ru = await browser.submit('/developers/apps/new?lang=ru', '/developers/apps', bad);
    expect(ru.statusCode).toBe(400);
    expect(ru.body).toMatch(
      /id="name-error"[^>]*>Не принято: <span lang="ru">Название не может быть пустым\./,
    );
    expect(textOf(ru.body)).toContain('Адрес возврата «http://books.example/cb»: нужен https');
    const list = await browser.get('/developers');
    expect(textOf(list.body)).toContain('У вас пока нет приложений.');
  });

  it('refuses a form without the CSRF token of this browser', async () => {
    const { browser } = await signedIn(t);
    const res = await browser.post('/developers/apps', { ...validApp, csrf_token: 'x'.repeat(43) });
    expect(res.statusCode).toBe(403);
    const other = await signedIn(t);
    const token = hiddenFields(
      (await other.browser.get('/developers/apps/new')).body,
      '/developers/apps',
    ).csrf_token;
    const forged = await browser.post('/developers/apps', { ...validApp, csrf_token: token ?? '' });
    expect(forged.statusCode).toBe(403);
    expect(textOf((await browser.get('/developers')).body)).toContain('You have no applications yet.');
  });

  it('never lists nor shows another account’s application: a 404, as for one that does not exist', async () => {
    const alice = await signedIn(t);
    const { clientId } = await createApp(alice.browser, { name: 'Alice App' });
    const bob = await signedIn(t);
    expect(textOf((await bob.browser.get('/developers')).body)).not.toContain('Alice App');
    const page = await bob.browser.get(`/developers/apps/${clientId}`);
    expect(page.statusCode).toBe(404);
    const unknown = await bob.browser.get('/developers/apps/pk_nothing');
    expect(unknown.statusCode).toBe(404);
    const change = await bob.browser.submit('/developers', `/developers/tokens`, { uses: '1' });
    expect(change.statusCode).toBe(201);
    const edit = await bob.browser.post(`/developers/apps/${clientId}`, {
      ...hiddenFields((await bob.browser.get('/developers')).body, '/developers/tokens'),
      ...validApp,
      name: 'Stolen',
    });
    expect(edit.statusCode).toBe(404);
    const still = await alice.browser.get(`/developers/apps/${clientId}`);
    expect(textOf(still.body)).toContain('Alice App');
  });
});

describe('with CLIENT_REGISTRATION=closed', () => {
  let closed: TestApp;
  beforeAll(async () => {
    closed = await createTestApp({ env: { CLIENT_REGISTRATION: 'closed' } });
  });
  afterAll(() => closed.close());

  it('says registration is closed, offers no creation and refuses one', async () => {
    const { browser } = await signedIn(closed);
    const list = await browser.get('/developers');
    expect(list.statusCode).toBe(200);
    expect(textOf(list.body)).toContain('Registration of applications is closed');
    expect(list.body).not.toContain('href="/developers/apps/new"');
    const form = await browser.get('/developers/apps/new?lang=ru');
    expect(textOf(form.body)).toContain('Регистрация приложений на этом сервисе закрыта');
    const token = /name="csrf_token" value="([^"]+)"/.exec((await browser.get('/account')).body)?.[1];
    const posted = await browser.post('/developers/apps', { ...validApp, csrf_token: token ?? '' });
    expect(posted.statusCode).toBe(403);
  });
});
