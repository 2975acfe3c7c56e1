import net from 'node:net';

/**
 * A TCP forwarder on 127.0.0.1, listening before the server behind it starts: it gives the server
 * a PUBLIC_URL (its OIDC issuer) that is known in advance, while the server itself still listens
 * on PORT=0 (a port the kernel picks). Without it the issuer would be the default
 * `http://localhost:$PORT`, that is `http://localhost:0`, which no client can reach. A reverse
 * proxy in front of the service is also how it runs in production, so nothing here is special.
 */
export class FrontDoor {
  private upstreamPort: number | undefined;
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  port = 0;

  private constructor() {
    this.server = net.createServer((incoming) => {
      if (this.upstreamPort === undefined) {
        incoming.destroy();
        return;
      }
      const upstream = net.createConnection(this.upstreamPort, '127.0.0.1');
      for (const socket of [incoming, upstream]) {
        this.sockets.add(socket);
        socket.on('close', () => this.sockets.delete(socket));
        socket.on('error', () => {
          incoming.destroy();
          upstream.destroy();
        });
      }
      incoming.pipe(upstream).pipe(incoming);
    });
  }

  /** `http://127.0.0.1:<port>`: the PUBLIC_URL to give the server. */
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static async open(): Promise<FrontDoor> {
    const door = new FrontDoor();
    await new Promise<void>((resolve, reject) => {
      door.server.once('error', reject);
      door.server.listen(0, '127.0.0.1', () => resolve());
    });
    door.port = (door.server.address() as net.AddressInfo).port;
    return door;
  }

  /** Where connections go from now on (until then they are refused). */
  forwardTo(port: number): void {
    this.upstreamPort = port;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
