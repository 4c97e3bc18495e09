import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
import type { Logger } from 'pino';
import { z, type ZodType } from 'zod';
import { httpError } from './errors';
import { series } from './series';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * Who may call a route. The vocabulary is shared; each service turns a gate into guard middleware
 * and refuses to start when a route carries a gate it does not know (fail closed).
 *  - public: no guard
 *  - any: a valid access token, no role or permission list
 *  - roles: the caller holds one of the listed roles ('apikey' admits the API-key branch)
 *  - perms: the caller holds one of the listed permissions (OR), or the superadmin wildcard
 *  - staff: a classroom token of a staff role (superadmin, admin, teacher)
 *  - synckey: the raw SERVER_SYNC_KEY only
 *  - synckeyOrStaff: SERVER_SYNC_KEY, or a staff token
 *  - synckeyOrOfflineStaff: SERVER_SYNC_KEY always, a staff token only while the server is offline
 *  - anyOrSynckey: any classroom token, or SERVER_SYNC_KEY
 *  - token: a token of the named type from the query string
 *  - box: a fleet box's own credential (`Box <boxid>.<secret>`), never a person's token
 *  - enrolcode: a fleet box's one-time enrolment code (`Enrol <code>`)
 */
export type Gate =
  | { kind: 'public' }
  | { kind: 'any' }
  | { kind: 'roles'; roles: readonly string[] }
  | { kind: 'perms'; perms: readonly string[] }
  | { kind: 'staff' }
  | { kind: 'synckey' }
  | { kind: 'synckeyOrStaff' }
  | { kind: 'synckeyOrOfflineStaff' }
  | { kind: 'anyOrSynckey' }
  | { kind: 'token'; token: 'refresh' | 'changepassword' | 'verifyemail' }
  | { kind: 'box' }
  | { kind: 'enrolcode' };

export const publicGate = (): Gate => ({ kind: 'public' });
export const anyUser = (): Gate => ({ kind: 'any' });
export const roles = (...list: string[]): Gate => ({ kind: 'roles', roles: list });
export const perms = (...list: string[]): Gate => ({ kind: 'perms', perms: list });
export const staff = (): Gate => ({ kind: 'staff' });
export const syncKey = (): Gate => ({ kind: 'synckey' });
export const syncKeyOrStaff = (): Gate => ({ kind: 'synckeyOrStaff' });
export const syncKeyOrOfflineStaff = (): Gate => ({ kind: 'synckeyOrOfflineStaff' });
export const anyOrSyncKey = (): Gate => ({ kind: 'anyOrSynckey' });
/** A token of another type than ACCESS, read from the query string (refresh, password change, email verification). */
export const tokenOf = (token: 'refresh' | 'changepassword' | 'verifyemail'): Gate => ({ kind: 'token', token });
/** A fleet box's credential (central only; see docs/fleet-protocol.md). */
export const boxCredential = (): Gate => ({ kind: 'box' });
/** A fleet box's one-time enrolment code (central only). */
export const enrolmentCode = (): Gate => ({ kind: 'enrolcode' });

export interface RouteInput {
  params?: ZodType;
  query?: ZodType;
  body?: ZodType;
}

/**
 * What a route's schema for one part of the request hands its handler: the schema's output, or `unknown`
 * where the route declares no schema for that part (so a handler cannot read a field nobody checked).
 */
export type Parsed<I, K extends keyof RouteInput> = I extends { [P in K]: infer S }
  ? S extends ZodType
    ? z.output<S>
    : unknown
  : unknown;

/**
 * Which rows a route's caller may touch, declared with the gate (`scope.schoolsOfCaller`,
 * `scope.global`, ...). A service turns the rule into middleware that resolves it once per request
 * (from the caller and the database) and hands the result to the handler as `ctx.scope`.
 */
export interface ScopeRule {
  readonly scope: string;
  /** What the rule admits, in a sentence (the route documentation shows it). */
  readonly doc: string;
}

const isScopeRule = (v: unknown): v is ScopeRule =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as ScopeRule).scope === 'string' &&
  typeof (v as ScopeRule).doc === 'string';

