import { describe, expect, it } from 'vitest';
import { updateClient } from '../../src/modules/clients/clients.service.js';
import { hiddenFields } from '../helpers/browser.js';
import {
  alice,
  bare,
  bob,
  ctx,
  expectConfirmation,
  expectLogoutRefused,
  hintFor,
  LOGOUT,
  LOOPBACK_RETURN_URI,
  lastSignOutEvent,
  logoutUrl,
  RETURN_URI,
  setUpLogoutApp,
  sidOf,
  signedIn,
  site,
  stillSignedIn,
  t,
} from './logout.fixture.js';

/*
 * RP-initiated logout (OIDC RP-Initiated Logout 1.0): when it asks, when it ends
 * the session at once, where the browser goes afterwards. The hint's checks: logout-hint.test.ts.
 */
setUpLogoutApp();

const CONFIRM = `${LOGOUT}/confirm`;

describe('a hint issued in the current session', () => {
  it('ends the session at once and redirects to the registered URI with state', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const hint = await hintFor(alice);
    const res = await browser.get(
      logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: RETURN_URI, state: 'st 1/ü' }),
    );
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(`${RETURN_URI}?state=st+1%2F%C3%BC`);
    expect(await stillSignedIn(cookie)).toBe(false);
    expect(browser.cookies.has('idp_session')).toBe(false);
    expect(await lastSignOutEvent()).toMatchObject({
      actor: `user:${alice.id}`,
      subject: `client:${site.clientId}`,
      details: { via: 'end_session_endpoint', confirmed: false },
    });
  });

  it('shows the signed-out page, naming the site, when no post_logout_redirect_uri is sent', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const res = await browser.get(logoutUrl({ id_token_hint: await hintFor(alice), state: 'ignored' }));
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>You are signed out</h1>');
    expect(res.body).toContain('<a href="https://site.example/">Back to Northwind Games</a>');
    expect(await stillSignedIn(cookie)).toBe(false);
  });

  it('is accepted after it expired (§2: the OP SHOULD accept an expired hint)', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const hint = await hintFor(alice);
    t.clock.advance(3 * 3600 * 1000); // the id_token lives an hour; the session, 14 days
    const res = await browser.get(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: RETURN_URI }));
    expect(res.statusCode, res.body).toBe(302);
    expect(res.headers.location).toBe(RETURN_URI);
    expect(await stillSignedIn(cookie)).toBe(false);
  });
});

describe('the confirmation', () => {
  it('is asked for a hint of an earlier sign-in, and for another user’s hint', async () => {
    const earlier = await hintFor(alice);
    t.clock.advance(60_000);
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const res = await browser.get(
      logoutUrl({ id_token_hint: earlier, post_logout_redirect_uri: RETURN_URI }),
    );
    expectConfirmation(res);
    expect(res.body).toContain('Northwind Games asks to sign you out.');
    expect(res.body).toContain(`@${alice.username}`);
    expectConfirmation(await browser.get(logoutUrl({ id_token_hint: await hintFor(bob) })));
    expect(await stillSignedIn(cookie)).toBe(true);
  });

  it('is asked for a hint of another session of the same user signed in at the same second (its sid)', async () => {
    const first = await signedIn(alice);
    const second = await signedIn(alice);
    const firstCookie = first.cookies.get('idp_session');
    const secondCookie = second.cookies.get('idp_session');
    const hint = await hintFor(alice, { sid: await sidOf(firstCookie) });
    expectConfirmation(await second.get(logoutUrl({ id_token_hint: hint })));
    expect(await stillSignedIn(secondCookie)).toBe(true);
    // In the session it names, the same hint ends the session at once.
    const res = await first.get(logoutUrl({ id_token_hint: hint, post_logout_redirect_uri: RETURN_URI }));
    expect(res.statusCode, res.body).toBe(302);
    expect(await stillSignedIn(firstCookie)).toBe(false);
    expect(await stillSignedIn(secondCookie)).toBe(true);
  });

  it('is asked without a hint; Sign out ends the session and redirects with state (303)', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const page = await browser.get(
      logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: RETURN_URI, state: 'abc' }),
    );
    expectConfirmation(page);
    expect(page.body).toContain('https://site.example');
    const fields = hiddenFields(page.body, CONFIRM);
    const res = await browser.post(CONFIRM, { ...fields, decision: 'signout' });
    expect(res.statusCode, res.body).toBe(303);
    expect(res.headers.location).toBe(`${RETURN_URI}?state=abc`);
    expect(await stillSignedIn(cookie)).toBe(false);
    expect(await lastSignOutEvent()).toMatchObject({ details: { confirmed: true } });
  });

  it('names no site when none was given, and then ends on the signed-out page', async () => {
    const browser = await signedIn(alice);
    const page = await browser.get(LOGOUT);
    expectConfirmation(page);
    expect(page.body).toContain('A site asks to sign you out of this service.');
    const res = await browser.post(CONFIRM, { ...hiddenFields(page.body, CONFIRM), decision: 'signout' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('<h1>You are signed out</h1>');
    expect(await lastSignOutEvent()).toMatchObject({ subject: null });
  });

  it('refuses the form without its CSRF token, or with another browser’s: the session stays', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const page = await browser.get(
      logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: RETURN_URI }),
    );
    const fields = hiddenFields(page.body, CONFIRM);
    const other = await signedIn(alice);
    const otherToken = hiddenFields((await other.get(LOGOUT)).body, CONFIRM).csrf_token as string;
    for (const csrf_token of ['', otherToken]) {
      const res = await browser.post(CONFIRM, { ...fields, csrf_token, decision: 'signout' });
      expect(res.statusCode).toBe(403);
      expect(res.headers.location).toBeUndefined();
      // The error page's language switch reopens the same request.
      expect(res.body).toContain(
        `href="/api/v1/oauth/logout/resume?request=${encodeURIComponent(fields.request as string)}&amp;lang=ru"`,
      );
    }
    // A request field that is not a sealed request is not put in a link.
    const junk = await browser.post(CONFIRM, { csrf_token: '', request: '\u00e9<x>', decision: 'signout' });
    expect(junk.statusCode).toBe(403);
    expect(junk.body).toContain('href="/account?lang=ru"');
    expect(await stillSignedIn(cookie)).toBe(true);
  });

  it('Stay signed in keeps the session and returns to the site, or to the account page', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const withSite = await browser.get(
      logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: RETURN_URI, state: 's' }),
    );
    const back = await browser.post(CONFIRM, { ...hiddenFields(withSite.body, CONFIRM), decision: 'stay' });
    expect(back.statusCode).toBe(303);
    expect(back.headers.location).toBe(`${RETURN_URI}?state=s`);
    const plain = await browser.get(logoutUrl({ client_id: bare.clientId }));
    const stay = await browser.post(CONFIRM, { ...hiddenFields(plain.body, CONFIRM), decision: 'stay' });
    expect(stay.headers.location).toBe('/account');
    expect(await stillSignedIn(cookie)).toBe(true);
  });

  it('refuses an altered or expired request, and a form without a decision', async () => {
    const browser = await signedIn(alice);
    const page = await browser.get(
      logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: RETURN_URI }),
    );
    const fields = hiddenFields(page.body, CONFIRM);
    const request = fields.request as string;
    const altered = `${request.slice(0, -4)}${request.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
    const tampered = await browser.post(CONFIRM, { ...fields, request: altered, decision: 'signout' });
    expect(tampered.statusCode).toBe(400);
    expect(tampered.body).toContain('This sign-out request has expired');
    expect((await browser.post(CONFIRM, { ...fields, decision: 'maybe' })).statusCode).toBe(400);
    t.clock.advance(31 * 60 * 1000);
    const late = await browser.post(CONFIRM, { ...fields, decision: 'signout' });
    expect(late.statusCode).toBe(400);
    expect(late.headers.location).toBeUndefined();
  });

  it('refuses the request when the site’s URI was removed while the page was open', async () => {
    const browser = await signedIn(alice);
    const page = await browser.get(
      logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: LOOPBACK_RETURN_URI }),
    );
    await updateClient(t.database.db, ctx, site.clientId, {
      removePostLogoutRedirectUris: [LOOPBACK_RETURN_URI],
    });
    const res = await browser.post(CONFIRM, { ...hiddenFields(page.body, CONFIRM), decision: 'signout' });
    expectLogoutRefused(res, /not registered/);
  });
});

describe('without a session', () => {
  it('redirects to a registered URI at once, or shows the signed-out page', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: logoutUrl({ client_id: site.clientId, post_logout_redirect_uri: RETURN_URI, state: 'x' }),
    });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${RETURN_URI}?state=x`);
    const page = await t.app.inject({ method: 'GET', url: LOGOUT });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>You are signed out</h1>');
    expect(page.headers['cache-control']).toBe('no-store');
  });
});

