import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordRefusal } from '../../../src/modules/client-activity/refusals.service.js';
import { findClientByClientId } from '../../../src/modules/clients/clients.repository.js';
import { UnregisteredRedirectUri } from '../../../src/modules/oauth/authorize/checks.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { hiddenFields } from '../../helpers/browser.js';
import { usingPostgres } from '../../helpers/database.js';
import { depsOf } from '../../helpers/factories.js';
import { basic } from '../../helpers/http.js';
import { createApp, shownValue, signedIn, textOf, validApp } from './portal-helpers.js';

/*
 * An application's page in the developer portal through app.inject: every form of it (settings,
 * the wallet request, secrets, co-owners, disabling, deletion), each re-rendering the page with a
 * confirmation line or its problems beside the field (English and Russian); the forms that decide
 * who or what acts as the application asking for a recent re-authentication; the activity with
 * the refused requests; and the account's registration tokens on the list page.
 */
let t: TestApp;
const WINDOW_S = 300;
beforeAll(async () => {
  t = await createTestApp({ env: { REAUTH_MAX_AGE_SECONDS: String(WINDOW_S) } });
});
afterAll(() => t.close());

const page = (clientId: string) => `/developers/apps/${clientId}`;
const auditActions = async (clientId: string) =>
  (
    await t.database.db
      .selectFrom('audit_events')
      .select(['action', 'actor'])
      .where('subject', '=', `client:${clientId}`)
      .orderBy('id')
      .execute()
  ).map((row) => row.action);