/**
 * What every handler receives: the service's tools (`TTools`: the database, the configuration...), the
 * caller, its resolved scope, the request's logger and its input, typed by the route's schemas (`I`).
 * `req` and `res` remain for what only they carry (the client's address, an upload's stream, a download).
 */
export type HandlerContext<TCaller = unknown, TScope = unknown, I = object, TTools = object> = TTools & {
  req: Request;
  res: Response;
  caller: TCaller;
  /** The route's scope rule resolved for this caller (undefined on a route that declares none). */
  scope: TScope;
  /** The request's logger: its lines carry the request id. */
  readonly log: Logger;
  params: Parsed<I, 'params'>;
  query: Parsed<I, 'query'>;
  body: Parsed<I, 'body'>;
};

/**
 * A handler returns the payload that the success envelope wraps. A handler that wrote the
 * response itself (a file, a stream, a bare body) returns nothing.
 */
export type Handler<TCaller = unknown, TScope = unknown, I = object, TTools = object> =
  (ctx: HandlerContext<TCaller, TScope, I, TTools>) => unknown;

export interface RouteDef<TCaller = unknown, TScope = unknown, TTools = object> {
  method: Method;
  path: string;
  gate: Gate;
  /** Which rows the caller may touch (see ScopeRule); a service may refuse to start without one. */
  scope?: ScopeRule;
  /** A controller-wide gate checked before the route's own (both must pass). */
  classGuard?: Gate;
  input: RouteInput;
  // A method, so that a table holds handlers of routes with different inputs (each typed by its own).
  handler(ctx: HandlerContext<TCaller, TScope, RouteInput, TTools>): unknown;
  summary?: string;
  tags?: string[];
  /** Middleware run before the gate (for example a feature switch that must answer first). */
  before?: RequestHandler[];
  /** Success status when not 200. */
  status?: number;
  /** A second path for a route already in the catalogue (left out of the gating counts). */
  alias?: boolean;
  /** A route beyond the original's catalogue (left out of the spec's gating counts, counted apart). */
  addition?: boolean;
  /**
   * Largest JSON body this route reads (bytes or a size such as '5mb'); the service's default (1 MB)
   * when absent. Raise it only on authenticated routes that need more.
   */
  bodyLimit?: string | number;
  /** The route reads the request body itself (a file upload), whatever its content type: never parsed as JSON. */
  rawBody?: boolean;
  /**
   * `replica`: the route only reads, and what it reads may lag the primary by a bounded time, so the
   * service may hand its handler a read replica's pool as the database (see RouteHandlerOptions.tools).
   * Its gate and scope are resolved as any other route's.
   */
  reads?: 'replica';
}

type RouteExtra =
  'classGuard' | 'summary' | 'tags' | 'before' | 'status' | 'alias' | 'addition' | 'bodyLimit' | 'rawBody' | 'reads';
/** The optional part of a route declaration (its summary, status, limits...). */
export type RouteOptions = Partial<Pick<RouteDef, RouteExtra>>;

/**
 * The route declaration of a service whose routes declare their scope: method, path, gate, scope rule,
 * input schemas, handler and options. The handler's context is typed by the schemas and the service's
 * caller, scope and tools.
 */
export function scopedRoutes<TCaller, TScope, TTools = object>() {
  return <const I extends RouteInput>(
    method: Method, path: string, gate: Gate, scope: ScopeRule, input: I,
    handler: Handler<TCaller, TScope, I, TTools>, extra?: RouteOptions,
  ): RouteDef<TCaller, TScope, TTools> => ({ method, path, gate, scope, input, handler, ...(extra ?? {}) });
}

/** The route declaration of a service without scope rules: method, path, gate, input, handler, options. */
export function unscopedRoutes<TCaller, TTools = object>() {
  return <const I extends RouteInput>(
    method: Method, path: string, gate: Gate, input: I, handler: Handler<TCaller, undefined, I, TTools>,
    extra?: RouteOptions,
  ): RouteDef<TCaller, undefined, TTools> => ({ method, path, gate, input, handler, ...(extra ?? {}) });
}

/**
 * One route with an untyped caller (tests and tools): method, path, gate, then optionally the scope
 * rule, the input schemas, the handler and the rest.
 */
