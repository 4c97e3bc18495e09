import type { Request } from 'express';
import type { Config } from '../config';
import type { Deps } from './types';

export const depsOf = (req: Request): Deps => req.app.locals.deps as Deps;
export const configOf = (req: Request): Config => req.app.locals.config as Config;
