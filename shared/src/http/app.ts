import crypto from 'node:crypto';
import http from 'node:http';
import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import cors from 'cors';
import helmet from 'helmet';
import swaggerUi from 'swagger-ui-express';
import type { Logger } from 'pino';
import { HttpError, errorEnvelope } from './errors';
import { series } from './series';

export interface HttpConfig {
  nodeEnv: string;
  /** Proxy hops in front of the service (TRUST_PROXY); 0: the socket's address is the client's. */
  trustProxy: number;
  corsOrigins: string[];
  /**
   * A request answered below 500 is counted here instead of logged as a line of its own (a small box's
   * logs would otherwise grow by a line per request). Absent: every request is a line.
   */
  countRequest?: (status: number) => void;
}

export function isDevLike(nodeEnv: string): boolean {
  return nodeEnv === 'development' || nodeEnv === 'test';
}

const SENSITIVE_QUERY = /([?&](?:refreshtoken|changepasswordtoken|verifyemailtoken|accesstoken)=)[^&]*/gi;
function scrubUrl(url: string): string {
  return url.replace(SENSITIVE_QUERY, '$1[redacted]');
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

declare module 'http' {
  interface IncomingMessage {
    /** The request id: echoed in X-Request-Id, on every log line of the request, and as `logid` in 5xx bodies. */
    id: string;
    /** A logger whose lines carry the request id. */
    log: Logger;
  }
}

/**
 * Gives every request an id (the caller's X-Request-Id when it is safe, else a new uuid) and logs each
 * completed request. The per-request child logger is made only when something logs through it: a child
 * logger and its serialisers for every request cost about a sixth of a small route's time.
 */
const APP_LOGGER = Symbol('appLogger');
const CHILD_LOGGER = Symbol('childLogger');
interface LoggedRequest extends http.IncomingMessage {
  [APP_LOGGER]?: Logger;
  [CHILD_LOGGER]?: Logger;
}
// One getter on the prototype: defining it on every request instance would cost each request a map change.
Object.defineProperty(http.IncomingMessage.prototype, 'log', {
  configurable: true,
  get(this: LoggedRequest): Logger | undefined {
    const logger = this[APP_LOGGER];
    if (!logger) return undefined;
    return (this[CHILD_LOGGER] ??= logger.child({ reqId: this.id }));
  },
});

/** Called once per request that went through logging, with its final status and duration (metrics). */
export type RequestObserver = (req: http.IncomingMessage, status: number, seconds: number) => void;

function requestLogging(
  logger: Logger,
  observe?: RequestObserver,
  countRequest?: (status: number) => void,
): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : crypto.randomUUID();
    req.id = id;
    (req as LoggedRequest)[APP_LOGGER] = logger;
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    const done = () => {
      const status = res.writableFinished ? res.statusCode : 499;
      if (observe) observe(req, status, (performance.now() - started) / 1000);
      if (countRequest && status < 500) {
        countRequest(status);
        return;
      }
      const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          reqId: id,
          // `client` is the address the rate limiters count (X-Forwarded-For behind TRUST_PROXY hops), `remoteAddress`
          // the socket's.
          req: {
            method: req.method,
            url: scrubUrl(req.originalUrl ?? req.url),
            client: req.ip,
            remoteAddress: req.socket.remoteAddress,
          },
          res: { statusCode: status },
          responseTime: performance.now() - started,
        },
        status === 499 ? 'request aborted' : 'request completed',
      );
    };
    // A response always emits 'close' once it is done, after 'finish' when it was sent in full.
    res.once('close', done);
    next();
  };
}

/**
 * Helmet's headers are the same for every response: they are worked out once, by running helmet
 * against a recording response at start-up, and then set in one step per request.
 */
function securityHeaders(): RequestHandler {
  const set: Array<[string, string]> = [];
  const removed: string[] = [];
  const recorder = {
    setHeader(name: string, value: unknown) { set.push([name, String(value)]); },
    removeHeader(name: string) { removed.push(name); },
  };
  let finished = false;
  helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } })(
    {} as Request,
    recorder as unknown as Response,
    (err?: unknown) => {
      if (err) throw err instanceof Error ? err : new Error(String(err));
      finished = true;
    },
  );
  if (!finished) throw new Error('security headers: helmet did not finish synchronously');
  return (_req, res, next) => {
    for (const name of removed) res.removeHeader(name);
    for (const [name, value] of set) res.setHeader(name, value);
    next();
  };
}

/**
 * A request without an Origin header (the tablet app, scripts, server to server) gets what the cors
 * middleware would give it, `Vary: Origin` and the exposed headers, without its per-request work.
 */
function corsUnlessNoOrigin(options: cors.CorsOptions & { exposedHeaders: string[] }): RequestHandler {
  const withOrigin = cors(options);
  const exposed = options.exposedHeaders.join(',');
  return (req, res, next) => {
    if (req.headers.origin !== undefined || req.method === 'OPTIONS') {
      withOrigin(req, res, next);
      return;
    }
    res.vary('Origin');
    res.setHeader('Access-Control-Expose-Headers', exposed);
    next();
  };
}

