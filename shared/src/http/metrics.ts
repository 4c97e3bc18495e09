import type { Express, Request, RequestHandler } from 'express';
import type { Counter, Gauge, Registry } from 'prom-client';
import { secretEquals } from '../config';
import { errorEnvelope } from './errors';
import { ROUTE_TEMPLATE } from './route';

/** What the database's connection pool holds now (see poolStats in @lms/db). */
export interface PoolSnapshot {
  used: number;
  free: number;
  waiting: number;
  max: number;
}

export interface MetricsOptions {
  /** The bearer token a scraper must send; compared in constant time. */
  token: string;
  /** Read at each scrape. */
  pool?: () => PoolSnapshot;
  /** The read replica's state at its last check (read at each scrape); none: no replica configured. */
  replica?: () => ReplicaSnapshot;
}

/** What the last check of a read replica found. */
export interface ReplicaSnapshot {
  /** Seconds the replica may lag the primary by at most; undefined when it could not be measured. */
  lagSeconds: number | undefined;
  /** Whether the routes that may read from the replica read from it now (else from the primary). */
  inUse: boolean;
}

/** Seconds; from a cached read to a log import of several seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * The route label of a request answered before a route matched (a 404, a rate-limit refusal, the API
 * docs): never the raw path, whose values are unbounded.
 */
export const UNMATCHED_ROUTE = 'unmatched';

interface Series {
  labels: { route: string; method: string; status: string };
  /** Observations per bucket (not cumulative); the last is past the largest bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * The request latency histogram, kept by hand and formatted by prom-client at each scrape. One
 * observation through prom-client's Histogram (label checks, a label hash built per call) cost about
 * 1.6 µs; this costs a few hundred nanoseconds.
 */
class RequestHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series>();

  constructor(readonly name: string, readonly help: string, private readonly bounds: readonly number[]) {}

  observe(route: string, method: string, status: number, seconds: number): void {
    const key = `${method} ${status} ${route}`;
    let s = this.series.get(key);
    if (!s) {
      s = {
        labels: { route, method, status: String(status) },
        counts: new Float64Array(this.bounds.length + 1),
        sum: 0,
        count: 0,
      };
      this.series.set(key, s);
    }
    let i = 0;
    while (i < this.bounds.length && seconds > this.bounds[i]) i += 1;
    s.counts[i] += 1;
    s.sum += seconds;
    s.count += 1;
  }

  get() {
    const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> = [];
    for (const s of this.series.values()) {
      let cumulative = 0;
      this.bounds.forEach((le, i) => {
        cumulative += s.counts[i];
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: '+Inf' }, value: s.count });
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  reset(): void {
    this.series.clear();
  }
}

/**
 * One service's metrics, in its own registry (several apps may live in one test process), served in
 * Prometheus' text format at GET /metrics to a caller with the bearer token.
 */
export class Metrics {
  readonly registry: Registry;
  private readonly requestDuration: RequestHistogram;
  readonly importsRunning: Gauge<'kind'>;
  readonly imports: Counter<'kind' | 'outcome'>;
  readonly importRows: Counter<'kind'>;
  readonly importsRefused: Counter<'kind'>;
  readonly rateLimitRefusals: Counter<'limiter'>;
  readonly redisErrors: Counter;
  readonly objectStoreErrors: Counter<'operation'>;
  readonly replicaFallbacks: Counter<'reason'>;
  readonly retentionDeleted: Counter<'what'>;
  /** Learners the retention of inactive learners anonymised (LEARNER_RETENTION_YEARS). */
  readonly learnersAnonymised: Counter;