export function route<const I extends RouteInput, TCaller = unknown, TScope = unknown>(
  method: Method, path: string, gate: Gate, scope: ScopeRule, input: I, handler: Handler<TCaller, TScope, I>,
  extra?: RouteOptions,
): RouteDef<TCaller, TScope>;
export function route<const I extends RouteInput, TCaller = unknown, TScope = unknown>(
  method: Method, path: string, gate: Gate, input: I, handler: Handler<TCaller, TScope, I>, extra?: RouteOptions,
): RouteDef<TCaller, TScope>;
export function route<TCaller = unknown, TScope = unknown>(
  method: Method, path: string, gate: Gate, ...rest: unknown[]
): RouteDef<TCaller, TScope> {
  const scope = isScopeRule(rest[0]) ? rest.shift() as ScopeRule : undefined;
  const [input, handler, extra] = rest as [RouteInput, RouteDef<TCaller, TScope>['handler'], RouteOptions | undefined];
  return { method, path, gate, ...(scope ? { scope } : {}), input, handler, ...(extra ?? {}) };
}

/** A route that reads no params, query or body of its own. */
export const noInput = {} as const;

/** JSON bodies of routes that name no limit of their own. */
export const DEFAULT_BODY_LIMIT = '1mb';

/**
 * The JSON body parser with a limit; a request that announces no body (no Content-Length, no
 * Transfer-Encoding) has none to parse, and a body parsed once is not parsed again.
 */
export function jsonBody(limit: string | number): RequestHandler {
  const json = express.json({ limit });
  return (req, res, next) => {
    if (hasBody(req)) json(req, res, next);
    else next();
  };
}

/** Whether a request announces a body (Content-Length or Transfer-Encoding). */
export const hasBody = (req: Request): boolean =>
  req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/** Parses the JSON body now (for the few steps that must read it before the route: a token in the body). */
export function parseJsonBody(req: Request, res: Response, limit: string | number = DEFAULT_BODY_LIMIT): Promise<void> {
  return new Promise((resolve, reject) => {
    jsonBody(limit)(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
  });
}

/** Turns a gate into guard middleware; undefined for a gate the service does not support. */
export type GateResolver = (gate: Gate) => RequestHandler[] | undefined;

/**
 * Turns a scope rule into the middleware that resolves it for the request (into `res.locals.scope`);
 * undefined for a rule the service does not know.
 */
export type ScopeResolver = (rule: ScopeRule) => RequestHandler | undefined;

/** Options of the route handler: the JSON body limit of routes that name none; the scope rules. */
export interface RouteHandlerOptions {
  defaultBodyLimit?: string | number;
  /**
   * When given, every route must declare a scope rule the resolver knows, or the handler refuses to
   * be built (the service does not start).
   */
  scopes?: { resolve: ScopeResolver; names: readonly string[] };
  /**
   * What every handler's context carries besides the request (the database, the configuration...), read
   * for each request: a service whose dependencies change while it runs (a test's transaction) hands the
   * current ones. Given the route, so that a route that `reads: 'replica'` may get a replica's pool.
   */
  tools?: (route: Pick<RouteDef, 'reads'>) => object;
}

/** A schema failure in the contract's words: each issue as `"<path>" <message>`, joined by ", ". */
export function zodMessage(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      // An unknown key inside an object names its full path once: `"students.3.extra" is not allowed`.
      if (
        i.code === 'unrecognized_keys' &&
        i.path.length &&
        i.keys.length === 1 &&
        i.message === `"${i.keys[0]}" is not allowed`
      ) {
        return `"${[...i.path, i.keys[0]].join('.')}" is not allowed`;
      }
      // A message that opens with a quoted name already says which field it is about (a field label, as
      // the original's validators word it: `"Lesson Name" is required`), as does a custom issue marked
      // `labelled` (`Lesson Name not allowed`).
      const labelled =
        i.message.startsWith('"') ||
        (i.code === 'custom' && (i.params as { labelled?: boolean } | undefined)?.labelled === true);
      const field = i.path.length && !labelled ? `"${i.path.join('.')}" ` : '';
      return `${field}${i.message}`.trim();
    })
    .join(', ');
}

