import { readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * A TCP proxy in front of a database server that a test can cut and restore, to play a database
 * outage without stopping the real server.
 */
export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  private resetNext = false;
  port = 0;

  constructor(
    private readonly upstreamHost: string,
    private readonly upstreamPort: number,
  ) {}

  /** Starts listening (again on the same port after `cut`). */
  async start(): Promise<number> {
    const server = net.createServer((client) => {
      const upstream = net.createConnection(this.upstreamPort, this.upstreamHost);
      // Before the pipe: the bytes that trigger a reset are never forwarded.
      client.on('data', () => {
        if (!this.resetNext) return;
        this.resetNext = false;
        client.resetAndDestroy();
        upstream.destroy();
      });
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
    return this.port;
  }

  /**
   * Resets (TCP RST) the connection on which the client next sends, instead of forwarding: its
   * query fails with ECONNRESET, as when a database host crashes mid-query. Later ones pass.
   */
  resetOnNextSend(): void {
    this.resetNext = true;
  }

  /** Stops accepting and drops every open connection, as a database that went away. */
  async cut(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise((resolve) => server.close(resolve));
  }
}

/** The first port of the kernel's ephemeral range (Linux's default is 32768). */
function ephemeralRangeStart(): number {
  try {
    const first = Number(
      readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return Number.isInteger(first) && first > 2048 ? first : 32768;
  } catch {
    return 32768;
  }
}

async function canListen(port: number): Promise<number | undefined> {
  const server = net.createServer();
  const bound = await new Promise<boolean>((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => resolve(true));
  });
  if (!bound) return undefined;
  const { port: taken } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return taken;
}

/**
 * A free TCP port on 127.0.0.1, below the kernel's ephemeral range: a port the kernel hands out
 * (listen(0), an outgoing connection) may be taken by another test file between this call and the
 * caller's listen, which for a server started after `npm ci` is tens of seconds.
 */
export async function freePort(): Promise<number> {
  const below = ephemeralRangeStart();
  const lowest = Math.max(1024, below - 12_000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await canListen(lowest + Math.floor(Math.random() * (below - lowest)));
    if (port !== undefined) return port;
  }
  return (await canListen(0)) as number;
}
