import type { Request, RequestHandler } from 'express';
import { httpError, secretEquals, type Gate, type GateResolver } from '@lms/shared';
import { appDeps, configOf } from '../http/context';
import { SCHOOL_ROLE, type Caller } from '../http/types';
import { verifyAccessToken } from './tokens';

function callerOf(res: { locals: Record<string, unknown> }): Caller {
  return (res.locals.caller as Caller | undefined) ?? { kind: 'anonymous' };
}

export const isStaffRole = (role: number): boolean =>
  role === SCHOOL_ROLE.superadmin || role === SCHOOL_ROLE.admin || role === SCHOOL_ROLE.teacher;

/** The bearer token of a request, if any (header only: a token in a URL ends up in access logs). */
export function bearerOf(req: Request): string | undefined {
  const h = req.headers.authorization;
  if (!h) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(h);
  return m ? m[1] : undefined;
}

/**
 * Resolves the request's one identity. A token counts only while its jti is stored and its user is
 * neither deleted nor disabled, so logout and disabling revoke at once.
 */
export async function resolveCaller(req: Request): Promise<Caller> {
  const header = req.headers.authorization;
  if (!header) return { kind: 'anonymous' };
  const config = configOf(req);
  // The central API sends the raw key as the whole header value; it is never accepted as a bearer token.
  if (secretEquals(header, config.serverSyncKey)) return { kind: 'synckey' };
  const raw = bearerOf(req);
  if (!raw) return { kind: 'anonymous' };
  const verified = verifyAccessToken(raw, config.jwtSecret);
  if (!verified) return { kind: 'anonymous' };
  const row = await appDeps(req).db('tokens')
    .join('schoolusers', 'schoolusers.schooluserid', 'tokens.lmsuserid')
    .where('tokens.token', verified.jti)
    .andWhere('tokens.lmsuserid', verified.schooluserid)
    .select('schoolusers.schooluserid', 'schoolusers.schoolusername', 'schoolusers.schooluserrole',
      'schoolusers.isdeleted', 'schoolusers.isdisabled', 'schoolusers.schooluserstatus')
    .first();
  if (!row || row.isdeleted || row.isdisabled || row.schooluserstatus === false) return { kind: 'anonymous' };
  return {
    kind: 'user',
    schooluserid: row.schooluserid,
    schoolusername: row.schoolusername,
    schooluserrole: Number(row.schooluserrole),
    jti: verified.jti,
    claims: verified.claims,
  };
}

export const identify = (): RequestHandler => async (req, res, next) => {
  try {
    res.locals.caller = await resolveCaller(req);
    next();
  } catch (err) {
    next(err);
  }
};

type Check = (caller: Caller, offline: boolean) => boolean;

const isUser = (c: Caller) => c.kind === 'user';
const isStaff = (c: Caller) => c.kind === 'user' && isStaffRole(c.schooluserrole);
const isKey = (c: Caller) => c.kind === 'synckey';

/** 401 when nobody valid is calling (clients sign in again on 401), 403 when a valid caller is not admitted. */
function guard(check: Check): RequestHandler {
  return (req, res, next) => {
    const caller = callerOf(res);
    if (caller.kind === 'anonymous') throw httpError(401, 'Unauthorized');
    if (!check(caller, configOf(req).offline)) throw httpError(403, 'Forbidden');
    next();
  };
}

export const classroomGates: GateResolver = (gate: Gate) => {
  switch (gate.kind) {
    case 'public':
      return [];
    case 'any':
      return [guard((c) => isUser(c))];
    case 'staff':
      return [guard((c) => isStaff(c))];
    case 'synckey':
      return [guard((c) => isKey(c))];
    case 'synckeyOrStaff':
      return [guard((c) => isKey(c) || isStaff(c))];
    case 'synckeyOrOfflineStaff':
      return [guard((c, offline) => isKey(c) || (offline && isStaff(c)))];
    case 'anyOrSynckey':
      return [guard((c) => isKey(c) || isUser(c))];
    default:
      return undefined;
  }
};

/** The signed-in school user of a handler behind a token gate. */
export function userOf(caller: Caller): Extract<Caller, { kind: 'user' }> {
  if (caller.kind !== 'user') throw httpError(403, 'Forbidden');
  return caller;
}