/** Parses one part of the request with its schema; a failure is a 400 with the schema's words. */
export function parseInput<T>(schema: ZodType<T> | undefined, value: unknown): T {
  if (!schema) return value as T;
  const result = schema.safeParse(value);
  if (!result.success) throw httpError(400, zodMessage(result.error));
  return result.data;
}

function validator(input: RouteInput): RequestHandler {
  return (req, res, next) => {
    res.locals.params = parseInput(input.params, req.params);
    res.locals.query = parseInput(input.query, req.query);
    res.locals.body = parseInput(input.body, req.body ?? {});
    next();
  };
}

type Tools = NonNullable<RouteHandlerOptions['tools']>;

function runner<TCaller, TScope>(def: RouteDef<TCaller, TScope>, tools: Tools): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const data = await def.handler({
        ...tools(def),
        req,
        res,
        caller: res.locals.caller as TCaller,
        scope: res.locals.scope as TScope,
        // Read when a handler logs: a child logger per request costs a share of a small route's time.
        get log() {
          return req.log;
        },
        params: res.locals.params,
        query: res.locals.query,
        body: res.locals.body,
      });
      if (res.headersSent || res.writableEnded) return;
      res.statusCode = def.status ?? 200;
      res.json({ error: false, data: data === undefined ? null : data });
    } catch (err) {
      next(err);
    }
  };
}

const noTools = (): object => ({});

/** The first path segment, lower-cased: '' for '/', 'curriculum' for '/Curriculum/all/'. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/**
 * One segment of a route's path: a literal (lower-cased), a named parameter, or (last only, written
 * `:name+`) a parameter taking the rest of the path, one or more segments, each decoded on its own and
 * joined with '/'.
 */
type Segment = { literal: string } | { param: string; rest?: true };

/** Where routeHandler leaves the template of the route that answers a request (`/grade/:gradeid`), for metrics. */
export const ROUTE_TEMPLATE = Symbol('routeTemplate');

interface CompiledRoute {
  path: string;
  method: string;
  segments: Segment[];
  handle: RequestHandler;
}

function compilePath(path: string): Segment[] {
  if (path === '/') return [];
  const parts = path.slice(1).split('/');
  return parts.map((part, index) => {
    if (part.startsWith(':')) {
      const rest = part.endsWith('+');
      const param = part.slice(1, rest ? -1 : undefined);
      if (!/^\w+$/.test(param)) throw new Error(`Route path ${path}: parameter '${part}' is not a plain name`);
      if (rest && index !== parts.length - 1)
        throw new Error(`Route path ${path}: only the last parameter may take the rest of the path`);
      return rest ? { param, rest: true } : { param };
    }
    if (!part || /[:*?(){}]/.test(part))
      throw new Error(`Route path ${path}: segment '${part}' is not a plain literal`);
    return { literal: part.toLowerCase() };
  });
}

/** The segments of a request path: at most one trailing slash ignored, '/' has none. */
function pathSegments(path: string): string[] {
  const p = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return p === '/' ? [] : p.slice(1).split('/');
}

/** ASCII case-insensitive equality with a lower-case literal (as routing ignores case). */
function sameLiteral(given: string, literal: string): boolean {
  if (given.length !== literal.length) return false;
  for (let i = 0; i < given.length; i += 1) {
    const c = given.charCodeAt(i);
    const l = literal.charCodeAt(i);
    if (c !== l && !(c >= 65 && c <= 90 && c + 32 === l)) return false;
  }
  return true;
}

/** The decoded parameters of a request path that matches the route, or undefined. */
function decoded(value: string): string {
  try {
    return value.includes('%') ? decodeURIComponent(value) : value;
  } catch {
    throw httpError(400, `Failed to decode param '${value}'`);
  }
}

function matchPath(segments: Segment[], given: string[]): Record<string, string> | undefined {
  const last = segments[segments.length - 1];
  const rest = last !== undefined && 'param' in last && last.rest === true;
  if (rest ? given.length < segments.length : segments.length !== given.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i += 1) {
    const seg = segments[i];
    const value = given[i];
    if ('literal' in seg) {
      if (!sameLiteral(value, seg.literal)) return undefined;
    } else if (seg.rest) {
      const tail = given.slice(i);
      if (tail.some((v) => !v)) return undefined;
      params[seg.param] = tail.map(decoded).join('/');
    } else {
      if (!value) return undefined;
      params[seg.param] = decoded(value);
    }
  }
  return params;
}

