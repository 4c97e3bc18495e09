import type { Express } from 'express';
import { poolStats, probeDatabase } from '@lms/db';
import {
  Metrics,
  OUTAGE_RETRY_AFTER_SECONDS,
  createServiceApp,
  sharedOutageOf,
  syncLogPage,
  type ReadinessCheck,
} from '@lms/shared';
import type { Config } from './config';
import { classroomGates, identify } from './auth/guards';
import { serviceRoutes } from './areas';
import { VERSION } from './areas/app/routes';
import type { ClassroomTools, Deps } from './http/types';

export const SIGN_IN_PATHS = ['/auth/login'];

export function createApp(config: Config, deps: Deps): Express {
  const metrics = config.metricsToken
    ? new Metrics({ token: config.metricsToken, pool: () => poolStats(deps.db) })
    : undefined;
  const redis = deps.redis;
  const checks: ReadinessCheck[] = [
    { name: 'database', probe: () => probeDatabase(deps.db) },
    ...(redis ? [{ name: 'redis', probe: () => redis.ping(), shared: true }] : []),
  ];
  return createServiceApp({
    name: 'classroom',
    title: 'Classroom server API',
    version: VERSION,
    http: {
      nodeEnv: config.nodeEnv,
      trustProxy: config.trustProxy,
      corsOrigins: config.corsOrigins,
      countRequest: config.logRequests ? undefined : deps.countRequest,
    },
    bodyLimit: config.maxJsonBytes,
    rateLimit: config.rateLimit,
    signIn: { paths: SIGN_IN_PATHS, methods: ['post'], accountField: 'studentusername' },
    routes: serviceRoutes,
    gates: classroomGates,
    identify: identify(),
    logger: deps.logger,
    redis: deps.redis,
    readiness: { checks, checkTimeoutMs: config.readyTimeoutMs },
    // A request that fails because the database or Redis is out of reach (the token check included) is
    // answered 503 with Retry-After, not 500: the learner app may send the same quiz result again later.
    outage: { classify: sharedOutageOf, retryAfterSeconds: OUTAGE_RETRY_AFTER_SECONDS },
    // The teacher's page for carrying the classroom's activity log to the cloud.
    pages: { '/sync-log': syncLogPage('classroom') },
    metrics,
    tools: (): ClassroomTools => ({ db: deps.db, logger: deps.logger, config, agent: deps.agent }),
    locals: { config, deps },
  });
}
