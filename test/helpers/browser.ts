import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { hiddenFields } from './html.js';

// The page helpers, for the tests that import them from here.
export * from './html.js';

/** A browser: keeps the cookies the service sets and sends them back, as a real one does. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly app: FastifyInstance) {}

  async get(url: string): Promise<LightMyRequestResponse> {
    return this.keep(await this.app.inject({ method: 'GET', url, headers: this.cookieHeader() }));
  }

  async post(url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.keep(
      await this.app.inject({
        method: 'POST',
        url,
        headers: { ...this.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams(form).toString(),
      }),
    );
  }

  /** GETs a page and POSTs its form with the page's own hidden fields (CSRF token included) plus `fields`. */
  async submit(pageUrl: string, action: string, fields: Record<string, string>) {
    const page = await this.get(pageUrl);
    expect(page.statusCode).toBe(200);
    return this.post(action, { ...hiddenFields(page.body, action), ...fields });
  }

  /** Signs `who` in on the page at `at` (the sign-in page of a pending request, or the plain one). */
  async signIn(who: { username: string; password: string }, at = '/signin'): Promise<LightMyRequestResponse> {
    const res = await this.submit(at, '/signin', { username: who.username, password: who.password });
    expect(res.statusCode).toBe(303);
    return res;
  }

  private cookieHeader(): Record<string, string> {
    if (this.cookies.size === 0) return {};
    return { cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ') };
  }

  private keep(res: LightMyRequestResponse): LightMyRequestResponse {
    for (const cookie of res.cookies as Array<{
      name: string;
      value: string;
      maxAge?: number;
      expires?: Date;
    }>) {
      const expired =
        cookie.maxAge === 0 || (cookie.expires !== undefined && cookie.expires.getTime() < Date.now());
      if (expired || cookie.value === '') this.cookies.delete(cookie.name);
      else this.cookies.set(cookie.name, cookie.value);
    }
    return res;
  }
}
