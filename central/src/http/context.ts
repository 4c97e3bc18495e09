import type { Request } from 'express';
import type { Config } from '../config';
import type { Caller, Deps } from './types';

export const depsOf = (req: Request): Deps => req.app.locals.deps as Deps;
export const configOf = (req: Request): Config => req.app.locals.config as Config;
/** Who a write is recorded as (the audit columns): a staff caller's lmsuserid, else nobody. */
export const actorOf = (c: Caller): string | null => (c.kind === 'staff' ? c.lmsuserid : null);
