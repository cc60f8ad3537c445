// The webhook sender's way out: which URLs may receive webhooks, and one POST to them. A webhook URL is typed by a
// user, so it must not become a way into the machine's own network (SSRF): loopback, private, link-local (the cloud
// metadata service at 169.254.169.254) and other special addresses are refused when the URL is saved, and again
// for every connection the sender opens, because the name may resolve elsewhere by then (DNS rebinding). Redirects
// are never followed: a 3xx is an answer like any other, not an invitation to go somewhere unchecked.
import dns from 'node:dns';
import type http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import ipaddr from 'ipaddr.js';
import { nodeHttp } from '../node-http.ts';
import { VERSION } from '../version.ts';

export interface EgressOptions {
  /** WEBHOOKS_ALLOW_PRIVATE=true: loopback and private addresses are allowed (tests, an intranet). */
  allowPrivate: boolean;
  /** WEBHOOKS_DNS_SERVERS (host:port, comma-separated): resolve with these servers instead of the system's. */
  dnsServers?: readonly string[];
}

export interface PostResult {
  /** The answer's status code; null when none came (refused address, DNS failure, connection error, timeout). */
  status: number | null;
  /** Whole milliseconds from the call to the end of the exchange, rounded up (so never 0). */
  latencyMs: number;
  /** The first 1,024 bytes of the answer's body as text (or the error's description when none came). */
  excerpt: string;
  /**
   * Why no answer came: 'timeout', 'refused address 127.0.0.1', 'ECONNREFUSED', …; null when an answer came.
   * An answer whose body stalls or breaks off keeps its status and says why here ('timeout', 'ECONNRESET').
   */
  error: string | null;
}

/** What the delivery log keeps of an answer's body. */
const EXCERPT_BYTES = 1024;
/** More of a body than this is not read: the connection is dropped instead (a receiver cannot make us download). */
const READ_BYTES = 64 * 1024;
/** Per query to WEBHOOKS_DNS_SERVERS; two tries. The system resolver keeps its own settings. */
const DNS_QUERY_MS = 2000;

/** A connection refused before it was made; its message is PostResult.error. */
class RefusedAddress extends Error {
  readonly code = 'EREFUSEDADDRESS';
  constructor(
    readonly address: string,
    readonly sentence: string,
  ) {
    super(`refused address ${address}`);
    this.name = 'RefusedAddress';
  }
}

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  uniqueLocal: 'a private (unique local) address',
  linkLocal: 'a link-local address',
  carrierGradeNat: 'a carrier-grade NAT address',
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

/** Cloud metadata services (AWS, GCP, Azure, …; AWS's IPv6 one): named as such, as that is what an attack is after. */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254']);

