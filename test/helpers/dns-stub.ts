// A DNS server on loopback (UDP, a random port) that answers A and AAAA queries from a table, so tests decide what
// a name resolves to without /etc/hosts and without any query leaving the machine. An entry may give its answers
// in turns (`{ turns: [['93.184.216.34'], ['127.0.0.1']] }`): the first query of each type gets the first turn, the
// next the second, and the last turn repeats — a name that rebinds between two look-ups. A `*` entry answers for
// every name not in the table; without one, any other name is NXDOMAIN.
import dgram from 'node:dgram';
import net from 'node:net';
import dnsPacket from 'dns-packet';

/** One turn: the addresses (IPv4 and IPv6 mixed) a name resolves to; A queries get the v4 ones, AAAA the v6. */
export type Addresses = string | readonly string[];
export type StubEntry = Addresses | { turns: readonly Addresses[] };

export interface DnsStub {
  /** For EgressOptions.dnsServers: `['127.0.0.1:PORT']`. */
  servers: string[];
  /** How many queries (any type) came for `name`. */
  queries(name: string): number;
  close(): Promise<void>;
  /** Lets the process end while the stub still listens (one shared by a whole test file). */
  unref(): void;
}

const normal = (name: string) => name.toLowerCase().replace(/\.$/, '');

export async function startDnsStub(table: Readonly<Record<string, StubEntry>>): Promise<DnsStub> {
  const entries = new Map(Object.entries(table).map(([name, entry]) => [normal(name), entry]));
  const counts = new Map<string, number>();
  const turnsUsed = new Map<string, number>();
  const socket = dgram.createSocket('udp4');

  const answersFor = (name: string, type: 'A' | 'AAAA'): string[] | null => {
    const entry = entries.get(name) ?? entries.get('*');
    if (entry === undefined) return null;
    const turns = typeof entry === 'object' && 'turns' in entry ? entry.turns : [entry as Addresses];
    const key = `${name} ${type}`;
    const used = turnsUsed.get(key) ?? 0;
    turnsUsed.set(key, used + 1);
    const turn = turns[Math.min(used, turns.length - 1)] ?? [];
    const family = type === 'A' ? 4 : 6;
    return (typeof turn === 'string' ? [turn] : [...turn]).filter((a) => net.isIP(a) === family);
  };

  socket.on('message', (message, peer) => {
    let query: dnsPacket.DecodedPacket;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (!question) return;
    const name = normal(question.name);
    counts.set(name, (counts.get(name) ?? 0) + 1);
    const type = question.type === 'A' || question.type === 'AAAA' ? question.type : null;
    const addresses = type ? answersFor(name, type) : entries.has(name) ? [] : null;
    const reply = dnsPacket.encode({
      type: 'response',
      id: query.id,
      // rcode in the low bits: 3 is NXDOMAIN; a known name without records of the type is NOERROR with no answers.
      flags: dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_AVAILABLE | (addresses === null ? 3 : 0),
      questions: [question],
      answers: (addresses ?? []).map((data) => ({
        type: type!,
        class: 'IN' as const,
        name: question.name,
        ttl: 0,
        data,
      })),
    });
    socket.send(reply, peer.port, peer.address);
  });

  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const { port } = socket.address();
  return {
    servers: [`127.0.0.1:${port}`],
    queries: (name) => counts.get(normal(name)) ?? 0,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
    unref: () => socket.unref(),
  };
}
