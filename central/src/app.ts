import type { Express } from 'express';
import { poolStats, probeDatabase, type Knex } from '@lms/db';
import { Metrics, createServiceApp, syncLogPage, type ReadinessCheck } from '@lms/shared';
import type { Config } from './config';
import { centralGates, identify } from './auth/guards';
import { serviceRoutes } from './areas';
import { centralScopes } from './http/scope';
import type { CentralRoute, CentralTools, Deps } from './http/types';
import { VERSION } from './version';
import { createMailCounters } from './auth/mail-limits';
import { configuredStore } from './http/context';
import { mailerOf } from './auth/mail';
import { countingErrors } from './objects/counted';
import { OUTAGE_RETRY_AFTER_SECONDS, requestOutage } from './http/outage';
import type { ReplicaReads } from './replica';
import { accessRecordRoutes } from './access/routes';
import { withAccessRecord } from './access/routes-wrap';
import { privacyRoutes } from './privacy/routes';
import { fleetMetrics } from './areas/fleet/metrics';

export const SIGN_IN_PATHS = [
  '/auth/login',
  '/auth/school/login',
  '/auth/forgotpassword',
  '/auth/sendverificationemail',
  // A box's enrolment code is a credential too: wrong codes count like wrong passwords.
  '/fleet/enrol',
];

export function createApp(config: Config, deps: Deps): Express {
  const replica = deps.replica;
  const metrics = config.metricsToken
    ? new Metrics({
      token: config.metricsToken, pool: () => poolStats(deps.db), replica: replica && (() => replica.snapshot()),
    })
    : undefined;
  if (metrics) fleetMetrics(metrics, () => deps.db);
  const given = deps.objects ?? configuredStore(config);
  const objects = metrics ? countingErrors(given, (operation) => metrics.objectStoreErrors.inc({ operation })) : given;
  // What guards and handlers read, as they run: the deps given (with the counting store when metrics count).
  const appDeps: Deps = metrics ? { ...deps, objects } : deps;
  const redis = deps.redis;
  const checks: ReadinessCheck[] = [
    { name: 'database', probe: () => probeDatabase(deps.db) },
    ...(redis ? [{ name: 'redis', probe: () => redis.ping(), shared: true }] : []),
    // An S3 store is every instance's; the folder store is this host's own disk.
    { name: 'objects', probe: () => objects.probe(), shared: objects.kind === 's3' },
    // Without the replica the reports read from the primary: the instance stays ready, the replica is named
    // under `degraded` (its state at the last check, not a query per probe).
    ...(replica ? [{ name: 'replica', probe: () => replicaProbe(replica), shared: true }] : []),
  ];
  // The database of a route that may read from the replica: the replica's pool while it keeps up, else
  // the primary's (counted).
  const readsOf = (route: Pick<CentralRoute, 'reads'>): Knex => {
    if (route.reads !== 'replica' || !replica) return appDeps.db;
    const now = replica.current();
    if (now.db) return now.db;
    metrics?.replicaFallbacks.inc({ reason: now.reason });
    return appDeps.db;
  };
  return createServiceApp({
    name: 'central',
    title: 'Central API',
    version: VERSION,
    http: { nodeEnv: config.nodeEnv, trustProxy: config.trustProxy, corsOrigins: config.corsOrigins },
    bodyLimit: config.maxJsonBytes,
    rateLimit: config.rateLimit,
    signIn: { paths: SIGN_IN_PATHS, methods: ['post', 'put'], accountField: 'lmsusername' },
    // Every route is wrapped by the access record of learner data (access/routes-wrap.ts).
    routes: withAccessRecord([...serviceRoutes, ...accessRecordRoutes, ...privacyRoutes]),
    gates: centralGates,
    // Every route declares which rows its caller may touch; a route without a scope rule stops the start.
    scopes: centralScopes,
    // A presigned upload's body is the file itself, whatever type the client says it is.
    identify: identify({ rawBody: (req) => req.method === 'PUT' && /^\/media\//i.test(req.path) }),
    logger: deps.logger,
    redis: deps.redis,
    readiness: { checks, checkTimeoutMs: config.readyTimeoutMs },
    // A request that fails because the database, Redis or the object store is out of reach (the token
    // check included) is answered 503 with Retry-After, not 500: the client may send it again later.
    outage: { classify: requestOutage, retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS },
    // The teacher's page for carrying the classroom's activity log to the cloud, the operators' fleet page
    // (beside the /fleet API, whose routes the page's files do not shadow) and the access record's page.
    pages: {
      '/sync-log': syncLogPage('central'),
      '/fleet': syncLogPage('fleet'),
      '/access-record': syncLogPage('access-record'),
    },
    metrics,
    tools: (route): CentralTools => ({
      ...appDeps, db: readsOf(route), primary: appDeps.db, objects: appDeps.objects ?? objects, config,
      mailer: mailerOf(config, appDeps),
    }),
    locals: {
      config,
      deps: appDeps,
      mailCounters: createMailCounters({
        perClientPerHour: config.mailLinks.perClientPerHour,
        perAccountPerHour: config.mailLinks.perAccountPerHour,
        redis: deps.redis,
        logger: deps.logger,
      }),
    },
  });
}

async function replicaProbe(replica: ReplicaReads): Promise<void> {
  const { reason, lagSeconds } = replica.snapshot();
  const lag = lagSeconds === undefined ? 'more than the bound' : `${lagSeconds.toFixed(1)} s`;
  if (reason === 'lagging') throw new Error(`the read replica lags by ${lag}`);
  if (reason) throw new Error(`the read replica is not used (${reason})`);
}
