import type { RequestHandler } from 'express';
import { httpError, type Gate, type GateResolver } from '@lms/shared';
import type { Caller } from '../http/types';

function callerOf(res: { locals: Record<string, unknown> }): Caller {
  return (res.locals.caller as Caller | undefined) ?? { kind: 'anonymous' };
}

/** Any gate but public needs a signed-in user; until identities resolve, every caller is anonymous. */
export const requireAuth = (): RequestHandler => (_req, res, next) => {
  const caller = callerOf(res);
  if (caller.kind === 'anonymous') throw httpError(401, 'Unauthorized');
  next();
};

export const identify = (): RequestHandler => (_req, res, next) => {
  res.locals.caller = { kind: 'anonymous' } satisfies Caller;
  next();
};

export const centralGates: GateResolver = (gate: Gate) => {
  switch (gate.kind) {
    case 'public':
      return [];
    case 'any':
    case 'roles':
    case 'perms':
    case 'token':
      return [requireAuth()];
    default:
      return undefined;
  }
};
