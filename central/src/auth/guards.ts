import type { NextFunction, Request, RequestHandler, Response } from 'express';
import {
  hasBody,
  httpError,
  parseJsonBody,
  roleIdOf,
  secretEquals,
  WILDCARD_PERMISSION,
  type Gate,
  type GateResolver,
} from '@lms/shared';
import type { Caller } from '../http/types';
import { appDeps, configOf } from '../http/context';
import { checkRecorded, decodeVerified, verifyStored, type TokenPayload, type TokenType } from './tokens';
import { boxGate, enrolCodeGate } from './box-credentials';

const UNAUTHORIZED = 'Unauthorized';
const FORBIDDEN = 'Forbidden resource';

/** School-user roles that may use an access-token route: superadmin, admin, teacher. */
const SCHOOL_STAFF_ROLES = new Set([1, 2, 3]);

export function callerOf(res: Response): Caller {
  return (res.locals.caller as Caller | undefined) ?? { kind: 'anonymous' };
}

/** A caller that holds a usable access token (a learner's school token never does). */
function hasAccess(c: Caller): c is Extract<Caller, { kind: 'staff' | 'school' }> {
  return c.kind === 'staff' || (c.kind === 'school' && SCHOOL_STAFF_ROLES.has(c.schooluserrole));
}

// ---- Pure decisions: a status (0 = passes, 401, 403) from the caller alone. -----------------------

export type Decision = 0 | 401 | 403;

/** ACCESS: a valid access caller. REFRESH/CHANGEPASSWORD/VERIFYEMAIL: a token of exactly that type. */
export function authDecision(c: Caller, type: TokenType = 'ACCESS'): Decision {
  if (type === 'ACCESS') return hasAccess(c) ? 0 : 401;
  return c.kind === 'token' && c.type === type ? 0 : 401;
}

/**
 * Role list: passes when `lmsuserroles` holds one of the listed roles. The API key counts only
 * where `apikey` is listed (otherwise the request has no valid caller: 401). The legacy
 * `lmsuserrole` is never consulted.
 */
export function rolesDecision(
  c: Caller,
  keys: readonly string[],
  wanted: readonly string[] = roleIdsOf(keys),
): Decision {
  if (c.kind === 'apikey') return keys.includes('apikey') ? 0 : 401;
  if (!hasAccess(c)) return 401;
  if (c.kind !== 'staff') return 403;
  return c.roleids.some((r) => wanted.includes(r)) ? 0 : 403;
}

function roleIdsOf(keys: readonly string[]): string[] {
  return keys.map((k) => roleIdOf(k) ?? k);
}

/** Permission OR-list, or the superadmin wildcard. */
export function permsDecision(c: Caller, names: readonly string[]): Decision {
  if (!hasAccess(c)) return 401;
  if (c.kind !== 'staff') return 403;
  if (c.wildcard) return 0;
  return names.some((n) => c.permissions.includes(n)) ? 0 : 403;
}

function guard(decide: (c: Caller) => Decision, unauthorized = UNAUTHORIZED): RequestHandler {
  return (_req, res, next) => {
    const d = decide(callerOf(res));
    if (d) throw httpError(d, d === 401 ? unauthorized : FORBIDDEN);
    next();
  };
}

// A refused refresh says `Please authenticate`, the message clients know from a failed refresh.
export const requireAuth = (type: TokenType = 'ACCESS'): RequestHandler =>
  guard((c) => authDecision(c, type), type === 'REFRESH' ? 'Please authenticate' : UNAUTHORIZED);
export const requireRoles = (...keys: string[]): RequestHandler => {
  const wanted = roleIdsOf(keys);
  return guard((c) => rolesDecision(c, keys, wanted));
};
export const requirePerms = (...names: string[]): RequestHandler => guard((c) => permsDecision(c, names));

