import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The client site's redirect_uri: a tiny HTTP server on 127.0.0.1 (a port of its own) that records
 * the full URL of every request to /callback and answers 200 "ok", as a site's backend would
 * before exchanging the code. Its favicon is 204 (a browser asks for one, and logs a 404 as a console
 * error); anything else is 404.
 */
export class CallbackServer {
  /** Every /callback request so far, as absolute URLs, oldest first. */
  readonly hits: URL[] = [];
  private readonly waiters = new Set<{ state: string; resolve: (url: URL) => void }>();

  private constructor(
    private readonly server: http.Server,
    readonly origin: string,
  ) {}

  /** The redirect_uri to register and send: `http://127.0.0.1:<port>/callback`. */
  get redirectUri(): string {
    return `${this.origin}/callback`;
  }

  static async start(): Promise<CallbackServer> {
    let self: CallbackServer | undefined;
    const server = http.createServer((request, response) => {
      const url = new URL(request.url ?? '/', self?.origin);
      if (url.pathname === '/favicon.ico') {
        response.writeHead(204).end();
        return;
      }
      if (request.method !== 'GET' || url.pathname !== '/callback') {
        response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      self?.record(url);
      response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('ok');
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    self = new CallbackServer(server, `http://127.0.0.1:${port}`);
    return self;
  }

  private record(url: URL): void {
    this.hits.push(url);
    const state = url.searchParams.get('state');
    for (const waiter of this.waiters) {
      if (waiter.state !== state) continue;
      this.waiters.delete(waiter);
      waiter.resolve(url);
    }
  }

  /**
   * The callback request carrying `state`: one that already arrived, or the next one. Call it
   * before the click that leads there, and await it after.
   */
  waitFor(state: string, timeoutMs = 15_000): Promise<URL> {
    const arrived = this.hits.find((url) => url.searchParams.get('state') === state);
    if (arrived) return Promise.resolve(arrived);
    return new Promise((resolve, reject) => {
      const waiter = {
        state,
        resolve: (url: URL) => {
          clearTimeout(timer);
          resolve(url);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const seen = this.hits.map((url) => url.href).join('\n  ') || '(none)';
        reject(new Error(`no request reached ${this.redirectUri} with state=${state}; seen:\n  ${seen}`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