/**
 * The request handler of route tables: routes are grouped by their literal first segment, so that a
 * request is matched only against the routes of its own area, in table order (static segments are
 * declared before parameters). Paths match in any case and with or without a trailing slash, a GET
 * route also answers HEAD, and parameters are URL-decoded (a malformed one is a 400). A request no
 * route matches goes on to the next handler (the 404).
 */
export function routeHandler<TCaller, TScope = unknown>(
  routes: ReadonlyArray<RouteDef<TCaller, TScope>>,
  resolve: GateResolver,
  o: RouteHandlerOptions = {},
): RequestHandler {
  const areas = new Map<string, CompiledRoute[]>();
  const parsers = new Map<string | number, RequestHandler>();
  const parserOf = (limit: string | number): RequestHandler => {
    let p = parsers.get(limit);
    if (!p) parsers.set(limit, (p = jsonBody(limit)));
    return p;
  };
  for (const def of routes) {
    const segment = firstSegment(def.path);
    if (/[:*?(]/.test(segment))
      throw new Error(`Route ${def.method} ${def.path}: the first path segment must be literal`);
    const guards: RequestHandler[] = [];
    for (const gate of def.classGuard ? [def.classGuard, def.gate] : [def.gate]) {
      const g = resolve(gate);
      if (!g) throw new Error(`Route ${def.method} ${def.path}: no guard for gate '${gate.kind}'`);
      guards.push(...g);
    }
    const scoping: RequestHandler[] = [];
    if (o.scopes) {
      const known = `one of ${o.scopes.names.map((n) => `scope.${n}`).join(', ')}`;
      if (!def.scope) {
        throw new Error(
          `Route ${def.method} ${def.path} declares no scope: add ${known} after its gate, as in ` +
            `route('${def.method}', '${def.path}', <gate>, scope.<rule>, <input>, <handler>)`,
        );
      }
      const s = o.scopes.resolve(def.scope);
      if (!s)
        throw new Error(`Route ${def.method} ${def.path}: unknown scope rule '${def.scope.scope}' (expected ${known})`);
      scoping.push(s);
    }
    let area = areas.get(segment);
    if (!area) areas.set(segment, (area = []));
    area.push({
      path: def.path,
      method: def.method,
      segments: compilePath(def.path),
      // The body is read only once the caller has passed the route's guards (and the rate limiter and
      // identity before them), with the route's own limit: an anonymous request cannot make the
      // service parse a large body.
      handle: series([
        ...(def.before ?? []),
        ...guards,
        ...(def.rawBody ? [] : [parserOf(def.bodyLimit ?? o.defaultBodyLimit ?? DEFAULT_BODY_LIMIT)]),
        validator(def.input),
        // The scope is resolved once the caller passed its gate and its input is valid, so that a refused
        // or malformed request costs no look-up.
        ...scoping,
        runner(def, o.tools ?? noTools),
      ]),
    });
  }
  return (req, res, next) => {
    const area = areas.get(firstSegment(req.path));
    if (!area) {
      next();
      return;
    }
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const given = pathSegments(req.path);
    let i = 0;
    const tryNext = (err?: unknown): void => {
      if (err !== undefined && err !== null && err !== 'route') {
        next(err === 'router' ? undefined : err);
        return;
      }
      while (i < area.length) {
        const r = area[i++];
        if (r.method !== method) continue;
        let params: Record<string, string> | undefined;
        try {
          params = matchPath(r.segments, given);
        } catch (e) {
          next(e);
          return;
        }
        if (!params) continue;
        req.params = params;
        (req as { [ROUTE_TEMPLATE]?: string })[ROUTE_TEMPLATE] = r.path;
        r.handle(req, res, tryNext);
        return;
      }
      next();
    };
    tryNext();
  };
}

/** Mounts route tables on a router (see routeHandler). */
export function mount<TCaller, TScope = unknown>(
  router: Router,
  routes: ReadonlyArray<RouteDef<TCaller, TScope>>,
  resolve: GateResolver,
  o: RouteHandlerOptions = {},
): void {
  router.use(routeHandler(routes, resolve, o));
}
