// What an operator's Prometheus scrapes at GET /metrics (CONTRACT.md, "Operations"; src/http/metrics.ts serves it
// and counts the requests). One registry per app, never prom-client's global one: the tests build several apps in
// one process, and each must count only its own. The process's own metrics (event-loop lag, heap, GC, CPU, file
// descriptors) come with prom-client; the rest are counted where they happen: the database's query times and pool
// here, the scheduler's runs in src/scheduler.ts, the intake's drops at its doors (src/http/intake.tsx).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Database } from './db/connection.ts';
import { waitingWrites } from './db/group-commit.ts';

export interface Metrics {
  registry: Registry;
  /** leadbook_http_requests_total: by method, route pattern (`/api/v1/contacts/:id`) and status. */
  httpRequests: Counter<'method' | 'route' | 'status'>;
  /** leadbook_http_request_duration_seconds: from the request's arrival to its answer's end. */
  httpDuration: Histogram<'method' | 'route' | 'status'>;
  /** leadbook_db_query_duration_seconds: each statement's time, failed ones included (streamed reads not). */
  dbQueryDuration: Histogram<'dialect'>;
  /** leadbook_scheduler_runs_total: each job's runs on the process holding the lease; outcome `ok` or `error`. */
  schedulerRuns: Counter<'job' | 'outcome'>;
  /** leadbook_webhook_attempts_total: delivery attempts, outcome `success` or `failure`. */
  webhookAttempts: Counter<'outcome'>;
  /** leadbook_intake_drops_total: public submissions stored nowhere (spam) or refused (the rate limit), by reason. */
  intakeDrops: Counter<'reason'>;
  /** A gauge whose value is read when scraped (pool use, the webhook backlog). */
  gaugeFrom(name: string, help: string, read: () => number | Promise<number>): void;
}

// Request and query times: from a cached read (a millisecond) to a slow import step or a webhook's 10 s limit.
const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const QUERY_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const http = ['method', 'route', 'status'] as const;
  return {
    registry,
    httpRequests: new Counter({
      name: 'leadbook_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status.',
      labelNames: http,
      registers,
    }),
    httpDuration: new Histogram({
      name: 'leadbook_http_request_duration_seconds',
      help: 'Time from the arrival of an HTTP request to the end of its answer, by method, route pattern and status.',
      labelNames: http,
      buckets: HTTP_BUCKETS,
      registers,
    }),
    dbQueryDuration: new Histogram({
      name: 'leadbook_db_query_duration_seconds',
      help: 'Time of each database statement, failed ones included (streamed reads, paced by their reader, are not).',
      labelNames: ['dialect'],
      buckets: QUERY_BUCKETS,
      registers,
    }),
    schedulerRuns: new Counter({
      name: 'leadbook_scheduler_runs_total',
      help: 'Scheduled job runs on the process holding the lease, by job and outcome (ok, error).',
      labelNames: ['job', 'outcome'],
      registers,
    }),
    webhookAttempts: new Counter({
      name: 'leadbook_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome (success, failure).',
      labelNames: ['outcome'],
      registers,
    }),
    intakeDrops: new Counter({
      name: 'leadbook_intake_drops_total',
      help: 'Public intake submissions stored nowhere as spam, or refused over the rate limit, by reason.',
      labelNames: ['reason'],
      registers,
    }),
    gaugeFrom(name, help, read) {
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          // A value that cannot be read now (the database away) is unknown, not 0, and must not fail the scrape.
          let value: number;
          try {
            value = await read();
          } catch {
            value = Number.NaN;
          }
          this.set(value);
        },
      });
    },
  };
}

/**
 * Times the database's statements and shows its connections: PostgreSQL's and MariaDB's pool (open, idle, and queries
 * waiting for one), SQLite's writes waiting for their turn in a group commit (its one writer; reads never wait in the
 * process).
 */
export function observeDatabase(metrics: Metrics, database: Database): void {
  const dialect = { dialect: database.dialect };
  const queries = metrics.dbQueryDuration.labels(dialect);
  database.onQuery = (ms) => queries.observe(ms / 1000);
  const pool = database.poolUse;
  if (pool) {
    metrics.gaugeFrom('leadbook_db_pool_max_connections', 'Connections the pool may open.', () => pool().max);
    metrics.gaugeFrom('leadbook_db_pool_connections', 'Connections the pool has open.', () => pool().total);
    metrics.gaugeFrom('leadbook_db_pool_idle_connections', 'Open connections not in use.', () => pool().idle);
    metrics.gaugeFrom(
      'leadbook_db_pool_waiting_queries',
      'Queries waiting for a connection (all are in use).',
      () => pool().waiting,
    );
  }
  if (database.dialect === 'sqlite')
    metrics.gaugeFrom(
      'leadbook_db_group_commit_waiting_writes',
      'Writes waiting to join the next group commit (SQLite has one writer).',
      () => waitingWrites(database),
    );
}
