// A webhook receiver on loopback, as an integration would run one: it checks
// each delivery's signature with the `standardwebhooks` package (the
// specification's own), may fail the first attempts of each message, answer a
// status of the test's choosing or hang, and keeps what it saw: every attempt,
// the messages it accepted in order, signatures it refused, and any message
// that arrived while an earlier attempt of it was still being answered.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Delivered {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** The parsed body: {type, timestamp, data, changes?}. */
  // biome-ignore lint/suspicious/noExplicitAny: the tests read whatever the event carries
  event: any;
}

export interface ReceiverOptions {
  /** Attempts of each message answered 500 before one is accepted. */
  failFirst?: number;
  /** The answer's status for an attempt (after the failures above); 200 by default. */
  status?: (attempt: number, delivered: Delivered) => number;
  /** How long to wait before answering. */
  delayMs?: number;
  /** Extra text in each answer's body. */
  answer?: string;
  /** A Location header on each answer (for a 3xx). */
  location?: string;
}

export interface Receiver {
  url: string;
  /** The secrets a signature may be made with (one that verifies under any of them is valid). */
  secrets: string[];
  options: ReceiverOptions;
  /** Every attempt, as it came. */
  attempts: Delivered[];
  /** The attempts answered 2xx, in order. */
  accepted: Delivered[];
  /** Attempts whose signature no secret verified. */
  badSignatures: Delivered[];
  /** webhook-ids that arrived while an attempt of the same id was still being answered. */
  overlapping: string[];
  close(): Promise<void>;
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const tries = new Map<string, number>();
  const open = new Set<string>();
  const receiver: Receiver = {
    url: '',
    secrets: [],
    options,
    attempts: [],
    accepted: [],
    badSignatures: [],
    overlapping: [],
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      };
      const delivered: Delivered = {
        id: headers['webhook-id'],
        timestamp: headers['webhook-timestamp'],
        signature: headers['webhook-signature'],
        body,
        event: body ? JSON.parse(body) : null,
      };
      receiver.attempts.push(delivered);
      if (open.has(delivered.id)) receiver.overlapping.push(delivered.id);
      open.add(delivered.id);
      const verified = receiver.secrets.some((secret) => {
        try {
          new Webhook(secret).verify(body, headers);
          return true;
        } catch {
          return false;
        }
      });
      if (!verified) receiver.badSignatures.push(delivered);
      const attempt = (tries.get(delivered.id) ?? 0) + 1;
      tries.set(delivered.id, attempt);
      const status =
        attempt <= (options.failFirst ?? 0) ? 500 : (options.status?.(attempt, delivered) ?? (verified ? 200 : 401));
      const reply = () => {
        if (!res.writable) return;
        open.delete(delivered.id);
        if (status >= 200 && status < 300) receiver.accepted.push(delivered);
        res.writeHead(status, {
          'content-type': 'text/plain',
          ...(options.location ? { location: options.location } : {}),
        });
        res.end(`${status} for attempt ${attempt}${options.answer ?? ''}`);
      };
      res.once('close', () => open.delete(delivered.id));
      if (options.delayMs) setTimeout(reply, options.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

/** Waits until `done()` holds, checking every 50 ms; throws with `what` after `timeoutMs`. */
export async function until(done: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting: ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
