import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disableUser } from '../../../src/modules/accounts/accounts.service.js';
import { revokeRole } from '../../../src/modules/operators/operators.service.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { enterConsole, makeOperator, nextCode } from '../../helpers/console.js';
import { depsOf, makeUser } from '../../helpers/factories.js';

/**
 * Entering the console: an operator's account session, then a second factor for a console session
 * of its own (cookie on /admin, ADMIN_SESSION_TTL_SECONDS), which ends with the account session, the
 * role, leaving, or its time.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '600' } });
});
afterAll(() => t.close());

describe('who reaches the console', () => {
  it('sends a browser without a session to sign in, and back to the page it asked for', async () => {
    const res = await new Browser(t.app).get('/admin/session');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/signin?return_to=%2Fadmin%2Fsession');
  });

  it('refuses an account without a console role with 403, even with a second factor', async () => {
    const browser = new Browser(t.app);
    const user = await makeUser(t);
    await browser.signIn(user);
    for (const path of ['/admin/enter', '/admin/session']) {
      const res = await browser.get(path);
      expect(res.statusCode, path).toBe(403);
      expect(res.body).toContain('Not for your role');
    }
  });

  it('asks an operator without a second factor to add one first', async () => {
    const browser = new Browser(t.app);
    const user = await makeUser(t);
    const { grantRole } = await import('../../../src/modules/operators/operators.service.js');
    await grantRole(depsOf(t).db, depsOf(t).ctx, { username: user.username, role: 'owner', by: 'operator' });
    await browser.signIn(user);
    const res = await browser.get('/admin/enter');
    expect(res.statusCode).toBe(403);
    expect(res.body).toContain('Set up a second factor first');
    expect(res.body).toContain('href="/account/security"');
  });

  it('sends a signed-in operator to the entry page first, then opens with the code only', async () => {
    const operator = await makeOperator(t, 'auditor');
    const session = await enterConsole(t, operator);
    // A second browser with the same account session cookie but no console cookie is sent to enter.
    const bare = new Browser(t.app);
    for (const [name, value] of session.browser.cookies)
      if (!name.includes('console')) bare.cookies.set(name, value);
    const res = await bare.get('/admin/session');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/admin/enter?return_to=%2Fadmin%2Fsession');
    const wrong = await bare.submit('/admin/enter', '/admin/enter', { code: '000000' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.body).toContain('That code is not right');
    const recoveryShaped = await bare.submit('/admin/enter', '/admin/enter', { code: 'abcd-efgh-jkmn' });
    expect(recoveryShaped.statusCode).toBe(401);
    const empty = await bare.submit('/admin/enter', '/admin/enter', { code: '' });
    expect(empty.statusCode).toBe(400);
    // None of them opened anything: the page still asks to enter.
    expect((await bare.get('/admin/session')).headers.location).toBe(
      '/admin/enter?return_to=%2Fadmin%2Fsession',
    );
    const entered = await bare.submit('/admin/enter?return_to=/admin/session', '/admin/enter', {
      code: nextCode(t, operator),
    });
    expect(entered.statusCode).toBe(303);
    expect(entered.headers.location).toBe('/admin/session');
    const cookie = entered.cookies.find((each) => each.name === 'idp_console');
    expect(cookie).toMatchObject({ path: '/admin', httpOnly: true, sameSite: 'Lax', maxAge: 600 });
    const page = await bare.get('/admin/session');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`${operator.user.username} · Auditor`);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
  });

  it('returns only to console paths after entering', async () => {
    const operator = await makeOperator(t, 'auditor');
    const session = await enterConsole(t, operator);
    const res = await session.browser.submit('/admin/enter?return_to=https://evil.example/', '/admin/enter', {
      code: nextCode(t, operator),
    });
    expect(res.headers.location).toBe('/admin');
    const account = await session.browser.submit('/admin/enter?return_to=/account', '/admin/enter', {
      code: nextCode(t, operator),
    });
    expect(account.headers.location).toBe('/admin');
  });
});

describe('proving again', () => {
  it('records a new proof only for the right code', async () => {
    const session = await enterConsole(t, await makeOperator(t, 'owner'));
    const provedAt = () =>
      depsOf(t)
        .db.selectFrom('console_sessions')
        .select('proved_at')
        .where('user_id', '=', session.operator.user.id)
        .executeTakeFirstOrThrow()
        .then((row) => new Date(row.proved_at).getTime());
    const before = await provedAt();
    t.clock.advance(60_000);
    const wrong = await session.browser.submit('/admin/reauthenticate', '/admin/reauthenticate', {
      code: '000000',
    });
    expect(wrong.statusCode).toBe(401);
    expect(await provedAt()).toBe(before);
    await session.reauthenticate();
    expect(await provedAt()).toBeGreaterThan(before);
  });
});

describe('how a console session ends', () => {
  it('ends after ADMIN_SESSION_TTL_SECONDS while the account stays signed in', async () => {
    const session = await enterConsole(t, await makeOperator(t, 'support'));
    expect((await session.get('/admin/session')).statusCode).toBe(200);
    t.clock.advance(601_000);
    const res = await session.get('/admin/session');
    expect(res.headers.location).toBe('/admin/enter?return_to=%2Fadmin%2Fsession');
    expect((await session.get('/account')).statusCode).toBe(200);
  });

  it('ends when the operator leaves, and says so on the account page', async () => {
    const session = await enterConsole(t, await makeOperator(t, 'support'));
    const left = await session.post('/admin/leave');
    expect(left.statusCode).toBe(303);
    expect(left.headers.location).toBe('/account?notice=console_left');
    expect((await session.get('/account?notice=console_left')).body).toContain('You left the console');
    expect((await session.get('/admin/session')).headers.location).toMatch(/^\/admin\/enter/);
  });

  it('ends with the account session: signing out leaves no way back with the console cookie', async () => {
    const session = await enterConsole(t, await makeOperator(t, 'owner'));
    const console = session.browser.cookies.get('idp_console') as string;
    const out = await session.browser.submit('/account', '/signout', {});
    expect([302, 303]).toContain(out.statusCode);
    const again = await makeOperator(t, 'owner');
    const other = new Browser(t.app);
    await other.signIn(again.user);
    other.cookies.set('idp_console', console);
    const res = await other.get('/admin/session');
    expect(res.statusCode).toBe(302);
  });

  it("ends when the operator's account is disabled: no page of the console answers it", async () => {
    const session = await enterConsole(t, await makeOperator(t, 'owner'));
    await disableUser(depsOf(t).db, depsOf(t).ctx, { username: session.operator.user.username });
    const res = await session.get('/admin/session');
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toMatch(/^\/signin/);
  });

  it('ends when the role is revoked', async () => {
    const session = await enterConsole(t, await makeOperator(t, 'owner'));
    await revokeRole(depsOf(t).db, depsOf(t).ctx, {
      username: session.operator.user.username,
      by: 'operator',
    });
    expect((await session.get('/admin/session')).statusCode).toBe(403);
  });
});

describe('ADMIN_ALLOWED_IPS', () => {
  it('hides every console path from other addresses, and answers from the listed ones', async () => {
    const limited = await createTestApp({ env: { ADMIN_ALLOWED_IPS: '10.0.0.0/8, 192.0.2.7' } });
    try {
      for (const path of ['/admin/enter', '/admin/session']) {
        const res = await limited.app.inject({ method: 'GET', url: path, remoteAddress: '127.0.0.1' });
        expect(res.statusCode, path).toBe(404);
      }
      const inside = await limited.app.inject({
        method: 'GET',
        url: '/admin/session',
        remoteAddress: '10.1.2.3',
      });
      expect(inside.statusCode).toBe(302);
      const exact = await limited.app.inject({
        method: 'GET',
        url: '/admin/session',
        remoteAddress: '::ffff:192.0.2.7',
      });
      expect(exact.statusCode).toBe(302);
    } finally {
      await limited.close();
    }
  });
});

describe('a console path the router refuses', () => {
  it('answers a page, not JSON: a parameter over the length limit, a malformed percent-encoding', async () => {
    const long = await t.app.inject({ method: 'GET', url: `/admin/users/${'9'.repeat(300)}` });
    expect(long.statusCode).toBe(414);
    expect(long.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(long.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
    expect(long.body).toContain('<h1>414 URI Too Long</h1>');
    const malformed = await t.app.inject({ method: 'GET', url: '/admin/users/%E0%A4%A' });
    expect(malformed.statusCode).toBe(400);
    expect(malformed.headers['content-type']).toBe('text/html; charset=utf-8');
    // The API keeps its JSON.
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/me/%E0%A4%A' });
    expect(api.statusCode).toBe(400);
    expect(api.headers['content-type']).toBe('application/json; charset=utf-8');
  });
});
