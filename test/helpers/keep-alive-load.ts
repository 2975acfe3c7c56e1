import http from 'node:http';
import type { Socket } from 'node:net';

/** What became of one request: an HTTP answer on a numbered connection, or the error instead. */
export interface LoadOutcome {
  connection: number;
  status?: number;
  /** The answer's Connection header, lower-cased. */
  connectionHeader?: string;
  body?: string;
  /** The error's code, when no answer came. */
  error?: string;
}

/**
 * Requests sent back to back over a few kept-alive connections (Node's http.Agent, as a load
 * balancer's upstream pool would), twice as many senders as connections so that none is idle for
 * long: a GET of the status and a POST to the token endpoint in turn. A sender stops at a refused
 * connection (nothing was sent), or when `stop()` is called.
 */
export function keepAliveLoad(baseUrl: string, connections = 4) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const outcomes: LoadOutcome[] = [];
  const numbers = new WeakMap<Socket, number>();
  let counter = 0;
  let stopped = false;
  let answered = 0;
  let onAnswer: () => void = () => undefined;

  const send = (post: boolean) =>
    new Promise<LoadOutcome>((resolve) => {
      let connection = -1;
      const request = http.request(
        `${baseUrl}${post ? '/api/v1/oauth/token' : '/api/v1/platform/status'}`,
        {
          agent,
          method: post ? 'POST' : 'GET',
          headers: post ? { 'content-type': 'application/x-www-form-urlencoded' } : {},
        },
        (response) => {
          let body = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => {
            body += chunk;
          });
          response.on('end', () =>
            resolve({
              connection,
              status: response.statusCode as number,
              connectionHeader: String(response.headers.connection ?? '').toLowerCase(),
              body,
            }),
          );
          response.on('error', (error: NodeJS.ErrnoException) =>
            resolve({ connection, error: error.code ?? error.message }),
          );
        },
      );
      request.on('socket', (socket: Socket) => {
        if (!numbers.has(socket)) numbers.set(socket, counter++);
        connection = numbers.get(socket) as number;
      });
      request.on('error', (error: NodeJS.ErrnoException) =>
        resolve({ connection, error: error.code ?? error.message }),
      );
      request.end(post ? 'grant_type=refresh_token&refresh_token=none&client_id=none' : undefined);
    });

  const sender = async (first: boolean) => {
    for (let post = first; !stopped; post = !post) {
      const outcome = await send(post);
      if (outcome.error === 'ECONNREFUSED') return;
      outcomes.push(outcome);
      if (outcome.status !== undefined) {
        answered += 1;
        onAnswer();
      }
    }
  };
  const senders = Array.from({ length: connections * 2 }, (_, index) => sender(index % 2 === 0));

  return {
    outcomes,
    /** Resolves once `count` requests have been answered. */
    answered(count: number): Promise<void> {
      return new Promise((resolve) => {
        onAnswer = () => {
          if (answered >= count) resolve();
        };
        onAnswer();
      });
    },
    /** Waits for every sender to end (they end by themselves once connections are refused). */
    async finished(): Promise<LoadOutcome[]> {
      await Promise.all(senders);
      agent.destroy();
      return outcomes;
    },
    stop(): void {
      stopped = true;
    },
  };
}
