import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_ROLES, type ConsoleRole, roleCan } from '../../../src/modules/operators/roles.js';
import type { ConsoleAccess } from '../../../src/web/console/console-guard.js';
import { createTestApp, type TestApp } from '../../helpers/app.js';
import { Browser } from '../../helpers/browser.js';
import { type ConsoleSession, enterConsole, makeOperator } from '../../helpers/console.js';
import { makeUser } from '../../helpers/factories.js';

/**
 * Every console route, as the app declares it, walked by every role: a route whose capability the
 * role lacks answers 403 and its handler never runs; one it has is not refused by the guard. And
 * every console route sends a browser without a session to sign in, and refuses an account without
 * a role. A route added later is walked too: the list comes from the app, not from this file.
 */
let t: TestApp;
const sessions = new Map<ConsoleRole, ConsoleSession>();
/** An id no row has: a request reaches the handler, which finds nothing, and changes nothing. */
const NO_SUCH_ID = '987654321';

interface Declared {
  method: string;
  url: string;
  access: ConsoleAccess;
}

/** Routes that end the walker's own session are walked last, or not at all. */
const ENDS_THE_SESSION = new Set(['POST /admin/leave']);

const pathOf = (route: Declared) => route.url.replace(/:[A-Za-z_]+/g, NO_SUCH_ID);

beforeAll(async () => {
  // Each fresh proof moves the clock 30 s (one code a step): the walk outlasts the default hour.
  t = await createTestApp({ env: { ADMIN_SESSION_TTL_SECONDS: '86400' } });
  for (const role of CONSOLE_ROLES) sessions.set(role, await enterConsole(t, await makeOperator(t, role)));
});
afterAll(() => t.close());

function walked(): Declared[] {
  return t.app.consoleRoutes.filter((route) => !ENDS_THE_SESSION.has(`${route.method} ${route.url}`));
}

async function send(session: ConsoleSession, route: Declared): Promise<LightMyRequestResponse> {
  if (route.method === 'GET') return session.get(pathOf(route));
  // A fresh proof, so that a destructive route is judged by the role alone.
  if ('can' in route.access && route.access.destructive) await session.reauthenticate();
  return session.post(pathOf(route));
}

describe('the console routes, walked by every role', () => {
  it('declares each console route once, with a capability or as an entry', () => {
    const routes = t.app.consoleRoutes;
    expect(routes.length).toBeGreaterThan(5);
    const keys = routes.map((route) => `${route.method} ${route.url}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const route of routes) expect(route.url.startsWith('/admin')).toBe(true);
  });

  for (const role of CONSOLE_ROLES) {
    it(`answers a ${role} as the role table says, on every route`, { timeout: 300_000 }, async () => {
      const session = sessions.get(role) as ConsoleSession;
      const refused: string[] = [];
      const allowed: string[] = [];
      for (const route of walked()) {
        const res = await send(session, route);
        const name = `${route.method} ${route.url} → ${res.statusCode}`;
        const mayCall = 'entry' in route.access || roleCan(role, route.access.can);
        if (mayCall) {
          expect(res.statusCode, name).not.toBe(403);
          expect(res.statusCode, name).toBeLessThan(500);
          expect(String(res.headers.location ?? ''), name).not.toMatch(
            /^\/(signin|admin\/enter|admin\/reauthenticate)/,
          );
          allowed.push(name);
        } else {
          expect(res.statusCode, name).toBe(403);
          refused.push(name);
        }
      }
      // Each role meets both answers (owner: none refused).
      expect(allowed.length).toBeGreaterThan(0);
      if (role === 'owner') expect(refused).toEqual([]);
      else expect(refused.length).toBeGreaterThan(0);
    });
  }

  it('refuses a support operator every owner-only action: applications, keys, wallet, incidents', async () => {
    const support = sessions.get('support') as ConsoleSession;
    const ownerOnly = walked().filter(
      (route) => route.method === 'POST' && 'can' in route.access && !roleCan('support', route.access.can),
    );
    for (const route of ownerOnly) expect((await send(support, route)).statusCode, route.url).toBe(403);
  });

  it('sends a browser without a session to sign in on every route, and refuses an account without a role', async () => {
    const anonymous = new Browser(t.app);
    const member = new Browser(t.app);
    await member.signIn(await makeUser(t));
    for (const route of t.app.consoleRoutes) {
      const path = pathOf(route);
      const res = route.method === 'GET' ? await anonymous.get(path) : await anonymous.post(path, {});
      // A form POST without its CSRF token is refused before anything else (403 form_expired), a
      // passkey ceremony's JSON without its fields by its schema (400).
      if (route.method === 'GET') expect(res.headers.location, path).toMatch(/^\/signin\?return_to=/);
      else expect([400, 401, 403], path).toContain(res.statusCode);
      if (route.method === 'GET') expect((await member.get(path)).statusCode, path).toBe(403);
    }
  });
});