describe(`an application's page on ${usingPostgres ? 'PostgreSQL' : 'PGlite'}`, () => {
  it('changes the settings, says so, and audits the change as the account', async () => {
    const { browser, user } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const form = {
      ...validApp,
      name: 'Book Shop 2',
      redirect_uris: 'https://books.example/cb\nhttps://books.example/new',
      require_par: '1',
      device_grant: '1',
    };
    const res = await browser.submit(page(clientId), page(clientId), form);
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`${page(clientId)}?done=updated`);
    const shown = await browser.get(String(res.headers.location));
    expect(textOf(shown.body)).toContain('The settings were saved.');
    expect(shown.body).toContain('<h1>Book Shop 2</h1>');
    expect(shown.body).toContain('https://books.example/new');
    expect(shown.body).toMatch(/id="requirePar"[^>]*checked/);
    expect(shown.body).toMatch(/id="deviceGrant"[^>]*checked/);
    expect(shown.body).toContain('<label for="deviceGrant">Device sign-in (RFC 8628)</label>');
    expect((await findClientByClientId(t.database.db, clientId))?.deviceGrant).toBe(true);
    const again = await browser.submit(page(clientId), page(clientId), form);
    expect(again.headers.location).toBe(`${page(clientId)}?done=unchanged`);
    expect(await auditActions(clientId)).toContain('client_updated');
    const actors = await t.database.db
      .selectFrom('audit_events')
      .select('actor')
      .where('subject', '=', `client:${clientId}`)
      .execute();
    expect(actors.every((row) => row.actor === `user:${user.id}`)).toBe(true);
  });

  it('refuses bad settings beside their fields, in English and Russian, changing nothing', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const bad = { ...validApp, redirect_uris: 'https://books.example/cb#x' };
    const en = await browser.submit(page(clientId), page(clientId), bad);
    expect(en.statusCode).toBe(400);
    expect(en.body).toMatch(/id="redirectUris-error"[^>]*>Not accepted: <span lang="en">redirect URI/);
    const logout = await browser.submit(page(clientId), page(clientId), {
      ...validApp,
      backchannel_logout_uri: 'nope',
    });
    expect(logout.body).toContain('id="backchannelLogoutUri-error"');
    const ru = await browser.submit(`${page(clientId)}?lang=ru`, page(clientId), bad);
    expect(ru.statusCode).toBe(400);
    expect(textOf(ru.body)).toContain(
      'Адрес возврата «https://books.example/cb#x»: не должен содержать фрагмент (#).',
    );
    expect(ru.body).toContain('<label for="deviceGrant">Вход на устройствах (RFC 8628)</label>');
    const shown = await browser.get(`${page(clientId)}?lang=en`);
    expect(shown.body).not.toContain('cb#x');
  });

  it('asks the operators for the wallet right, once', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const res = await browser.submit(page(clientId), `${page(clientId)}/wallet`, {});
    expect(res.headers.location).toBe(`${page(clientId)}?done=wallet_requested`);
    const shown = await browser.get(String(res.headers.location));
    expect(textOf(shown.body)).toContain('You asked for the wallet right');
    expect(shown.body).not.toContain(`action="${page(clientId)}/wallet"`);
    expect(await auditActions(clientId)).toContain('client_wallet_requested');
  });

  it('adds a secret beside the others (shown once), expires the old one: a rotation without downtime', async () => {
    const { browser } = await signedIn(t);
    const { clientId, secret } = await createApp(browser);
    const added = await browser.submit(page(clientId), `${page(clientId)}/secrets`, { expires_in: '' });
    expect(added.statusCode).toBe(201);
    const second = shownValue(added.body, 'client-secret');
    expect(second).toMatch(/^sk_/);
    expect(second).not.toBe(secret);
    expect(textOf(added.body)).toContain(`…${secret.slice(-4)}`);
    expect(textOf(added.body)).toContain(`…${second.slice(-4)}`);
    // Not on the page again.
    expect((await browser.get(page(clientId))).body).not.toContain(second);

    const listed = (await browser.get(page(clientId))).body;
    const expireForms = [...listed.matchAll(/name="secret_id" value="(\d+)"/g)].map((m) => m[1]);
    expect(expireForms).toHaveLength(2);
    const oldest = expireForms[1] as string;
    const inHour = await browser.submit(page(clientId), `${page(clientId)}/secrets/expire`, {
      secret_id: oldest,
      in: '3600',
    });
    expect(inHour.headers.location).toBe(`${page(clientId)}?done=secret_expired`);
    expect(textOf((await browser.get(page(clientId))).body)).toMatch(/Jun 1, 2026, 1:00 PM UTC/);
    const now = await browser.submit(page(clientId), `${page(clientId)}/secrets/expire`, {
      secret_id: oldest,
      in: '0',
    });
    expect(now.statusCode).toBe(303);
    const after = await browser.get(page(clientId));
    expect(textOf(after.body)).not.toContain(`…${secret.slice(-4)}`);
    // The last secret stays: the application would have none.
    const last = /name="secret_id" value="(\d+)"/.exec(after.body)?.[1] as string;
    const refused = await browser.submit(`${page(clientId)}?lang=ru`, `${page(clientId)}/secrets/expire`, {
      secret_id: last,
      in: '0',
    });
    expect(refused.statusCode).toBe(400);
    expect(textOf(refused.body)).toContain('Это единственный секрет приложения');
    expect(await auditActions(clientId)).toEqual(
      expect.arrayContaining(['client_secret_added', 'client_secret_expired']),
    );
  });

  it('mails every owner of a secret added or expired, and no one of a refused change', async () => {
    const owner = await signedIn(t);
    const { clientId } = await createApp(owner.browser, { name: 'Mailed' });
    const co = await signedIn(t);
    await owner.browser.submit(page(clientId), `${page(clientId)}/owners`, { username: co.user.username });
    const told = async () =>
      (
        await t.database.db
          .selectFrom('mail_outbox')
          .select(['recipient', 'text_body'])
          .where('kind', '=', 'app_changed')
          .where('text_body', 'like', `%${clientId}%`)
          .execute()
      ).filter((row) => row.text_body.includes('client secret'));
    for (let i = 0; i < 2; i++)
      expect((await owner.browser.submit(page(clientId), `${page(clientId)}/secrets`, {})).statusCode).toBe(
        201,
      );
    const added = await told();
    expect(added.filter((row) => row.text_body.includes('made a new client secret'))).toHaveLength(4);
    expect(new Set(added.map((row) => row.recipient))).toEqual(
      new Set([`${owner.user.username}@example.com`, `${co.user.username}@example.com`]),
    );
    // A refused change (a secret the application does not have) mails no one.
    const refused = await owner.browser.submit(page(clientId), `${page(clientId)}/secrets/expire`, {
      secret_id: '999999',
      in: '0',
    });
    expect(refused.statusCode).toBe(404);
    expect(await told()).toHaveLength(4);
    const listed = (await owner.browser.get(page(clientId))).body;
    const id = /name="secret_id" value="(\d+)"/.exec(listed)?.[1] as string;
    await owner.browser.submit(page(clientId), `${page(clientId)}/secrets/expire`, {
      secret_id: id,
      in: '0',
    });
    expect((await told()).filter((row) => row.text_body.includes('revoked a client secret'))).toHaveLength(2);
  });

  it('asks for a recent re-authentication before a secret is added or expired, and changes nothing before it', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const form = hiddenFields((await browser.get(page(clientId))).body, `${page(clientId)}/secrets`);
    t.clock.advance((WINDOW_S + 1) * 1000);
    const res = await browser.post(`${page(clientId)}/secrets`, { ...form, expires_in: '' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(
      `/account/reauthenticate?return_to=${encodeURIComponent(page(clientId))}`,
    );
    const listed = (await browser.get(page(clientId))).body;
    expect([...listed.matchAll(/name="secret_id"/g)]).toHaveLength(1);
  });

  it('adds a co-owner by username, who then sees and changes the app but cannot delete it', async () => {
    const owner = await signedIn(t);
    const { clientId } = await createApp(owner.browser, { name: 'Shared' });
    const unknown = await owner.browser.submit(`${page(clientId)}?lang=ru`, `${page(clientId)}/owners`, {
      username: 'nobody_here',
    });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.body).toMatch(/id="username-error"[^>]*>Не принято: <span lang="ru">Нет аккаунта/);
    expect(unknown.body).toContain('value="nobody_here"');

    const co = await signedIn(t);
    const added = await owner.browser.submit(page(clientId), `${page(clientId)}/owners`, {
      username: co.user.username,
    });
    expect(added.headers.location).toBe(`${page(clientId)}?done=owner_added`);
    expect(textOf((await owner.browser.get(page(clientId))).body)).toContain(co.user.username);

    const theirs = await co.browser.get('/developers');
    expect(textOf(theirs.body)).toContain('Shared');
    expect(textOf(theirs.body)).toContain('co-owner');
    const coPage = await co.browser.get(page(clientId));
    expect(coPage.statusCode).toBe(200);
    expect(coPage.body).not.toContain(`action="${page(clientId)}/delete"`);
    const deleting = await co.browser.post(`${page(clientId)}/delete`, {
      ...hiddenFields(coPage.body, `${page(clientId)}/owners`),
      confirm_name: 'Shared',
    });
    expect(deleting.statusCode).toBe(403);
    expect(textOf(deleting.body)).toContain('Only the owner of the application may delete it.');

    // The co-owner leaves; the application is theirs no more.
    const left = await co.browser.submit(page(clientId), `${page(clientId)}/owners/remove`, {
      user_id: String(co.user.id),
    });
    expect(left.headers.location).toBe('/developers?done=left');
    expect((await co.browser.get(page(clientId))).statusCode).toBe(404);
    expect(await auditActions(clientId)).toEqual(
      expect.arrayContaining(['client_owner_added', 'client_owner_removed']),
    );
  });

  it('disables the application (its tokens end, its status says so) and enables it again', async () => {
    const { browser } = await signedIn(t);
    const { clientId, secret } = await createApp(browser);
    const disabled = await browser.submit(page(clientId), `${page(clientId)}/disable`, {});
    expect(disabled.headers.location).toBe(`${page(clientId)}?done=disabled`);
    const shown = await browser.get(String(disabled.headers.location));
    expect(textOf(shown.body)).toContain('The application is disabled: its tokens were ended.');
    expect(shown.body).toContain('<span class="app-status status-disabled">Disabled</span>');
    const token = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/token',
      headers: {
        authorization: basic({ clientId, clientSecret: secret, redirectUri: '' }),
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: 'grant_type=authorization_code&code=x&redirect_uri=https%3A%2F%2Fbooks.example%2Fcb',
    });
    expect(token.json()).toMatchObject({ error: 'invalid_client' });
    const enabled = await browser.submit(page(clientId), `${page(clientId)}/enable`, {});
    expect(enabled.headers.location).toBe(`${page(clientId)}?done=enabled`);
    expect(textOf((await browser.get(page(clientId))).body)).toContain('Awaiting approval');
    expect(await auditActions(clientId)).toEqual(
      expect.arrayContaining(['client_disabled', 'client_enabled']),
    );
  });

  it('deletes the application only with its name typed, then it is listed nowhere', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser, { name: 'Doomed' });
    const wrong = await browser.submit(`${page(clientId)}?lang=ru`, `${page(clientId)}/delete`, {
      confirm_name: 'doomed',
    });
    expect(wrong.statusCode).toBe(400);
    expect(textOf(wrong.body)).toContain('Введённое название не совпадает');
    const done = await browser.submit(`${page(clientId)}?lang=en`, `${page(clientId)}/delete`, {
      confirm_name: 'Doomed',
    });
    expect(done.headers.location).toBe('/developers?done=deleted');
    const list = await browser.get(String(done.headers.location));
    expect(textOf(list.body)).toContain('The application was deleted.');
    expect(list.body).not.toContain(clientId);
    expect((await browser.get(page(clientId))).statusCode).toBe(404);
  });

  it('shows the activity and the refused requests, a trailing-slash redirect_uri with both values', async () => {
    const { browser } = await signedIn(t);
    const { clientId } = await createApp(browser);
    const seen = {
      endpoint: 'authorize' as const,
      clientId,
      params: { redirect_uri: 'https://books.example/cb/', response_type: 'code' },
    };
    const error = new UnregisteredRedirectUri('https://books.example/cb/', [
      'https://books.example/cb',
      'https://books.example/cb2',
    ]);
    await recordRefusal(t.database.db, depsOf(t).ctx, seen, error, t.clock.now());
    const shown = await browser.get(page(clientId));
    const text = textOf(shown.body);
    expect(text).toContain('Refused requests');
    expect(text).toContain('The redirect_uri is not registered for this application.');
    expect(text).toContain(
      'Sent “https://books.example/cb/”, registered “https://books.example/cb”: they differ only by a trailing slash',
    );
    expect(shown.body).toContain('<code class="url differs">https://books.example/cb/</code>');
    expect(shown.body).toContain('<code class="url differs">https://books.example/cb</code>');
    expect(shown.body).toMatch(/class="dashboard-plot developers-plot" data-chart="/);
    expect([...shown.body.matchAll(/<tr><td>2026-\d\d-\d\d<\/td>/g)]).toHaveLength(30);
    // Another account's application never shows this one's refusals.
    const other = await signedIn(t);
    const theirs = await createApp(other.browser);
    expect((await other.browser.get(page(theirs.clientId))).body).not.toContain('books.example/cb/');
  });
});

