import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock } from '../../src/lib/clock.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { CookieJar } from '../helpers/cookie-jar.js';
import { forms, hiddenFields } from '../helpers/html.js';
import { freePort } from '../helpers/tcp-proxy.js';

/**
 * What the guide's snippets run against: the whole application listening on a port of
 * 127.0.0.1, with PUBLIC_URL (the issuer) equal to the address it listens on, on a fresh database
 * (PGlite, or the PostgreSQL of TEST_DATABASE_URL), and the real clock, since the client
 * libraries check the id_token's times against theirs.
 */
export interface Provider {
  t: TestApp;
  issuer: string;
  close(): Promise<void>;
}

export async function startProvider(): Promise<Provider> {
  const port = await freePort();
  const issuer = `http://127.0.0.1:${port}`;
  const t = await createTestApp({ env: { PUBLIC_URL: issuer }, clock: systemClock });
  await t.app.listen({ port, host: '127.0.0.1' });
  return { t, issuer, close: () => t.close() };
}

/** A site's request handler (an Express app) on a port of 127.0.0.1. */
export async function listen(
  handler: http.RequestListener,
): Promise<{ origin: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Visit {
  method: string;
  url: URL;
  status: number;
}

export interface Arrival {
  /** The last URL requested, or the one the walk stopped before (`stopBefore`). */
  url: URL;
  status: number;
  body: string;
  /** Every request made, in order. */
  visited: Visit[];
}

/**
 * A browser without a page engine: plain fetch, redirects followed by hand, cookies kept per
 * origin. Origins listed in `handlers` are answered in-process (an Auth.js handler) instead of over
 * the network. On the provider's pages it fills the sign-in form and answers the consent page.
 */
export class UserAgent {
  private readonly jars = new Map<string, CookieJar>();

  constructor(
    private readonly issuer: string,
    private readonly handlers: Record<string, (request: Request) => Promise<Response>> = {},
  ) {}

  private jar(url: URL): CookieJar {
    let jar = this.jars.get(url.origin);
    if (!jar) {
      jar = new CookieJar();
      this.jars.set(url.origin, jar);
    }
    return jar;
  }

  /** One request, with this browser's cookies for its origin; redirects are not followed. */
  async request(url: URL, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.jar(url).header() };
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const request = new Request(url, { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    const handler = this.handlers[url.origin];
    const response = handler ? await handler(request) : await fetch(request);
    return this.jar(url).keep(response);
  }

  /**
   * Goes to `start` and on from there as a browser would: follows redirects, signs in as `user`
   * on the sign-in page, clicks `decision` on the consent page, until a page that is none of
   * these, or until the next URL matches `stopBefore` (which is then not requested).
   */
  async walk(
    start: URL | string,
    options: {
      user?: { username: string; password: string };
      decision?: 'allow' | 'deny';
      shareEmail?: boolean;
      stopBefore?: (url: URL) => boolean;
      method?: string;
      form?: Record<string, string>;
    } = {},
  ): Promise<Arrival> {
    let url = new URL(start);
    let method = options.method ?? 'GET';
    let form = options.form;
    const visited: Visit[] = [];
    for (let step = 0; step < 20; step++) {
      if (options.stopBefore?.(url)) return { url, status: 0, body: '', visited };
      const response = await this.request(url, { method, ...(form ? { form } : {}) });
      visited.push({ method, url, status: response.status });
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        url = new URL(location, url);
        method = 'GET';
        form = undefined;
        continue;
      }
      const body = await response.text();
      const actions = url.origin === this.issuer && response.status === 200 ? forms(body) : [];
      if (actions.some((each) => each.action === '/signin') && options.user) {
        form = { ...hiddenFields(body, '/signin'), ...options.user };
        url = new URL('/signin', url);
        method = 'POST';
        continue;
      }
      const decision = '/api/v1/oauth/authorize/decision';
      if (actions.some((each) => each.action === decision)) {
        form = {
          ...hiddenFields(body, decision),
          decision: options.decision ?? 'allow',
          ...(options.shareEmail === false ? {} : { share_email: '1' }),
        };
        url = new URL(decision, url);
        method = 'POST';
        continue;
      }
      return { url, status: response.status, body, visited };
    }
    throw new Error(`more than 20 steps from ${start}`);
  }
}