describe('the form POST of the endpoint', () => {
  it('continues as a GET (the session cookie is not sent cross-site) and then logs out', async () => {
    const browser = await signedIn(alice);
    const cookie = browser.cookies.get('idp_session');
    const posted = await browser.post(LOGOUT, {
      id_token_hint: await hintFor(alice),
      post_logout_redirect_uri: RETURN_URI,
      state: 'p',
    });
    expect(posted.statusCode, posted.body).toBe(303);
    const resume = posted.headers.location as string;
    expect(resume).toMatch(/^\/api\/v1\/oauth\/logout\/resume\?request=/);
    expect(await stillSignedIn(cookie)).toBe(true);
    const res = await browser.get(resume);
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe(`${RETURN_URI}?state=p`);
    expect(await stillSignedIn(cookie)).toBe(false);
  });

  it('refuses a bad request at once, and a continuation that is not ours', async () => {
    expectLogoutRefused(await (await signedIn(alice)).post(LOGOUT, { id_token_hint: 'not.a.jwt' }));
    const res = await t.app.inject({ method: 'GET', url: `${LOGOUT}/resume?request=v1.abc.def` });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('This sign-out request has expired');
  });
});

describe('the language', () => {
  it('follows ui_locales, then Accept-Language', async () => {
    const ru = await t.app.inject({ method: 'GET', url: logoutUrl({ ui_locales: 'fr-CA ru' }) });
    expect(ru.body).toContain('<html lang="ru">');
    expect(ru.body).toContain('Вы вышли из аккаунта');
    const browser = await signedIn(alice);
    const confirm = await browser.get(logoutUrl({ client_id: site.clientId, ui_locales: 'ru' }));
    expect(confirm.body).toContain('<h1>Выйти из аккаунта?</h1>');
    expect(confirm.body).toContain('«Northwind Games» просит выйти из аккаунта.');
    const byHeader = await t.app.inject({ method: 'GET', url: LOGOUT, headers: { 'accept-language': 'ru' } });
    expect(byHeader.body).toContain('<html lang="ru">');
    const refused = await t.app.inject({
      method: 'GET',
      url: logoutUrl({ ui_locales: 'ru', client_id: 'pk_x' }),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('Ссылка для выхода недействительна');
    const switched = await t.app.inject({ method: 'GET', url: logoutUrl({ ui_locales: 'ru', lang: 'en' }) });
    expect(switched.body).toContain('<h1>You are signed out</h1>');
  });
});
