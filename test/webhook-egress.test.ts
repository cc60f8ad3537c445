// The webhook sender's network guard (src/webhooks/egress.ts), without a database: which URLs are refused, and what
// one POST does against real HTTP servers on loopback. Names are resolved by a DNS stub on loopback (no /etc/hosts,
// nothing leaves the machine): public answers are only ever resolved, never connected to. A redirect is an answer,
// never followed; a name that rebinds to 127.0.0.1 after passing the check is refused when the connection is made.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type EgressOptions, postJson, refuseUrl } from '../src/webhooks/egress.ts';
import { VERSION } from '../src/version.ts';
import { loadConfig } from '../src/config.ts';
import { type DnsStub, startDnsStub } from './helpers/dns-stub.ts';

const PUBLIC = '93.184.216.34';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface Receiver {
  url: string;
  port: number;
  seen: Seen[];
  close(): Promise<void>;
}

/** An HTTP server on 127.0.0.1 that keeps every request it receives and answers with `answer`. */
async function receiver(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<Receiver> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        // The sender keeps connections alive, and a hanging answer never ends: close them rather than wait.
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('WEBHOOKS_ALLOW_PRIVATE and WEBHOOKS_DNS_SERVERS are read once, and a bad server list stops the start', () => {
  const unset = loadConfig({});
  assert.equal(unset.webhooksAllowPrivate, false);
  assert.equal(unset.webhooksDnsServers, undefined);
  const set = loadConfig({ WEBHOOKS_ALLOW_PRIVATE: 'true', WEBHOOKS_DNS_SERVERS: '127.0.0.1:5353, [::1]:53,10.0.0.2' });
  assert.equal(set.webhooksAllowPrivate, true);
  assert.deepEqual(set.webhooksDnsServers, ['127.0.0.1:5353', '[::1]:53', '10.0.0.2']);
  assert.throws(() => loadConfig({ WEBHOOKS_DNS_SERVERS: 'dns.example.com:53' }), /WEBHOOKS_DNS_SERVERS/);
});

describe('webhook egress', () => {
  let dns: DnsStub;
  let guarded: EgressOptions;
  let open: EgressOptions;

  before(async () => {
    dns = await startDnsStub({
      'hooks.public.test': PUBLIC,
      'hooks.v6.test': '2606:2800:220:1:248:1893:25c8:1946',
      'loopback.evil.test': '127.0.0.1',
      'mixed.evil.test': [PUBLIC, '10.1.2.3'],
      'mixed6.evil.test': [PUBLIC, 'fd12:3456::1'],
      'rebind.evil.test': { turns: [[PUBLIC], ['127.0.0.1']] },
    });
    guarded = { allowPrivate: false, dnsServers: dns.servers };
    open = { allowPrivate: true, dnsServers: dns.servers };
  });
  after(async () => {
    await dns?.close();
  });

  describe('refuseUrl', () => {
    const refusedAddresses: [string, RegExp][] = [
      ['http://127.0.0.1/hook', /127\.0\.0\.1 \(a loopback address\)/],
      ['http://[::1]:8080/', /::1 \(a loopback address\)/],
      ['http://10.0.0.1/', /10\.0\.0\.1 \(a private address\)/],
      ['http://192.168.1.20/', /192\.168\.1\.20 \(a private address\)/],
      ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 \(the cloud metadata address\)/],
      ['http://[::ffff:127.0.0.1]/', /loopback/],
      ['http://100.64.0.1/', /100\.64\.0\.1 \(a carrier-grade NAT address\)/],
      ['http://0.0.0.0/', /unspecified/],
      ['http://[fd00::1]/', /unique local/],
      ['http://[fe80::1]/', /link-local/],
      ['http://2130706433/', /127\.0\.0\.1/],
      ['http://0x7f.1/', /127\.0\.0\.1/],
    ];
    for (const [url, reason] of refusedAddresses) {
      test(`refuses ${url}, naming the address`, async () => {
        const refused = await refuseUrl(url, guarded);
        assert.ok(refused, `${url} is refused`);
        assert.match(refused, reason);
        assert.match(refused, /public addresses only/);
      });
    }

    test('refuses other schemes, credentials and what is not a URL, even with private addresses on', async () => {
      for (const options of [guarded, open]) {
        assert.match((await refuseUrl('ftp://x/', options)) ?? '', /http:\/\/ or https:\/\//);
        assert.match((await refuseUrl('file:///etc/passwd', options)) ?? '', /http:\/\/ or https:\/\//);
        assert.match((await refuseUrl('http://u:p@hooks.public.test/', options)) ?? '', /user name or password/);
        assert.match((await refuseUrl('http://u@hooks.public.test/', options)) ?? '', /user name or password/);
        assert.match((await refuseUrl('not a url', options)) ?? '', /absolute http/);
      }
    });

    test('refuses a name that resolves to 127.0.0.1, naming the name and the address', async () => {
      const refused = await refuseUrl('https://loopback.evil.test/hook', guarded);
      assert.match(refused ?? '', /loopback\.evil\.test, which resolves to 127\.0\.0\.1 \(a loopback address\)/);
      assert.ok(dns.queries('loopback.evil.test') > 0, 'the stub was asked');
    });

    test('refuses a name with one public and one private answer (IPv4 and IPv6)', async () => {
      assert.match((await refuseUrl('https://mixed.evil.test/', guarded)) ?? '', /10\.1\.2\.3 \(a private address\)/);
      assert.match((await refuseUrl('https://mixed6.evil.test/', guarded)) ?? '', /fd12:3456::1/);
    });

    test('refuses localhost by name, and a name that does not resolve', async () => {
      assert.match((await refuseUrl('http://localhost:3000/', guarded)) ?? '', /localhost \(a loopback name\)/);
      assert.match((await refuseUrl('http://api.localhost/', guarded)) ?? '', /loopback name/);
      assert.match((await refuseUrl('https://nowhere.test/', guarded)) ?? '', /nowhere\.test does not resolve/);
      assert.match((await refuseUrl('https://nowhere.test/', open)) ?? '', /does not resolve/, 'checked either way');
    });

    test('accepts names that resolve to public addresses, only resolving them', async () => {
      const before = dns.queries('hooks.public.test');
      assert.equal(await refuseUrl('https://hooks.public.test/leadbook?x=1', guarded), null);
      assert.ok(dns.queries('hooks.public.test') > before, 'the name was resolved by the stub');
      assert.equal(await refuseUrl('https://hooks.v6.test/', guarded), null);
      assert.equal(await refuseUrl(`http://${PUBLIC}:8080/`, guarded), null);
    });

    test('with private addresses allowed, accepts loopback and private URLs', async () => {
      assert.equal(await refuseUrl('http://127.0.0.1:4567/hook', open), null);
      assert.equal(await refuseUrl('http://[::1]:4567/hook', open), null);
      assert.equal(await refuseUrl('http://loopback.evil.test/', open), null);
      assert.equal(await refuseUrl('http://10.0.0.1/', { allowPrivate: true }), null);
    });
  });

  describe('postJson', () => {
    const big = 'a'.repeat(10 * 1024);
    let main: Receiver;
    let other: Receiver;
    let hanging: Receiver;

    before(async () => {
      main = await receiver((req, res) => {
        if (req.url === '/redirect-private') {
          res.writeHead(302, { location: 'http://10.0.0.1/' }).end('moved');
        } else if (req.url === '/redirect-other') {
          res.writeHead(307, { location: `${other.url}/landed` }).end('moved');
        } else if (req.url === '/euro') {
          res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('€'.repeat(1000));
        } else if (req.url === '/stall-body') {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.write('partial');
        } else {
          res.writeHead(202, { 'content-type': 'text/plain' }).end(big);
        }
      });
      other = await receiver((_req, res) => res.writeHead(200).end('should not be reached'));
      hanging = await receiver(() => {});
    });
    after(async () => {
      await main?.close();
      await other?.close();
      await hanging?.close();
    });

    test('posts the body with its headers; the answer keeps status, latency and 1,024 bytes of the body', async () => {
      const body = JSON.stringify({ type: 'contact.created', data: { id: 1 } });
      const result = await postJson(`${main.url}/hook?x=1`, { 'webhook-id': 'msg_1' }, body, {
        ...open,
        timeoutMs: 5000,
      });
      assert.equal(result.status, 202);
      assert.equal(result.error, null);
      assert.ok(result.latencyMs > 0 && Number.isInteger(result.latencyMs), String(result.latencyMs));
      assert.equal(result.excerpt, 'a'.repeat(1024), 'the first 1,024 bytes of a 10 KB answer');
      const seen = main.seen.at(-1)!;
      assert.equal(seen.method, 'POST');
      assert.equal(seen.url, '/hook?x=1');
      assert.equal(seen.body, body);
      assert.equal(seen.headers['content-type'], 'application/json');
      assert.equal(seen.headers['user-agent'], `Leadbook-Webhooks/${VERSION}`);
      assert.equal(seen.headers['webhook-id'], 'msg_1');
      assert.equal(seen.headers['content-length'], String(Buffer.byteLength(body)));
    });

    test('the excerpt never cuts a character in two', async () => {
      const result = await postJson(`${main.url}/euro`, {}, '{}', { ...open, timeoutMs: 5000 });
      assert.equal(result.status, 200);
      // '€' is 3 bytes: 341 of them fill 1,023 bytes, a 342nd would not fit.
      assert.equal(result.excerpt, '€'.repeat(341));
    });

    test('a redirect to a private address is an answer, not followed', async () => {
      const result = await postJson(`${main.url}/redirect-private`, {}, '{}', { ...open, timeoutMs: 5000 });
      assert.equal(result.status, 302);
      assert.equal(result.error, null);
      assert.equal(result.excerpt, 'moved');
    });

    test('a redirect to another server is not followed: that server sees nothing', async () => {
      const result = await postJson(`${main.url}/redirect-other`, {}, '{}', { ...open, timeoutMs: 5000 });
      assert.equal(result.status, 307);
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.equal(other.seen.length, 0);
    });

    test('a receiver that never answers ends in a timeout after timeoutMs', async () => {
      const result = await postJson(`${hanging.url}/`, {}, '{}', { ...open, timeoutMs: 300 });
      assert.equal(result.status, null);
      assert.equal(result.error, 'timeout');
      assert.match(result.excerpt, /300 ms/);
      assert.ok(result.latencyMs >= 290 && result.latencyMs < 2000, String(result.latencyMs));
      assert.equal(hanging.seen.length, 1, 'the request did arrive');
    });

    test('an answer whose body stalls keeps its status and says timeout', async () => {
      const result = await postJson(`${main.url}/stall-body`, {}, '{}', { ...open, timeoutMs: 300 });
      assert.equal(result.status, 200);
      assert.equal(result.error, 'timeout');
      assert.equal(result.excerpt, 'partial');
    });

    test("the caller's signal cancels the exchange", async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const result = await postJson(`${hanging.url}/`, {}, '{}', {
        ...open,
        timeoutMs: 5000,
        signal: controller.signal,
      });
      assert.equal(result.status, null);
      assert.equal(result.error, 'aborted');
      assert.ok(result.latencyMs < 2000, String(result.latencyMs));
    });

    test('a closed port is a connection error', async () => {
      const closed = await receiver(() => {});
      await closed.close();
      const result = await postJson(`${closed.url}/`, {}, '{}', { ...open, timeoutMs: 2000 });
      assert.equal(result.status, null);
      assert.equal(result.error, 'ECONNREFUSED');
      assert.match(result.excerpt, /ECONNREFUSED/);
    });

    test('a name that rebinds to 127.0.0.1 after passing refuseUrl is refused when connecting', async () => {
      const url = `http://rebind.evil.test:${main.port}/hook`;
      const before = main.seen.length;
      assert.equal(await refuseUrl(url, guarded), null, 'the first answer is public');
      const result = await postJson(url, {}, '{}', { ...guarded, timeoutMs: 2000 });
      assert.equal(result.status, null);
      assert.equal(result.error, 'refused address 127.0.0.1');
      assert.match(result.excerpt, /127\.0\.0\.1 \(a loopback address\)/);
      assert.equal(main.seen.length, before, 'the loopback server never saw a request');
      assert.ok(dns.queries('rebind.evil.test') >= 3, 'resolved at save and again at connect');
    });

    test('an IP literal that is not public is refused before connecting', async () => {
      const before = main.seen.length;
      const cases = [
        [`${main.url}/hook`, '127.0.0.1'],
        // The URL parser writes the mapped address in hex; the check judges the IPv4 address inside.
        [`http://[::ffff:127.0.0.1]:${main.port}/hook`, '::ffff:7f00:1'],
      ];
      for (const [url, address] of cases) {
        const result = await postJson(url!, {}, '{}', { ...guarded, timeoutMs: 2000 });
        assert.equal(result.status, null);
        assert.equal(result.error, `refused address ${address}`);
        assert.match(result.excerpt, /loopback/);
      }
      const named = await postJson(`http://loopback.evil.test:${main.port}/`, {}, '{}', {
        ...guarded,
        timeoutMs: 2000,
      });
      assert.equal(named.error, 'refused address 127.0.0.1');
      assert.equal(main.seen.length, before, 'no request arrived');
    });

    test("with private addresses allowed and the system's resolver, a name reaches a loopback server", async () => {
      const before = main.seen.length;
      const result = await postJson(`http://localhost:${main.port}/named`, {}, '{}', {
        allowPrivate: true,
        timeoutMs: 5000,
      });
      assert.equal(result.status, 202, result.excerpt);
      assert.equal(main.seen.length, before + 1);
      assert.equal(main.seen.at(-1)!.headers.host, `localhost:${main.port}`);
    });

    test('a URL refuseUrl would refuse is not sent, and a name that does not resolve fails with its code', async () => {
      const bad = await postJson('ftp://hooks.public.test/', {}, '{}', { ...guarded, timeoutMs: 2000 });
      assert.deepEqual([bad.status, bad.error], [null, 'refused url']);
      assert.match(bad.excerpt, /http:\/\/ or https:\/\//);
      const nowhere = await postJson('http://nowhere.test/', {}, '{}', { ...guarded, timeoutMs: 2000 });
      assert.deepEqual([nowhere.status, nowhere.error], [null, 'ENOTFOUND']);
    });
  });
});