export interface BaseAppOptions {
  config: HttpConfig;
  logger: Logger;
  /**
   * Answered first, before request logging, rate limits and identity: the operational endpoints
   * (/healthz, /readyz, /metrics), which a load balancer or Prometheus polls every few seconds.
   */
  ops?: RequestHandler;
  /** Told of every other request once it ends. */
  observe?: RequestObserver;
  /** Run before the routes (rate limiters, identity). */
  preRoutes?: RequestHandler[];
  /** The routes (a router, or the handler of route tables); a request none of them answers goes on to the 404. */
  router: RequestHandler;
  /** Pages served by path prefix after the routes (files, not API routes: no route table holds them). */
  pages?: Record<string, RequestHandler>;
  openapi?: () => object;
  /** Tells a dependency outage from any other failure (see OutageAnswer); none: every unknown failure is a 500. */
  outage?: OutageAnswer;
}

/**
 * How a service names a failure caused by a dependency out of reach (its database, Redis, object store)
 * rather than by the request: `classify` answers the dependency's name, or null. Such a failure is
 * answered 503 with `Retry-After` and the error envelope, on every route, instead of a 500.
 */
export interface OutageAnswer {
  classify: (err: unknown) => string | null;
  retryAfterSeconds: number;
}

/**
 * The HTTP core both services share: request ids, logging, security headers, CORS,
 * the API docs (development and test only), the 404 envelope and one error middleware.
 */
export function createBaseApp(o: BaseAppOptions): Express {
  const { config, logger } = o;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy > 0 ? config.trustProxy : false);
  app.set('case sensitive routing', false);
  app.set('strict routing', false);

  const devLike = isDevLike(config.nodeEnv);
  // What every request goes through, then the routes, as one step (see series): the router walks
  // one layer for every API request.
  app.use(
    series([
      ...(o.ops ? [o.ops] : []),
      requestLogging(logger, o.observe, config.countRequest),
      securityHeaders(),
      corsUnlessNoOrigin({
        origin(origin, cb) {
          // Requests without Origin (native app, server-to-server, curl) are always allowed.
          if (!origin || devLike || config.corsOrigins.includes(origin)) cb(null, true);
          else cb(null, false);
        },
        methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
        allowedHeaders: [
          'Content-Type',
          'Authorization',
          'Accept',
          'Accept-Language',
          'Cache-Control',
          'TIMEOFFSET',
          'X-Request-Id',
          // The learner app names the learning-item types its build renders on every classroom request.
          'X-Learning-Item-Types',
        ],
        exposedHeaders: ['Content-Disposition', 'X-Request-Id', 'Retry-After'],
      }),
      ...(o.preRoutes ?? []),
      o.router,
    ]),
  );
  for (const [prefix, handler] of Object.entries(o.pages ?? {})) app.use(prefix, handler);

  // No route has a first segment `docs`; outside development and test, /docs is the plain 404 below.
  if (devLike && o.openapi) {
    const doc = o.openapi();
    app.get('/docs/openapi.json', (_req, res) => { res.json(doc); });
    app.use('/docs', swaggerUi.serve, swaggerUi.setup(doc));
  }

  app.use((req, res) => {
    res.status(404).json(errorEnvelope(`Cannot ${req.method} ${req.path}`));
  });
  app.use(errorMiddleware(config, logger, o.outage));
  return app;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
  expose?: boolean;
}

export function errorMiddleware(config: HttpConfig, logger: Logger, outage?: OutageAnswer): ErrorRequestHandler {
  return (err: unknown, req: Request, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    const logid = String(req.id ?? '');
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res
        .status(err.status)
        .json({ ...errorEnvelope(err.message, err.status >= 500 ? logid : undefined), ...err.details });
      return;
    }
    const e = err as BodyParserError;
    if (e && e.type === 'entity.too.large') {
      res.status(413).json(errorEnvelope('Request body is too large'));
      return;
    }
    if (e && e.type === 'entity.parse.failed') {
      res.status(400).json(errorEnvelope('Request body is not valid JSON'));
      return;
    }
    if (e && e.expose && typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      res.status(e.status).json(errorEnvelope(e.message));
      return;
    }
    const dependency = outage?.classify(err);
    if (dependency) {
      (req.log ?? logger).error(
        { err, logid, dependency },
        `request failed: the ${dependency} is unavailable (answered 503, the client is told to retry)`,
      );
      res.setHeader('Retry-After', String(outage!.retryAfterSeconds));
      res
        .status(503)
        .json(
          errorEnvelope(
            `Service temporarily unavailable (the ${dependency} cannot be reached), please try again later`,
            logid,
          ),
        );
      return;
    }
    (req.log ?? logger).error({ err, logid }, 'unhandled error');
    // Never the error's own text, in any environment: it may hold SQL, paths or data. The log has it.
    res.status(500).json(errorEnvelope('Internal server error', logid));
  };
}