  constructor(private readonly o: MetricsOptions) {
    // Loaded only when metrics are on: prom-client adds about 12 MB to the process.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Counter, Gauge, Registry, collectDefaultMetrics } = require('prom-client') as typeof import('prom-client');
    this.registry = new Registry();
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.requestDuration = new RequestHistogram(
      'lms_http_request_duration_seconds',
      'HTTP requests by route template, method and status: time from the request to the end of the response (the ' +
        '_count is the number of requests)',
      LATENCY_BUCKETS,
    );
    this.registry.registerMetric(this.requestDuration as unknown as Parameters<Registry['registerMetric']>[0]);
    this.importsRunning = new Gauge({
      name: 'lms_imports_running',
      help: 'Imports in progress',
      labelNames: ['kind'],
      registers,
    });
    this.imports = new Counter({
      name: 'lms_imports_total',
      help: 'Imports ended, by outcome (finished, failed)',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.importRows = new Counter({
      name: 'lms_import_rows_written_total',
      help: 'Rows written by finished imports',
      labelNames: ['kind'],
      registers,
    });
    this.importsRefused = new Counter({
      name: 'lms_imports_refused_total',
      help: 'Imports answered 429 because as many as allowed were already running',
      labelNames: ['kind'],
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: 'lms_rate_limit_refusals_total',
      help: 'Requests answered 429 by a rate limit',
      labelNames: ['limiter'],
      registers,
    });
    this.redisErrors = new Counter({
      name: 'lms_redis_errors_total',
      help: 'Errors of the Redis connection and of commands the rate limits sent',
      registers,
    });
    this.objectStoreErrors = new Counter({
      name: 'lms_object_store_errors_total',
      help: 'Object store operations that failed (a missing object or an invalid key is not counted)',
      labelNames: ['operation'],
      registers,
    });
    this.replicaFallbacks = new Counter({
      name: 'lms_replica_fallback_reads_total',
      help: 'Requests of routes that may read from the read replica that read from the primary instead, by reason ' +
        '(lagging, unreachable, not_a_replica, unchecked)',
      labelNames: ['reason'],
      registers,
    });
    const replica = o.replica;
    if (replica) {
      new Gauge({
        name: 'lms_replica_lag_seconds',
        help: 'How far the read replica lagged the primary at its last check, at most (NaN: not measured)',
        registers,
        collect() { this.set(replica().lagSeconds ?? Number.NaN); },
      });
      new Gauge({
        name: 'lms_replica_in_use',
        help: '1 while the routes that may read from the read replica read from it, 0 while they read from the primary',
        registers,
        collect() { this.set(replica().inUse ? 1 : 0); },
      });
    }
    this.learnersAnonymised = new Counter({
      name: 'lms_learners_anonymised_total',
      help: 'Learners whose identity the retention sweep erased after LEARNER_RETENTION_YEARS without activity',
      registers,
    });
    this.retentionDeleted = new Counter({
      name: 'lms_retention_deleted_total',
      help: 'What the retention sweep deleted because it was older than its setting keeps (log archives, sign-in rows)',
      labelNames: ['what'],
      registers,
    });
    const pool = o.pool;
    if (pool) {
      new Gauge({
        name: 'lms_db_pool_connections',
        help: 'Database connections of the pool, in use or idle',
        labelNames: ['state'],
        registers,
        collect() {
          const s = pool();
          this.set({ state: 'used' }, s.used);
          this.set({ state: 'free' }, s.free);
        },
      });
      new Gauge({
        name: 'lms_db_pool_waiting',
        help: 'Queries and transactions waiting for a database connection',
        registers,
        collect() {
          this.set(pool().waiting);
        },
      });
      new Gauge({
        name: 'lms_db_pool_max',
        help: "The pool's ceiling of database connections",
        registers,
        collect() {
          this.set(pool().max);
        },
      });
    }
  }

  /**
   * A gauge of the service's own, worked out at each scrape by `collect` (which may query): its values by
   * label set. A failing `collect` leaves the gauge empty for that scrape rather than failing the scrape.
   */
  gauge(name: string, help: string, labelNames: readonly string[],
    collect: () => Promise<Array<{ labels?: Record<string, string>; value: number }>>): void {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { Gauge } = require('prom-client') as typeof import('prom-client');
    new Gauge({
      name, help, labelNames, registers: [this.registry],
      async collect() {
        this.reset();
        const values = await collect().catch(() => []);
        for (const v of values) {
          if (v.labels) this.set(v.labels, v.value);
          else this.set(v.value);
        }
      },
    });
  }

  /** Records one finished request (called once per request by the request logging). */
  observeRequest(route: string, method: string, status: number, seconds: number): void {
    this.requestDuration.observe(route, method, status, seconds);
  }

  /** Counts an import from now until `finished` or `failed` (whichever comes first). */
  startImport(kind: string): { finished(rows: number): void; failed(): void } {
    this.importsRunning.inc({ kind });
    let open = true;
    const end = (outcome: 'finished' | 'failed', rows = 0) => {
      if (!open) return;
      open = false;
      this.importsRunning.dec({ kind });
      this.imports.inc({ kind, outcome });
      if (rows > 0) this.importRows.inc({ kind }, rows);
    };
    return { finished: (rows) => end('finished', rows), failed: () => end('failed') };
  }

  /** GET /metrics: the registry in Prometheus' text format, for a caller with `Authorization: Bearer <token>`. */
  handler(): RequestHandler {
    return (req, res, next) => {
      if (!secretEquals(bearer(req), this.o.token)) {
        res.setHeader('WWW-Authenticate', 'Bearer');
        res.setHeader('Cache-Control', 'no-store');
        res.status(401).json(errorEnvelope('Unauthorized'));
        return;
      }
      this.registry.metrics().then((text) => {
        res.setHeader('Content-Type', this.registry.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.status(200).end(text);
      }, next);
    };
  }
}

/** True when the request carries `Authorization: Bearer <token>` (constant time); false when `token` is unset. */
export function carriesToken(req: Request, token: string | undefined): boolean {
  return secretEquals(bearer(req), token);
}

function bearer(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (!h || !/^Bearer /i.test(h)) return undefined;
  return h.slice(7).trim();
}

/** The route template the route tables matched for this request (set by routeHandler), or UNMATCHED_ROUTE. */
export function routeTemplateOf(req: object): string {
  return (req as { [ROUTE_TEMPLATE]?: string })[ROUTE_TEMPLATE] ?? UNMATCHED_ROUTE;
}

const METRICS = Symbol('metrics');

export function attachMetrics(app: Express, metrics: Metrics): void {
  (app.locals as { [METRICS]?: Metrics })[METRICS] = metrics;
}

/** The app's metrics, when they are on. */
export function metricsOf(req: Request): Metrics | undefined {
  return appMetrics(req.app);
}

/** The metrics of an app, for work the process does outside requests (the periodic sweeps). */
export function appMetrics(app: { locals: object }): Metrics | undefined {
  return (app.locals as { [METRICS]?: Metrics })[METRICS];
}
