import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a site's back-channel logout endpoint received. */
export interface ReceivedLogout {
  method: string;
  path: string;
  contentType: string | undefined;
  body: string;
}

/**
 * A site's back-channel logout endpoint on 127.0.0.1, in this process: it records every request
 * and answers with the next of `answers` (200 once they run out).
 */
export class LogoutSite {
  readonly received: ReceivedLogout[] = [];
  answers: Array<{ status: number; headers?: Record<string, string>; body?: string }> = [];
  private readonly server = http.createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => {
      body += chunk;
    });
    request.on('end', () => {
      this.received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        contentType: request.headers['content-type'],
        body,
      });
      const answer = this.answers.shift() ?? { status: 200 };
      response.writeHead(answer.status, answer.headers ?? {});
      response.end(answer.body ?? '');
    });
  });

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
  }

  url(path = '/backchannel'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
