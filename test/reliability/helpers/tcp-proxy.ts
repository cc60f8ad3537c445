// A TCP proxy on a loopback port, in front of a real server (PostgreSQL):
// `stop()` is the database going away (the port refuses connections and every
// open connection is cut), `start()` is it coming back on the same port. The
// real server is never touched, so other tests keep using it.
import net from 'node:net';

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  /** Connections accepted since the proxy was made. */
  accepted = 0;

  constructor(
    private readonly target: { host: string; port: number },
    public port = 0,
  ) {}

  /** Listens (on the same port as before, after a stop); resolves with the port. */
  async start(): Promise<number> {
    const server = net.createServer((client) => {
      // A connection accepted just before a stop, handed over just after it, is cut like the rest.
      if (this.server !== server) {
        client.destroy();
        return;
      }
      this.accepted++;
      const upstream = net.connect(this.target.port, this.target.host);
      for (const socket of [client, upstream]) {
        this.sockets.add(socket);
        socket.setNoDelay(true);
        socket.once('close', () => this.sockets.delete(socket));
      }
      // Either side failing or ending takes the other down with it, as a dropped connection would.
      const cut = () => {
        client.destroy();
        upstream.destroy();
      };
      client.once('error', cut).once('close', cut);
      upstream.once('error', cut).once('close', cut);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    return this.port;
  }

  /** Refuses new connections and cuts every open one at once. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise<void>((resolve) => server.close(() => resolve())) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Open connections through the proxy (each counted on both sides). */
  get open(): number {
    return this.sockets.size / 2;
  }
}