/** Why `address` (an IP address as text) is not public, as a few words; null when it is public. */
function addressProblem(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return 'not an IP address';
  }
  // ::ffff:127.0.0.1 reaches 127.0.0.1: judge the IPv4 address inside.
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const range = ip.range();
  if (range === 'unicast') return null;
  if (METADATA.has(ip.toString())) return 'the cloud metadata address';
  // 6to4, Teredo, NAT64 (rfc6052) and the like carry another address inside: refused rather than unwrapped.
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`;
}

function refusal(address: string, problem: string): string {
  return `must not point to ${address} (${problem}): webhooks go to public addresses only`;
}

/** The URL's host as a bare name or address (no IPv6 brackets, no trailing dot), or a refusal sentence. */
function checkUrl(raw: string): { url: URL; host: string } | { refused: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { refused: 'must be an absolute http:// or https:// URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { refused: 'must be an http:// or https:// URL' };
  }
  if (url.username || url.password) return { refused: 'must not carry a user name or password' };
  // The URL parser has already turned 0x7f.1, 2130706433 and the like into 127.0.0.1.
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  if (!host) return { refused: 'must name a host' };
  return { url, host };
}

/** localhost and *.localhost are loopback by definition (RFC 6761), whatever a DNS server would say. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'localhost' || name.endsWith('.localhost');
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Every address `host` resolves to: the system's resolver (hosts file included), or A and AAAA queries to
 * `dnsServers`. Rejects with the resolver's error (code ENOTFOUND, ENODATA, ETIMEOUT, …) when there is none.
 */
async function resolveAll(host: string, dnsServers?: readonly string[], signal?: AbortSignal): Promise<string[]> {
  if (!dnsServers?.length) {
    const found = await dns.promises.lookup(host, { all: true });
    return found.map((a) => a.address);
  }
  // A resolver per look-up: nothing cached between the check at save time and the one at connect time.
  const resolver = new dns.promises.Resolver({ timeout: DNS_QUERY_MS, tries: 2 });
  resolver.setServers([...dnsServers]);
  const cancel = () => resolver.cancel();
  signal?.addEventListener('abort', cancel, { once: true });
  try {
    const answers = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const addresses = answers.flatMap((a) => (a.status === 'fulfilled' ? a.value : []));
    if (addresses.length > 0) return addresses;
    // Neither family answered: NXDOMAIN and "no such record" both mean the name does not resolve.
    const failed = answers.find((a) => a.status === 'rejected' && errorCode(a.reason) !== 'ENODATA');
    if (failed?.status === 'rejected') throw failed.reason;
    throw Object.assign(new Error(`no address for ${host}`), { code: 'ENOTFOUND' });
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
}

/** The first address among `addresses` that may not receive webhooks, with why; null when all may. */
function firstRefused(addresses: readonly string[]): { address: string; problem: string } | null {
  for (const address of addresses) {
    const problem = addressProblem(address);
    if (problem) return { address, problem };
  }
  return null;
}

/** Why `url` may not receive webhooks (a sentence for a 422 on `url`), or null when it may. Resolves the host. */
export async function refuseUrl(url: string, options: EgressOptions): Promise<string | null> {
  const checked = checkUrl(url);
  if ('refused' in checked) return checked.refused;
  const { host } = checked;
  if (net.isIP(host)) {
    if (options.allowPrivate) return null;
    const problem = addressProblem(host);
    return problem ? refusal(host, problem) : null;
  }
  if (!options.allowPrivate && isLocalhostName(host)) return refusal(host, 'a loopback name');
  // Resolved with private addresses allowed too: a mistyped host is better told now than after a day of retries.
  let addresses: string[];
  try {
    addresses = await resolveAll(host, options.dnsServers);
  } catch (error) {
    const code = errorCode(error);
    return code === 'ENOTFOUND' || code === 'ENODATA'
      ? `must name a host that resolves: ${host} does not resolve`
      : `must name a host that resolves: looking up ${host} failed (${code ?? 'error'}), try again`;
  }
  if (options.allowPrivate) return null;
  // One private answer is enough: a connection may be made to any of them.
  const refused = firstRefused(addresses);
  return refused
    ? `must not point to ${host}, which resolves to ${refused.address} (${refused.problem}): ` +
        'webhooks go to public addresses only'
    : null;
}

/**
 * A `lookup` for node's sockets that resolves like refuseUrl and fails the connection when any address is not
 * public: the check runs for every new connection, right before it is made, so a name that resolved to a public
 * address when the webhook was saved and resolves to 127.0.0.1 now is caught.
 */
function guardedLookup(options: EgressOptions, signal: AbortSignal): net.LookupFunction {
  return (hostname, lookupOptions, callback) => {
    resolveAll(hostname, options.dnsServers, signal).then(
      (resolved) => {
        const refused = options.allowPrivate ? null : firstRefused(resolved);
        if (refused) {
          callback(new RefusedAddress(refused.address, refusal(refused.address, refused.problem)), '');
          return;
        }
        const family = lookupOptions.family;
        const wanted = family === 4 || family === 'IPv4' ? 4 : family === 6 || family === 'IPv6' ? 6 : 0;
        const addresses = resolved
          .map((address) => ({ address, family: net.isIP(address) }))
          .filter((a) => wanted === 0 || a.family === wanted);
        const first = addresses[0];
        if (!first) {
          callback(Object.assign(new Error(`no IPv${wanted} address for ${hostname}`), { code: 'ENOTFOUND' }), '');
        } else if (lookupOptions.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, ''),
    );
  };
}

interface Agents {
  http: http.Agent;
  https: https.Agent;
}

// Kept-alive connections per way of checking: a socket opened with private addresses allowed must never carry a
// request that requires a public one. Idle sockets are closed after 4 s, before the common 5 s server-side timeout,
// so a request is rarely written into a connection the receiver is closing.
const agents = new Map<string, Agents>();

function agentsFor(options: EgressOptions): Agents {
  const key = `${options.allowPrivate}|${(options.dnsServers ?? []).join(',')}`;
  let found = agents.get(key);
  if (!found) {
    const settings = { keepAlive: true, timeout: 4000 };
    found = { http: new nodeHttp.Agent(settings), https: new https.Agent(settings) };
    agents.set(key, found);
  }
  return found;
}

/** The first `max` bytes of `bytes` as text, not cutting a UTF-8 character in two. */
function utf8Prefix(bytes: Buffer, max: number): string {
  if (bytes.length <= max) return bytes.toString('utf8');
  let end = max;
  // Back off continuation bytes (10xxxxxx) to the start of the character the cut falls in, if it does not fit.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}

/** POSTs `body` (JSON text) with `headers`; never follows a redirect; checks every address it connects to. */
export function postJson(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: EgressOptions & { timeoutMs: number; signal?: AbortSignal },
): Promise<PostResult> {
  const started = performance.now();
  const latencyMs = () => Math.max(1, Math.ceil(performance.now() - started));
  const failed = (error: string, excerpt: string): PostResult => ({
    status: null,
    latencyMs: latencyMs(),
    excerpt,
    error,
  });

  const checked = checkUrl(url);
  if ('refused' in checked) return Promise.resolve(failed('refused url', checked.refused));
  const { url: target, host } = checked;
  if (!options.allowPrivate) {
    // Node does not call `lookup` for an IP address: check it here, before anything is sent.
    const problem = net.isIP(host) ? addressProblem(host) : isLocalhostName(host) ? 'a loopback name' : null;
    if (problem) return Promise.resolve(failed(`refused address ${host}`, refusal(host, problem)));
  }

  const timeout = AbortSignal.timeout(options.timeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  if (signal.aborted) return Promise.resolve(failed('aborted', 'the delivery was cancelled before it started'));

  return new Promise((resolve) => {
    let status: number | null = null;
    const chunks: Buffer[] = [];
    let received = 0;
    let settled = false;
    const settle = (error: string | null, description?: string) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      const excerpt = status === null ? (description ?? error ?? '') : utf8Prefix(Buffer.concat(chunks), EXCERPT_BYTES);
      resolve({ status, latencyMs: latencyMs(), excerpt, error });
    };
    const onError = (error: Error) => {
      const refused = error instanceof RefusedAddress ? error : null;
      settle(refused?.message ?? errorCode(error) ?? error.message, refused?.sentence ?? error.message);
    };

    let request: http.ClientRequest | undefined;
    const onAbort = () => {
      if (timeout.aborted) settle('timeout', `no complete answer within ${options.timeoutMs} ms`);
      else settle('aborted', 'the delivery was cancelled');
      request?.destroy();
    };
    signal.addEventListener('abort', onAbort, { once: true });

    const secure = target.protocol === 'https:';
    const pool = agentsFor(options);
    try {
      request = (secure ? https : nodeHttp).request(
        target,
        {
          method: 'POST',
          agent: secure ? pool.https : pool.http,
          lookup: guardedLookup(options, signal),
          headers: {
            'content-type': 'application/json',
            'user-agent': `Leadbook-Webhooks/${VERSION}`,
            ...headers,
            'content-length': String(Buffer.byteLength(body)),
          },
        },
        (response) => {
          status = response.statusCode ?? null;
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk);
            received += chunk.length;
            if (received >= READ_BYTES) {
              settle(null);
              response.destroy();
            }
          });
          response.on('end', () => settle(null));
          response.on('error', onError);
          // Closed without 'end' and without an error: the body was cut short; what came is what there is.
          response.on('close', () => settle(response.complete ? null : 'ECONNRESET', 'the answer broke off'));
        },
      );
    } catch (error) {
      // A header value node refuses to send (a line break in it, …).
      onError(error as Error);
      return;
    }
    request.on('error', onError);
    request.end(body);
  });
}
