import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a kept-alive connection must stay quiet during a drain before it is closed: no request
 * in progress, no byte received or sent. A client in active use sends its next request well within
 * this and gets it answered with `Connection: close` instead.
 */
export const DRAIN_QUIET_MS = 500;

/** A response in progress on the socket: Node's own idle test (http.Server.closeIdleConnections). */
function answering(socket: Socket): boolean {
  const response = (socket as Socket & { _httpMessage?: { writableFinished?: boolean } | null })._httpMessage;
  return Boolean(response && !response.writableFinished);
}

/**
 * Makes the server's close leave kept-alive connections to their clients for a moment. Node's
 * `server.close()` (called by Fastify's close) destroys every connection idle at that instant, and a
 * client that had just sent its next request on one got a reset and no answer: the race RFC 9112
 * §9.5 describes, which a client or a load balancer repairs by retrying only idempotent requests
 * (RFC 9110 §9.2.2), never a POST to the token endpoint.
 *
 * Here the close stops accepting connections at once, then closes each open connection once it
 * has been quiet for `quietMs`. Every response sent during the drain says `Connection: close`
 * (src/http/error-handler.ts), so a connection in use ends after its next answer.
 */
export function closeQuietConnectionsOnDrain(server: Server, quietMs = DRAIN_QUIET_MS): void {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let draining = false;
  // Called by server.close() (and by nothing else here): the instance's method shadows Node's.
  server.closeIdleConnections = () => {
    if (draining) return;
    draining = true;
    /** Each socket's byte counts when last seen, and since when they have not moved. */
    const seen = new Map<Socket, { traffic: number; since: number }>();
    const sweep = () => {
      const now = performance.now();
      for (const socket of sockets) {
        const traffic = socket.bytesRead + socket.bytesWritten;
        const last = seen.get(socket);
        if (!last || last.traffic !== traffic || answering(socket)) {
          seen.set(socket, { traffic, since: now });
        } else if (now - last.since >= quietMs) {
          socket.destroy();
        }
      }
    };
    sweep();
    const timer = setInterval(sweep, Math.max(10, Math.floor(quietMs / 5)));
    server.once('close', () => clearInterval(timer));
  };
}
