// GET /metrics over HTTP, on each database: the scrape is valid Prometheus text exposition format (checked line by
// line as promtool's parser does: every sample's family has HELP and TYPE, names and labels follow the grammar, no
// series twice, a histogram's buckets are cumulative and its _count is its +Inf bucket); counters move by exactly
// the requests made, by route pattern and status; the database's query times, its pool, the scheduler's runs, the
// intake's drops and the process's own metrics are there; METRICS_TOKEN closes the door to everyone but its bearer.
// And every answer carries X-Request-Id: the caller's own when usable, else a fresh UUID, on its log lines too.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { startApp, type TestApp } from './helpers/app.ts';
import { DIALECTS } from './helpers/database.ts';

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: Sample[];
}

/** A sample value as Prometheus reads one: a float, or NaN / +Inf / -Inf in any case. */
function parseValue(text: string, line: number): number {
  if (/^[+-]?inf$/i.test(text)) return text.startsWith('-') ? -Infinity : Infinity;
  if (/^nan$/i.test(text)) return Number.NaN;
  assert.match(text, /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/, `line ${line}: a number, not ${text}`);
  return Number(text);
}

/** `{a="x",b="y\"z"}` from position `at`: the labels, with escapes resolved, and where the block ends. */
function parseLabels(text: string, at: number, line: number): { labels: Record<string, string>; end: number } {
  const labels: Record<string, string> = {};
  let i = at + 1;
  while (text[i] !== '}') {
    const name = /^[^=]*/.exec(text.slice(i))![0];
    assert.match(name, LABEL_NAME, `line ${line}: label name ${name}`);
    assert.ok(!name.startsWith('__'), `line ${line}: ${name} is reserved`);
    assert.ok(!(name in labels), `line ${line}: label ${name} twice`);
    i += name.length;
    assert.equal(text.slice(i, i + 2), '="', `line ${line}: ${name}= and a quoted value`);
    i += 2;
    let value = '';
    for (;;) {
      const c = text[i];
      assert.ok(c !== undefined && c !== '\n', `line ${line}: unterminated label value`);
      if (c === '"') break;
      if (c === '\\') {
        const next = text[i + 1];
        assert.ok(next === '\\' || next === '"' || next === 'n', `line ${line}: escape \\${next}`);
        value += next === 'n' ? '\n' : next;
        i += 2;
      } else {
        value += c;
        i += 1;
      }
    }
    labels[name] = value;
    i += 1;
    if (text[i] === ',') i += 1;
    else assert.equal(text[i], '}', `line ${line}: , or } after a label`);
  }
  return { labels, end: i + 1 };
}

/** The family a sample belongs to: a histogram's or summary's _bucket, _sum and _count belong to it. */
function familyOf(name: string, families: Map<string, Family>): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name);
  const family = base ? families.get(base[1]!) : undefined;
  if (!family) return undefined;
  if (family.type === 'histogram' || (family.type === 'summary' && base![2] !== 'bucket')) return family;
  return undefined;
}

const seriesKey = (name: string, labels: Record<string, string>, leave: string[] = []) =>
  `${name}{${Object.keys(labels)
    .filter((k) => !leave.includes(k))
    .sort()
    .map((k) => `${k}=${JSON.stringify(labels[k])}`)
    .join(',')}}`;

/**
 * Reads the text format as Prometheus's own parser does and checks what promtool checks: it throws (an assertion)
 * on the first thing Prometheus would refuse.
 */
