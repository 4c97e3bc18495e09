import type { Express, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { createBaseApp, type HttpConfig, type OutageAnswer } from './app';
import { buildOpenApi } from './openapi';
import { createLimiter, createSignInLimiter, type RedisClient } from './ratelimit';
import { attachOps, createOps, type ReadinessCheck } from './ops';
import { attachMetrics, routeTemplateOf, type Metrics } from './metrics';
import { routeHandler, type GateResolver, type RouteDef, type RouteHandlerOptions } from './route';

export interface ServiceAppOptions<TCaller, TScope = unknown> {
  /** Short name: the rate limiters' counter prefix. */
  name: string;
  /** Title and version of the API documentation. */
  title: string;
  version: string;
  http: HttpConfig;
  /** Requests per minute and address; failed sign-ins per 15 minutes and account, and per 15 minutes and address. */
  rateLimit: { perMinute: number; loginPer15Minutes: number; loginAddressPer15Minutes: number };
  /** JSON body limit of routes that name none (bytes). */
  bodyLimit: number;
  /**
   * Sign-in routes get their own, stricter limiter that counts failed attempts only, by the account named
   * in the body's `accountField` and by address (see createSignInLimiter).
   */
  signIn: { paths: string[]; methods: Array<'post' | 'put'>; accountField: string };
  routes: ReadonlyArray<RouteDef<TCaller, TScope>>;
  gates: GateResolver;
  /**
   * The scope rules every route must declare (see RouteHandlerOptions.scopes); none: scopes optional and unresolved.
   */
  scopes?: RouteHandlerOptions['scopes'];
  /** Resolves the request's one caller, before any route. */
  identify: RequestHandler;
  logger: Logger;
  redis?: RedisClient;
  /** What /readyz asks after (the database, Redis, the object store), each within `checkTimeoutMs`. */
  readiness: { checks: ReadinessCheck[]; checkTimeoutMs: number };
  /** Pages served by path prefix (see createBaseApp). */
  pages?: Record<string, RequestHandler>;
  /** Metrics, served at GET /metrics; none: no /metrics, and nothing is counted. */
  metrics?: Metrics;
  /** Tells a dependency outage from any other failure: answered 503 with Retry-After (see createBaseApp). */
  outage?: OutageAnswer;
  /** Put on app.locals for middleware (configuration, dependencies). */
  locals: Record<string, unknown>;
  /** What every handler's context carries besides the request (see RouteHandlerOptions.tools). */
  tools?: RouteHandlerOptions['tools'];
}

/** One service's Express app: its route tables behind the shared HTTP core, rate limits and identity. */
export function createServiceApp<TCaller, TScope = unknown>(o: ServiceAppOptions<TCaller, TScope>): Express {
  const router = routeHandler(o.routes, o.gates, { defaultBodyLimit: o.bodyLimit, scopes: o.scopes, tools: o.tools });

  const metrics = o.metrics;
  const counted = metrics
    ? {
        onRefused: (limiter: string) => metrics.rateLimitRefusals.inc({ limiter }),
        onStoreError: () => metrics.redisErrors.inc(),
      }
    : {};
  if (metrics && o.redis) o.redis.on('error', () => metrics.redisErrors.inc());
  const general = createLimiter({
    name: o.name,
    windowMs: 60_000,
    limit: o.rateLimit.perMinute,
    redis: o.redis,
    logger: o.logger,
    trustProxy: o.http.trustProxy,
    ...counted,
  });
  const accountField = o.signIn.accountField;
  // A sign-in route's own body limit holds when the limiter reads the body before the route does.
  const routeLimits = new Map<string, string | number>();
  for (const r of o.routes) {
    if (r.bodyLimit !== undefined) routeLimits.set(`${r.method.toUpperCase()} ${r.path.toLowerCase()}`, r.bodyLimit);
  }
  const signInPathOf = (req: Request) =>
    (req.path.length > 1 && req.path.endsWith('/') ? req.path.slice(0, -1) : req.path).toLowerCase();
  const signIn = createSignInLimiter({
    name: `${o.name}-signin`,
    windowMs: 15 * 60_000,
    accountLimit: o.rateLimit.loginPer15Minutes,
    addressLimit: o.rateLimit.loginAddressPer15Minutes,
    accountOf: (body) =>
      body && typeof body === 'object' ? (body as Record<string, unknown>)[accountField] : undefined,
    bodyLimit: (req) => routeLimits.get(`${req.method} ${signInPathOf(req)}`) ?? o.bodyLimit,
    redis: o.redis,
    logger: o.logger,
    trustProxy: o.http.trustProxy,
    ...counted,
  });
  // The sign-in paths, matched as the routes themselves are: any case, with or without a trailing slash.
  const signInPaths = new Set(o.signIn.paths.map((p) => p.toLowerCase()));
  const signInMethods = new Set(o.signIn.methods.map((m) => m.toUpperCase()));
  const signInOnly: RequestHandler = (req, res, next) => {
    if (!signInMethods.has(req.method)) { next(); return; }
    if (signInPaths.has(signInPathOf(req))) void signIn(req, res, next);
    else next();
  };

  const ops = createOps({
    logger: o.logger,
    checks: o.readiness.checks,
    checkTimeoutMs: o.readiness.checkTimeoutMs,
    metrics: metrics?.handler(),
  });
  const app = createBaseApp({
    config: o.http,
    logger: o.logger,
    ops: ops.handler,
    observe: metrics
      ? (req, status, seconds) => metrics.observeRequest(routeTemplateOf(req), req.method ?? '', status, seconds)
      : undefined,
    preRoutes: [general, signInOnly, o.identify],
    router,
    pages: o.pages,
    openapi: () => buildOpenApi({ title: o.title, version: o.version }, o.routes),
    outage: o.outage,
  });
  Object.assign(app.locals, o.locals);
  attachOps(app, ops);
  if (metrics) attachMetrics(app, metrics);
  return app;
}
