import type { Request } from 'express';
import type { Config } from '../config';
import type { Deps } from './types';

/** The app's dependencies, for middleware; a handler receives them in its context instead. */
export const appDeps = (req: Request): Deps => req.app.locals.deps as Deps;
export const configOf = (req: Request): Config => req.app.locals.config as Config;