describe('registration tokens on the list page', () => {
  it('creates a token shown once, lists it, refuses bad uses (en, ru), revokes it', async () => {
    const { browser } = await signedIn(t);
    const made = await browser.submit('/developers', '/developers/tokens', {
      uses: '3',
      expires_in: '86400',
    });
    expect(made.statusCode).toBe(201);
    const token = shownValue(made.body, 'registration-token');
    expect(token).toMatch(/^rit_/);
    const list = await browser.get('/developers');
    expect(list.body).not.toContain(token);
    expect(list.body).toMatch(/<td class="number">3<\/td>/);
    const bad = await browser.submit('/developers?lang=ru', '/developers/tokens', {
      uses: '0',
      expires_in: '86400',
    });
    expect(bad.statusCode).toBe(400);
    expect(textOf(bad.body)).toContain('Число регистраций — целое, от 1 до 1000.');
    const badEn = await browser.submit('/developers?lang=en', '/developers/tokens', { uses: '5000' });
    expect(badEn.body).toContain('id="token-uses-error"');
    const id = /name="token_id" value="(\d+)"/.exec(list.body)?.[1] as string;
    const revoked = await browser.submit('/developers', '/developers/tokens/revoke', { token_id: id });
    expect(revoked.headers.location).toBe('/developers?done=token_revoked');
    const after = await browser.get(String(revoked.headers.location));
    expect(textOf(after.body)).toContain('The token was revoked.');
    expect(textOf(after.body)).toContain('No token of yours registers now.');
  });

  it('registers through RFC 7591 an application the account then finds in the portal', async () => {
    const { browser } = await signedIn(t);
    const made = await browser.submit('/developers', '/developers/tokens', { uses: '1' });
    const token = shownValue(made.body, 'registration-token');
    const registered = await t.app.inject({
      method: 'POST',
      url: '/api/v1/oauth/register',
      headers: { authorization: `Bearer ${token}` },
      payload: { client_uri: 'https://scripted.example', redirect_uris: ['https://scripted.example/cb'] },
    });
    expect(registered.statusCode, registered.body).toBe(201);
    const clientId = (registered.json() as { client_id: string }).client_id;
    const list = await browser.get('/developers');
    expect(list.body).toContain(clientId);
    expect(textOf(list.body)).toContain('scripted.example');
    expect((await browser.get(page(clientId))).statusCode).toBe(200);
  });
});
