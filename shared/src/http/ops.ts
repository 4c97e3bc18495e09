import type { Express, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';

/** One dependency that readiness asks after: a name operators see, and a probe that rejects when it is down. */
export interface ReadinessCheck {
  name: string;
  probe: () => Promise<unknown>;
  /**
   * A dependency every instance shares and that only some routes need (the object store, Redis): its
   * outage leaves the instance ready (200, naming it under `degraded`), since it would take every instance
   * out of rotation at once and the routes that do not need it could no longer answer; those that do
   * answer 503 with Retry-After themselves. Unset: the instance is not ready while it fails.
   */
  shared?: boolean;
}

export interface OpsOptions {
  logger: Logger;
  checks: ReadinessCheck[];
  /** How long each probe may take before it counts as failed (ms). */
  checkTimeoutMs: number;
  /** Answers GET /metrics when set (see metrics.ts); none: /metrics is the plain 404. */
  metrics?: RequestHandler;
}

export interface Readiness {
  ready: boolean;
  /** The names of the failed checks that make the instance unready, or `draining` once the process is stopping. */
  failed: string[];
  /** The names of the failed checks of shared dependencies (the instance stays ready). */
  degraded: string[];
}

/** The operational endpoints of a service and its readiness state. */
export interface Ops {
  /** Answers GET/HEAD /healthz, /readyz and /metrics; passes every other request on. */
  handler: RequestHandler;
  /** From now on /readyz answers 503 `draining` (the process got a stop signal). */
  startDraining(): void;
  readiness(): Promise<Readiness>;
}

const OPS = Symbol('ops');

/** The operational endpoints of an app made by createServiceApp (serve() tells them when draining starts). */
export function opsOf(app: Express): Ops | undefined {
  return (app.locals as { [OPS]?: Ops })[OPS];
}

export function attachOps(app: Express, ops: Ops): void {
  (app.locals as { [OPS]?: Ops })[OPS] = ops;
}

class Timeout extends Error {
  constructor(ms: number) {
    super(`no answer within ${ms} ms`);
    this.name = 'Timeout';
  }
}

function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(ms)), ms);
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

function bodyOf(r: Readiness): object {
  const degraded = r.degraded.length ? { degraded: r.degraded } : {};
  return r.ready ? { status: 'ready', ...degraded } : { status: 'not ready', failed: r.failed, ...degraded };
}

function send(res: Response, status: number, body: object): void {
  // A proxy or a browser must never answer a health check from a cache.
  res.setHeader('Cache-Control', 'no-store');
  res.status(status).json(body);
}

/**
 * `/healthz`: the process answers (nothing else is asked, so a busy or degraded instance is not
 * restarted for a dependency's outage). `/readyz`: 503 while the process drains or a check of its own
 * (the database) fails within its time limit; a shared dependency's failure is reported under `degraded`
 * with 200 (see ReadinessCheck.shared). Both are answered before logging, rate limits and identity: a load balancer
 * polls them every few seconds without a token. Their bodies name what failed and nothing more; the
 * reason goes to the log, once per change of state.
 */
export function createOps(o: OpsOptions): Ops {
  let draining = false;
  // Concurrent /readyz requests share one round of probes: a flood of them costs the database one query.
  let round: Promise<Readiness> | undefined;
  let lastFailed = '';

  async function probeAll(): Promise<Readiness> {
    const results = await Promise.all(
      o.checks.map(async (c) => {
        try {
          await within(Promise.resolve().then(c.probe), o.checkTimeoutMs);
          return undefined;
        } catch (err) {
          return { name: c.name, err };
        }
      }),
    );
    const failures = results.filter((r): r is { name: string; err: unknown } => r !== undefined);
    const sharedNames = new Set(o.checks.filter((c) => c.shared).map((c) => c.name));
    const failed = failures.map((f) => f.name).filter((n) => !sharedNames.has(n));
    const degraded = failures.map((f) => f.name).filter((n) => sharedNames.has(n));
    const key = failures.map((f) => f.name).join(',');
    if (key !== lastFailed) {
      if (failures.length) {
        for (const f of failures) {
          const what = sharedNames.has(f.name) ? 'degraded (still ready)' : 'not ready';
          o.logger.warn({ check: f.name, err: f.err }, `${what}: ${f.name} does not answer`);
        }
      } else {
        o.logger.info({ was: lastFailed.split(',') }, 'ready again');
      }
      lastFailed = key;
    }
    return { ready: failed.length === 0, failed, degraded };
  }

  function readiness(): Promise<Readiness> {
    if (draining) return Promise.resolve({ ready: false, failed: ['draining'], degraded: [] });
    round ??= probeAll().finally(() => {
      round = undefined;
    });
    return round;
  }

  const handler: RequestHandler = (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      next();
      return;
    }
    switch (req.path) {
      case '/healthz':
        send(res, 200, { status: 'ok' });
        return;
      case '/readyz':
        readiness().then(
          (r) => send(res, r.ready ? 200 : 503, bodyOf(r)),
          next,
        );
        return;
      case '/metrics':
        if (o.metrics) {
          o.metrics(req, res, next);
          return;
        }
        next();
        return;
      default:
        next();
    }
  };

  return {
    handler,
    startDraining() {
      draining = true;
    },
    readiness,
  };
}