/** The raw SERVER_SYNC_KEY, optionally or a staff-level access token. */
const requireSyncKey = (orAccess: boolean): RequestHandler =>
  guard((c) => (c.kind === 'synckey' || (orAccess && hasAccess(c)) ? 0 : 401));

// ---- Resolving the one caller of a request ---------------------------------------------------------

const SPACE = /\s/;

/** The token of `Bearer <token>` (any case, surrounding white space allowed, none inside). */
function bearerToken(header: string): string | undefined {
  if (header.length < 8 || header.slice(0, 6).toLowerCase() !== 'bearer' || !SPACE.test(header[6])) return undefined;
  const token = header.slice(7).trim();
  // One search for white space (compiled by the regular expression
  // engine) is three times quicker than a loop over a long token.
  if (!token || SPACE.test(token)) return undefined;
  return token;
}

function accessTokenOf(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (typeof header === 'string') {
    const t = bearerToken(header);
    if (t) return t;
  }
  const fromBody = (req.body as Record<string, unknown> | undefined)?.accesstoken;
  if (typeof fromBody === 'string' && fromBody) return fromBody;
  const fromQuery = req.query?.accesstoken;
  return typeof fromQuery === 'string' && fromQuery ? fromQuery : undefined;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

// What a staff token grants is read from its frozen, memoised payload once, not on every request.
interface StaffGrant { roleids: string[]; permissions: string[]; wildcard: boolean }
const staffGrants = new WeakMap<object, StaffGrant>();

function staffGrantOf(p: TokenPayload, superadminUsername: string | undefined): StaffGrant {
  let g = staffGrants.get(p);
  if (!g) {
    const permissions = strings(p.permissions);
    g = {
      roleids: strings(p.lmsuserroles),
      permissions,
      wildcard:
        permissions.includes(WILDCARD_PERMISSION) || (!!superadminUsername && p.lmsusername === superadminUsername),
    };
    if (Object.isFrozen(p)) {
      Object.freeze(g.roleids);
      Object.freeze(g.permissions);
      staffGrants.set(p, g);
    }
  }
  return g;
}

/** Resolves the request's one Caller from the Authorization header (or `accesstoken`); never throws 401 itself. */
export async function resolveCaller(req: Request): Promise<Caller> {
  const header = req.headers.authorization;
  if (!header && !req.query?.accesstoken && !(req.body as Record<string, unknown> | undefined)?.accesstoken)
    return { kind: 'anonymous' };
  const config = configOf(req);
  const token = accessTokenOf(req);
  const verified = token ? decodeVerified(config, token, 'ACCESS') : undefined;
  if (verified) {
    const stored = await checkRecorded(appDeps(req).db, verified, 'ACCESS');
    if (stored) {
      const p = stored.payload;
      if (typeof p.lmsuserid === 'string') {
        const grant = staffGrantOf(p, config.superadminUsername);
        return {
          kind: 'staff',
          lmsuserid: p.lmsuserid,
          lmsusername: String(p.lmsusername ?? ''),
          roleids: grant.roleids,
          permissions: grant.permissions,
          wildcard: grant.wildcard,
          jti: p.jti,
          sessionid: stored.sessionid,
          claims: p,
        };
      }
      if (typeof p.schooluserid === 'string') {
        return {
          kind: 'school',
          schooluserid: p.schooluserid,
          schoolusername: String(p.schoolusername ?? ''),
          schooluserrole: Number(p.schooluserrole),
          jti: p.jti,
          sessionid: stored.sessionid,
          claims: p,
        };
      }
    }
    return { kind: 'anonymous' };
  }
  if (typeof header === 'string') {
    // Exactly `Bearer <key>` (capital B, one space), as the original's API-key strategy wants.
    if (secretEquals(header, `Bearer ${config.apiKey}`)) return { kind: 'apikey', user: 'API KEY' };
    if (secretEquals(header, config.serverSyncKey)) return { kind: 'synckey' };
  }
  return { kind: 'anonymous' };
}

/**
 * Runs before every route: the one identity of the request, read by every guard. The contract also
 * takes the access token from the body field `accesstoken`: only a request with neither an
 * Authorization header nor a query token has its body read here, and then with the default limit.
 * `rawBody` names the requests whose body is a file (an upload through a presigned URL): never read here.
 */
export const identify =
  (o: { rawBody?: (req: Request) => boolean } = {}): RequestHandler =>
  (req: Request, res: Response, next: NextFunction) => {
    const needsBody =
      !req.headers.authorization &&
      !req.query?.accesstoken &&
      hasBody(req) &&
      !(req as { _body?: boolean })._body &&
      !o.rawBody?.(req);
    (needsBody ? parseJsonBody(req, res, configOf(req).maxJsonBytes) : Promise.resolve())
      .then(() => resolveCaller(req))
      .then(
        (caller) => {
          res.locals.caller = caller;
          next();
        },
        (err: unknown) => next(err),
      );
  };

const QUERY_PARAM: Record<'REFRESH' | 'CHANGEPASSWORD' | 'VERIFYEMAIL', string> = {
  REFRESH: 'refreshtoken',
  CHANGEPASSWORD: 'changepasswordtoken',
  VERIFYEMAIL: 'verifyemailtoken',
};

/**
 * On the three routes that take a token of another type from the query string, that token is the
 * request's caller (the refresh route also accepts the body field `refreshtoken`).
 */
function resolveQueryToken(type: 'REFRESH' | 'CHANGEPASSWORD' | 'VERIFYEMAIL'): RequestHandler {
  return (req, res, next) => {
    const name = QUERY_PARAM[type];
    const q = req.query?.[name];
    const fromQuery = typeof q === 'string' && q ? q : undefined;
    // The refresh route also takes its token from the body: read it (default limit) only when the query has none.
    const bodyRead =
      !fromQuery && type === 'REFRESH' && hasBody(req)
        ? parseJsonBody(req, res, configOf(req).maxJsonBytes)
        : Promise.resolve();
    bodyRead
      .then(() => {
        const b = type === 'REFRESH' ? (req.body as Record<string, unknown> | undefined)?.[name] : undefined;
        const token = fromQuery ?? (typeof b === 'string' ? b : '');
        return verifyStored(appDeps(req).db, configOf(req), token, type);
      })
      .then(
        (stored) => {
          res.locals.caller = stored
            ? ({
                kind: 'token',
                type,
                sub: stored.payload.sub,
                jti: stored.payload.jti,
                sessionid: stored.sessionid,
              } satisfies Caller)
            : ({ kind: 'anonymous' } satisfies Caller);
          next();
        },
        (err: unknown) => next(err),
      );
  };
}

const TOKEN_GATE_TYPE = { refresh: 'REFRESH', changepassword: 'CHANGEPASSWORD', verifyemail: 'VERIFYEMAIL' } as const;

/** Turns a route's gate into its guards; a gate kind this service does not know stops the start (fail closed). */
export const centralGates: GateResolver = (gate: Gate) => {
  switch (gate.kind) {
    case 'public':
      return [];
    case 'any':
    case 'staff':
      return [requireAuth('ACCESS')];
    case 'roles':
      return [requireRoles(...gate.roles)];
    case 'perms':
      return [requirePerms(...gate.perms)];
    case 'token': {
      const type = TOKEN_GATE_TYPE[gate.token];
      return [resolveQueryToken(type), requireAuth(type)];
    }
    case 'synckey':
    case 'synckeyOrOfflineStaff':
      // The central API is never an offline classroom server: only the key.
      return [requireSyncKey(false)];
    case 'synckeyOrStaff':
    case 'anyOrSynckey':
      return [requireSyncKey(true)];
    // A box's own credential and its enrolment code: read on the fleet's box routes only.
    case 'box':
      return [boxGate];
    case 'enrolcode':
      return [enrolCodeGate];
    default:
      return undefined;
  }
};
