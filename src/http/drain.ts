// A request answered before its body was read (an upload refused for its
// size, a JSON body over the limit, a stranger's upload) keeps its connection
// while the client sends the rest, which is read and thrown away. A server
// that closes at once makes a client that is still sending (Node's own fetch
// among them) fail with EPIPE or "other side closed" instead of reading the
// answer. The reading is bounded: a body declared larger than the bound, or of
// unknown length, is cut after the answer as before, and so is one whose rest
// is slow to come, so nobody can keep the server reading for ever.
import type { FastifyInstance } from 'fastify';

// Above the largest upload we take (a 50 MiB import and its envelope), below what nobody honest sends (the
// security suite's 100–200 MiB bodies are still cut).
export const DRAIN_MAX_BYTES = 64 * 1024 * 1024;
const DRAIN_MAX_MS = 30_000;

export function drainUnreadBodies(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const raw = request.raw;
    if (raw.complete || raw.readableEnded) return payload;
    const declared = Number(request.headers['content-length']);
    if (!(declared <= DRAIN_MAX_BYTES)) {
      reply.header('connection', 'close');
      return payload;
    }
    reply.removeHeader('connection');
    const timer = setTimeout(() => raw.socket?.destroy(), DRAIN_MAX_MS).unref();
    raw.once('end', () => clearTimeout(timer));
    raw.once('close', () => clearTimeout(timer));
    raw.resume();
    return payload;
  });
}
