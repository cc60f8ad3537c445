// A webhook receiver for the benches: an HTTP server on 127.0.0.1 in the bench's own process that the app delivers
// to (run with WEBHOOKS_ALLOW_PRIVATE=true). webhooks.ts uses a hanging one and a fast one; run.ts a fast one, so
// that its writes are measured with a webhook endpoint switched on.
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What a receiver saw, counted from its start. */
export interface Heard {
  connections: number;
  requests: number;
}

/**
 * A webhook receiver on 127.0.0.1 in this process: `hang` takes each request's body and never answers (the app's
 * timeout ends it); otherwise each is answered 204 at once. It counts connections and requests, and knows how many
 * requests it holds unanswered now.
 */
export class Receiver {
  readonly heard: Heard = { connections: 0, requests: 0 };
  /** Requests held unanswered now (hang). */
  open = 0;
  /** The first delivery's headers and body, to check its signature. */
  first?: { headers: Record<string, string>; body: string };
  url = '';
  private readonly server: http.Server;
  private readonly sockets = new Set<Socket>();

  constructor(readonly hang: boolean) {
    this.server = http.createServer((req, res) => {
      this.heard.requests++;
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.first ??= {
          headers: Object.fromEntries(
            ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(req.headers[h] ?? '')]),
          ),
          body: Buffer.concat(chunks).toString('utf8'),
        };
        if (!this.hang) res.writeHead(204).end();
      });
      if (this.hang) {
        this.open++;
        res.once('close', () => this.open--);
      }
    });
    // Never time a request out here: the app's timeout is what is measured.
    this.server.requestTimeout = 0;
    this.server.headersTimeout = 0;
    this.server.on('connection', (socket: Socket) => {
      this.heard.connections++;
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Drops every connection (those held included): the app's sends end at once instead of at its timeout. */
  release(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  async close(): Promise<void> {
    this.release();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
