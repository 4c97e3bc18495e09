import type { RequestHandler } from 'express';
import { httpError, type Gate, type GateResolver } from '@lms/shared';
import type { Caller } from '../http/types';

function callerOf(res: { locals: Record<string, unknown> }): Caller {
  return (res.locals.caller as Caller | undefined) ?? { kind: 'anonymous' };
}

/** Until identities resolve, every caller is anonymous and every guarded route answers 401. */
export const requireAuth = (): RequestHandler => (_req, res, next) => {
  if (callerOf(res).kind === 'anonymous') throw httpError(401, 'Unauthorized');
  next();
};

export const identify = (): RequestHandler => (_req, res, next) => {
  res.locals.caller = { kind: 'anonymous' } satisfies Caller;
  next();
};

export const classroomGates: GateResolver = (gate: Gate) => {
  switch (gate.kind) {
    case 'public':
      return [];
    case 'any':
    case 'staff':
    case 'synckey':
    case 'synckeyOrStaff':
    case 'synckeyOrOfflineStaff':
    case 'anyOrSynckey':
      return [requireAuth()];
    default:
      return undefined;
  }
};