function parseExposition(text: string): Map<string, Family> {
  assert.ok(text.endsWith('\n'), 'the text ends with a newline');
  const families = new Map<string, Family>();
  const seen = new Set<string>();
  const closed = new Set<string>();
  let current: string | undefined;
  const enter = (name: string) => {
    if (current === name) return;
    if (current) closed.add(current);
    assert.ok(!closed.has(name), `${name}: its lines are not together`);
    current = name;
  };
  const family = (name: string) => {
    const f = families.get(name) ?? { name, samples: [] };
    families.set(name, f);
    return f;
  };
  text.split('\n').forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    const meta = /^#\s*(HELP|TYPE)\s+(\S+)(?:\s(.*))?$/.exec(raw);
    if (meta) {
      const [, kind, name, rest = ''] = meta as unknown as [string, string, string, string?];
      assert.match(name, METRIC_NAME, `line ${line}: metric name ${name}`);
      enter(name);
      const f = family(name);
      assert.equal(f.samples.length, 0, `line ${line}: ${kind} of ${name} after its samples`);
      if (kind === 'HELP') {
        assert.equal(f.help, undefined, `line ${line}: a second HELP for ${name}`);
        assert.ok(!/\\[^\\n]/.test(rest.replace(/\\\\/g, '')), `line ${line}: HELP escapes only \\\\ and \\n`);
        f.help = rest;
      } else {
        assert.equal(f.type, undefined, `line ${line}: a second TYPE for ${name}`);
        assert.ok(TYPES.has(rest.trim()), `line ${line}: type ${rest}`);
        f.type = rest.trim();
      }
      return;
    }
    if (raw.startsWith('#')) return;
    const name = /^[^{\s]*/.exec(raw)![0];
    assert.match(name, METRIC_NAME, `line ${line}: metric name ${name}`);
    let at = name.length;
    let labels: Record<string, string> = {};
    if (raw[at] === '{') ({ labels, end: at } = parseLabels(raw, at, line));
    const fields = raw.slice(at).trim().split(/\s+/);
    assert.ok(raw[at] === ' ' && fields.length >= 1 && fields.length <= 2, `line ${line}: value [timestamp]`);
    if (fields[1] !== undefined) assert.match(fields[1], /^-?\d+$/, `line ${line}: timestamp`);
    const value = parseValue(fields[0]!, line);
    const f = familyOf(name, families);
    assert.ok(f, `line ${line}: ${name} has no HELP and TYPE before it`);
    assert.ok(f.help !== undefined && f.type !== undefined, `line ${line}: ${f.name} lacks HELP or TYPE`);
    enter(f.name);
    const key = seriesKey(name, labels);
    assert.ok(!seen.has(key), `line ${line}: ${key} twice`);
    seen.add(key);
    if (f.type === 'counter') assert.ok(value >= 0, `line ${line}: a counter below 0`);
    if (f.type === 'histogram' && name.endsWith('_bucket')) assert.ok('le' in labels, `line ${line}: a bucket has le`);
    f.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

/** Per series: buckets in order of `le`, cumulative, ending at +Inf, which equals _count; a _sum beside them. */
function checkHistogram(f: Family): void {
  const series = new Map<string, { buckets: [number, number][]; count?: number; sum?: number }>();
  for (const s of f.samples) {
    const key = seriesKey(f.name, s.labels, ['le']);
    const one = series.get(key) ?? { buckets: [] };
    series.set(key, one);
    if (s.name === `${f.name}_bucket`) one.buckets.push([parseValue(s.labels.le!, 0), s.value]);
    else if (s.name === `${f.name}_count`) one.count = s.value;
    else if (s.name === `${f.name}_sum`) one.sum = s.value;
    else assert.fail(`${s.name} in histogram ${f.name}`);
  }
  for (const [key, one] of series) {
    const les = one.buckets.map(([le]) => le);
    assert.deepEqual(
      les,
      [...les].sort((a, b) => a - b),
      `${key}: buckets in order of le`,
    );
    assert.equal(les.at(-1), Infinity, `${key}: a +Inf bucket`);
    one.buckets.forEach(([, v], i) => {
      if (i > 0) assert.ok(v >= one.buckets[i - 1]![1], `${key}: buckets are cumulative`);
    });
    assert.equal(one.count, one.buckets.at(-1)![1], `${key}: _count is the +Inf bucket`);
    assert.ok(one.sum !== undefined, `${key}: a _sum`);
  }
}

/** The value of one series (labels given in full), or undefined when it is not in the scrape. */
function sampleOf(
  families: Map<string, Family>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const f = familyOf(name, families);
  const key = seriesKey(name, labels);
  return f?.samples.find((s) => s.name === name && seriesKey(s.name, s.labels) === key)?.value;
}

for (const dialect of DIALECTS) {
  describe(`metrics and request ids (${dialect})`, () => {
    let app: TestApp;

    const scrape = async (headers: Record<string, string> = {}) => {
      const res = await app.request('GET', '/metrics', { token: null, headers });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8');
      return parseExposition(res.text);
    };
    const http = (route: string, status: number, method = 'GET') => ({ method, route, status: String(status) });

    before(async () => {
      app = await startApp(dialect, { env: { SCHEDULER_TICK_MS: '50', LOG_LEVEL: 'info' } });
    });
    after(async () => {
      await app?.close();
    });

    test('the scrape is valid exposition format, with the process, event loop, heap and database', async () => {
      const families = await scrape();
      for (const name of [
        'process_cpu_user_seconds_total',
        'process_resident_memory_bytes',
        'nodejs_heap_size_used_bytes',
        'nodejs_eventloop_lag_seconds',
        'nodejs_eventloop_lag_p99_seconds',
      ])
        assert.ok(families.get(name)?.samples.length, `${name} is there`);
      const types = {
        leadbook_http_requests_total: 'counter',
        leadbook_http_request_duration_seconds: 'histogram',
        leadbook_db_query_duration_seconds: 'histogram',
        leadbook_scheduler_runs_total: 'counter',
        leadbook_webhook_attempts_total: 'counter',
        leadbook_intake_drops_total: 'counter',
      };
      for (const [name, type] of Object.entries(types)) assert.equal(families.get(name)?.type, type, name);
      // Signing the admin up ran queries: they were timed, on this dialect.
      const queries = sampleOf(families, 'leadbook_db_query_duration_seconds_count', { dialect });
      assert.ok(queries !== undefined && queries > 0, `queries timed: ${queries}`);
      assert.ok(sampleOf(families, 'leadbook_db_query_duration_seconds_sum', { dialect })! > 0);
      if (dialect !== 'sqlite') {
        assert.equal(sampleOf(families, 'leadbook_db_pool_max_connections'), 10);
        const open = sampleOf(families, 'leadbook_db_pool_connections')!;
        const idle = sampleOf(families, 'leadbook_db_pool_idle_connections')!;
        assert.ok(open >= 1 && open <= 10 && idle <= open, `open ${open}, idle ${idle}`);
        assert.equal(sampleOf(families, 'leadbook_db_pool_waiting_queries'), 0);
      } else {
        assert.equal(sampleOf(families, 'leadbook_db_group_commit_waiting_writes'), 0);
        assert.equal(families.get('leadbook_db_pool_connections'), undefined, 'SQLite has no pool to show');
      }
    });

    test('counters and histograms move by exactly the requests made, by route pattern and status', async () => {
      const made = await app.post('/api/v1/contacts', { name: 'Metered Mia' });
      assert.equal(made.status, 201, made.text);
      const id = made.body.data.id;
      const one = http('/api/v1/contacts/:id', 200);
      const missing = http('/api/v1/contacts/:id', 404);
      const unmatched = http('(unmatched)', 404, 'POST');
      const before = await scrape();
      const N = 5;
      for (let i = 0; i < N; i++) assert.equal((await app.get(`/api/v1/contacts/${id}`)).status, 200);
      assert.equal((await app.get('/api/v1/contacts/987654321')).status, 404);
      assert.equal((await app.post('/no/such/route', {})).status, 404);
      const after = await scrape();

      const moved = (name: string, labels: Record<string, string>) =>
        (sampleOf(after, name, labels) ?? 0) - (sampleOf(before, name, labels) ?? 0);
      assert.equal(moved('leadbook_http_requests_total', one), N);
      assert.equal(moved('leadbook_http_request_duration_seconds_count', one), N);
      assert.equal(moved('leadbook_http_request_duration_seconds_bucket', { ...one, le: '+Inf' }), N);
      assert.ok(moved('leadbook_http_request_duration_seconds_sum', one) > 0);
      assert.equal(moved('leadbook_http_requests_total', missing), 1, 'the 404 under its route and status');
      assert.equal(moved('leadbook_http_requests_total', unmatched), 1, 'no route: one fixed label');
      // The raw URL is never a label: no series names the contact's id.
      const routes = after.get('leadbook_http_requests_total')!.samples.map((s) => s.labels.route!);
      assert.ok(!routes.some((r) => /\/\d+(\/|$)/.test(r) || r.includes('/no/such')), routes.join(' '));
      // The scrape before is counted by the one after, under its own route.
      assert.ok(moved('leadbook_http_requests_total', http('/metrics', 200)) >= 1);
      // Each read asked the database at least once (its token, the record).
      const queries = moved('leadbook_db_query_duration_seconds_count', { dialect });
      assert.ok(queries >= N + 1, `queries timed: ${queries}`);
    });

    test('a scheduler run is counted once its tick has run', async () => {
      const reminders = { job: 'remind of what is due', outcome: 'ok' };
      const runs = async () => sampleOf(await scrape(), 'leadbook_scheduler_runs_total', reminders) ?? 0;
      const first = await runs();
      let now = first;
      for (let i = 0; i < 100 && now <= first; i++) {
        await sleep(50);
        now = await runs();
      }
      assert.ok(now > first, `the reminders ran again: ${first} → ${now}`);
      const families = await scrape();
      assert.equal(
        sampleOf(families, 'leadbook_scheduler_runs_total', { job: 'remind of what is due', outcome: 'error' }),
        undefined,
        'no failed run',
      );
    });

    test('intake drops are counted by reason', async () => {
      const form = await app.post('/api/v1/intake-forms', { name: 'Metered', slug: 'metered', fields: ['name'] });
      assert.equal(form.status, 201, form.text);
      const drops = async (reason: string) => sampleOf(await scrape(), 'leadbook_intake_drops_total', { reason }) ?? 0;
      const trapped = await drops('honeypot');
      const sent = await app.request('POST', '/api/v1/intake/metered', {
        json: { name: 'Spam Bot', website: 'http://spam.example' },
        token: null,
      });
      assert.equal(sent.status, 202, sent.text);
      assert.equal(await drops('honeypot'), trapped + 1);
      // A hosted form posted without the token it was served with.
      const unsigned = await app.request('POST', '/f/metered', {
        body: new URLSearchParams({ name: 'Form Bot' }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        token: null,
      });
      assert.equal(unsigned.status, 200, unsigned.text);
      assert.equal(await drops('bad_token'), 1);
    });

    test('X-Request-Id: the caller’s own when usable, else a fresh UUID; the log lines carry it', async () => {
      const own = 'trace-4f2a.b:c_9';
      const echoed = await app.get('/healthz', { 'x-request-id': own });
      assert.equal(echoed.headers.get('x-request-id'), own);
      const logged = app.logs.filter((l) => l.includes(`"reqId":"${own}"`));
      // One line per request, when it is answered: what was asked, the status and the time.
      assert.equal(logged.length, 1, logged.join(''));
      const line = JSON.parse(logged[0]!);
      assert.equal(line.msg, 'request completed');
      assert.deepEqual([line.req.method, line.req.url, line.res.statusCode], ['GET', '/healthz', 200]);
      assert.equal(typeof line.responseTime, 'number');
      const linked = await app.get('/healthz?token=s3cret-in-a-link', { 'x-request-id': 'trace-link' });
      assert.equal(linked.status, 200);
      const linkLine = app.logs.find((l) => l.includes('"reqId":"trace-link"'));
      assert.match(linkLine ?? '', /"url":"\/healthz\?token=\[redacted\]"/);
      assert.ok(!app.logs.join('').includes('s3cret-in-a-link'), 'a secret in a URL is not logged');

      const fresh = await app.get('/healthz');
      const id = fresh.headers.get('x-request-id')!;
      assert.match(id, UUID);
      assert.notEqual((await app.get('/healthz')).headers.get('x-request-id'), id, 'a new one each time');
      assert.ok(app.logs.some((l) => l.includes(`"reqId":"${id}"`)));

      for (const bad of ['', 'has space', 'quote"d', 'x'.repeat(129), 'semi;colon', 'per%cent', '<script>']) {
        const res = await app.get('/healthz', { 'x-request-id': bad });
        assert.match(res.headers.get('x-request-id')!, UUID, `${bad} is replaced`);
      }
      assert.equal(
        (await app.get('/healthz', { 'x-request-id': 'x'.repeat(128) })).headers.get('x-request-id'),
        'x'.repeat(128),
      );
      // Errors carry it too: a problem from a route, no route at all, a URL the router refuses.
      const refused = { '/api/v1/contacts/987654321': 404, '/no/such/route': 404, '/api/v1/contacts/%E0%A4%A': 400 };
      for (const [path, status] of Object.entries(refused)) {
        const res = await app.request(status === 400 ? 'GET' : 'POST', path, { headers: { 'x-request-id': 'err-1' } });
        assert.equal(res.status, status, `${path}: ${res.text}`);
        assert.equal(res.headers.get('x-request-id'), 'err-1', path);
      }
    });

    test('with METRICS_TOKEN set, only its bearer may scrape', async () => {
      const token = 'scrape-secret-7d1e';
      const closed = await startApp(dialect, { env: { METRICS_TOKEN: token, LOG_LEVEL: 'warn' }, admin: false });
      try {
        for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, `Basic ${token}`, token]) {
          const res = await closed.request('GET', '/metrics', {
            token: null,
            headers: authorization ? { authorization } : {},
          });
          assert.equal(res.status, 401, `${authorization}: ${res.text}`);
          assert.match(res.headers.get('content-type')!, /^application\/problem\+json/);
          assert.equal(res.body.code, 'unauthenticated');
          assert.ok(!res.text.includes(token), 'the token is never shown');
        }
        const res = await closed.request('GET', '/metrics', {
          token: null,
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200, res.text);
        assert.ok(parseExposition(res.text).has('leadbook_http_requests_total'));
        assert.ok(!closed.logs.join('').includes(token), 'nor logged');
      } finally {
        await closed.close();
      }
    });
  });
}
