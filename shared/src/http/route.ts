import express, { type NextFunction, type Request, type RequestHandler, type Response, type Router } from 'express';
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
  | { kind: 'token'; token: 'refresh' | 'changepassword' | 'verifyemail' };

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

export interface RouteInput {
  params?: ZodType;
  query?: ZodType;
  body?: ZodType;
}

export interface HandlerContext<TCaller> {
  req: Request;
  res: Response;
  caller: TCaller;
  params: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- validated by the route's schema
  query: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  body: any; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * A handler returns the payload that the success envelope wraps. A handler that wrote the
 * response itself (a file, a stream, a bare body) returns nothing.
 */
export type Handler<TCaller> = (ctx: HandlerContext<TCaller>) => unknown;

export interface RouteDef<TCaller = unknown> {
  method: Method;
  path: string;
  gate: Gate;
  /** A controller-wide gate checked before the route's own (both must pass). */
  classGuard?: Gate;
  input: RouteInput;
  handler: Handler<TCaller>;
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
}

export function route<TCaller = unknown>(
  method: Method,
  path: string,
  gate: Gate,
  input: RouteInput,
  handler: Handler<TCaller>,
  extra: Partial<Pick<RouteDef<TCaller>, 'classGuard' | 'summary' | 'tags' | 'before' | 'status' | 'alias' | 'addition' | 'bodyLimit' | 'rawBody'>> = {},
): RouteDef<TCaller> {
  return { method, path, gate, input, handler, ...extra };
}

export const noInput: RouteInput = {};

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
export const hasBody = (req: Request): boolean => req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined;

/** Parses the JSON body now (for the few steps that must read it before the route: a token in the body). */
export function parseJsonBody(req: Request, res: Response, limit: string | number = DEFAULT_BODY_LIMIT): Promise<void> {
  return new Promise((resolve, reject) => {
    jsonBody(limit)(req, res, (err?: unknown) => (err ? reject(err) : resolve()));
  });
}

/** Turns a gate into guard middleware; undefined for a gate the service does not support. */
export type GateResolver = (gate: Gate) => RequestHandler[] | undefined;

/** Options of the route handler: the JSON body limit of routes that name none. */
export interface RouteHandlerOptions {
  defaultBodyLimit?: string | number;
}

/** A schema failure in the contract's words: each issue as `"<path>" <message>`, joined by ", ". */
export function zodMessage(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      // An unknown key inside an object names its full path once: `"students.3.extra" is not allowed`.
      if (i.code === 'unrecognized_keys' && i.path.length && i.keys.length === 1 && i.message === `"${i.keys[0]}" is not allowed`) {
        return `"${[...i.path, i.keys[0]].join('.')}" is not allowed`;
      }
      // A message that opens with a quoted name already says which field it is about (a field label, as
      // the original's validators word it: `"Lesson Name" is required`), as does a custom issue marked
      // `labelled` (`Lesson Name not allowed`).
      const labelled = i.message.startsWith('"') || (i.code === 'custom' && (i.params as { labelled?: boolean } | undefined)?.labelled === true);
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

function runner<TCaller>(def: RouteDef<TCaller>): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const data = await def.handler({
        req,
        res,
        caller: res.locals.caller as TCaller,
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

/** The first path segment, lower-cased: '' for '/', 'curriculum' for '/Curriculum/all/'. */
function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end === -1 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** One segment of a route's path: a literal (lower-cased) or a named parameter. */
type Segment = { literal: string } | { param: string };

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
  return path.slice(1).split('/').map((part) => {
    if (part.startsWith(':')) {
      const param = part.slice(1);
      if (!/^\w+$/.test(param)) throw new Error(`Route path ${path}: parameter '${part}' is not a plain name`);
      return { param };
    }
    if (!part || /[:*?(){}]/.test(part)) throw new Error(`Route path ${path}: segment '${part}' is not a plain literal`);
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
function matchPath(segments: Segment[], given: string[]): Record<string, string> | undefined {
  if (segments.length !== given.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i += 1) {
    const seg = segments[i];
    const value = given[i];
    if ('literal' in seg) {
      if (!sameLiteral(value, seg.literal)) return undefined;
    } else {
      if (!value) return undefined;
      try {
        params[seg.param] = value.includes('%') ? decodeURIComponent(value) : value;
      } catch {
        throw httpError(400, `Failed to decode param '${value}'`);
      }
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
export function routeHandler<TCaller>(routes: ReadonlyArray<RouteDef<TCaller>>, resolve: GateResolver, o: RouteHandlerOptions = {}): RequestHandler {
  const areas = new Map<string, CompiledRoute[]>();
  const parsers = new Map<string | number, RequestHandler>();
  const parserOf = (limit: string | number): RequestHandler => {
    let p = parsers.get(limit);
    if (!p) parsers.set(limit, (p = jsonBody(limit)));
    return p;
  };
  for (const def of routes) {
    const segment = firstSegment(def.path);
    if (/[:*?(]/.test(segment)) throw new Error(`Route ${def.method} ${def.path}: the first path segment must be literal`);
    const guards: RequestHandler[] = [];
    for (const gate of def.classGuard ? [def.classGuard, def.gate] : [def.gate]) {
      const g = resolve(gate);
      if (!g) throw new Error(`Route ${def.method} ${def.path}: no guard for gate '${gate.kind}'`);
      guards.push(...g);
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
        runner(def),
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
export function mount<TCaller>(router: Router, routes: ReadonlyArray<RouteDef<TCaller>>, resolve: GateResolver, o: RouteHandlerOptions = {}): void {
  router.use(routeHandler(routes, resolve, o));
}
