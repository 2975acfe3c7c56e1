import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { totpCodeAt } from '../../src/modules/mfa/totp-code.js';
import { grantRole } from '../../src/modules/operators/operators.service.js';
import type { ConsoleRole } from '../../src/modules/operators/roles.js';
import type { TestApp } from './app.js';
import { Browser, hiddenFields } from './browser.js';
import { depsOf, type TestUser, type UserOptions } from './factories.js';
import { makeTotpUser, TOTP_STEP_MS } from './totp.js';

/** An account with an authenticator app and a console role. */
export interface TestOperator {
  user: TestUser;
  /** The TOTP key, as the operator's app holds it. */
  key: string;
  role: ConsoleRole;
}

/** Makes an account with an authenticator app and gives it `role` (as `idp admins grant` does). */
export async function makeOperator(
  t: TestApp,
  role: ConsoleRole,
  options: UserOptions = {},
): Promise<TestOperator> {
  const { user, key } = await makeTotpUser(t, options);
  await grantRole(depsOf(t).db, depsOf(t).ctx, { username: user.username, role, by: 'operator' });
  return { user, key, role };
}

/** The current code of the operator's app, the clock moved on one step first: each code is accepted once. */
export function nextCode(t: TestApp, operator: TestOperator): string {
  t.clock.advance(TOTP_STEP_MS);
  return totpCodeAt(operator.key, t.clock.now());
}

/** A browser (app.inject) inside the console: signed in with password and code, then entered with a code. */
export class ConsoleSession {
  constructor(
    readonly browser: Browser,
    private readonly t: TestApp,
    readonly operator: TestOperator,
  ) {}

  /** The browser's cookies as one `cookie` header. */
  get cookies(): string {
    return [...this.browser.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  get(path: string): Promise<LightMyRequestResponse> {
    return this.browser.get(path);
  }

  /** POSTs `fields` with a fresh CSRF token (from the console session page). */
  async post(path: string, fields: Record<string, string> = {}): Promise<LightMyRequestResponse> {
    return this.browser.post(path, { csrf_token: await this.csrfToken(), ...fields });
  }

  /** A CSRF token of this browser, from the console session page's form. */
  async csrfToken(): Promise<string> {
    const page = await this.browser.get('/admin/session');
    expect(page.statusCode, page.body).toBe(200);
    const token = hiddenFields(page.body, '/admin/leave').csrf_token;
    if (!token) throw new Error('no CSRF token on /admin/session');
    return token;
  }

  /** Proves the second factor again (for destructive actions), as /admin/reauthenticate does. */
  async reauthenticate(): Promise<void> {
    const res = await this.browser.submit('/admin/reauthenticate', '/admin/reauthenticate', {
      code: nextCode(this.t, this.operator),
    });
    expect(res.statusCode, res.body).toBe(303);
  }
}

/** Signs the operator in (password, then the second step's code) and enters the console with a code. */
export async function enterConsole(t: TestApp, operator: TestOperator): Promise<ConsoleSession> {
  const browser = new Browser(t.app);
  const signedIn = await browser.signIn(operator.user);
  expect(signedIn.headers.location).toMatch(/^\/signin\/second-factor/);
  const step = await browser.submit(signedIn.headers.location as string, '/signin/second-factor', {
    code: nextCode(t, operator),
  });
  expect(step.statusCode, step.body).toBe(303);
  const entered = await browser.submit('/admin/enter', '/admin/enter', { code: nextCode(t, operator) });
  expect(entered.statusCode, entered.body).toBe(303);
  return new ConsoleSession(browser, t, operator);
}
