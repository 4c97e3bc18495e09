import type { Request } from 'express';
import type { Config } from '../config';
import { createObjectStore, type ObjectStore } from '../objects';
import type { Caller, Deps } from './types';

/**
 * The app's dependencies, for middleware that runs before a handler (guards, scope resolvers); a handler
 * receives them in its context instead.
 */
export const appDeps = (req: Request): Deps => req.app.locals.deps as Deps;
/** The app's configuration, for middleware; a handler reads `ctx.config`. */
export const configOf = (req: Request): Config => req.app.locals.config as Config;
/** Who a write is recorded as (the audit columns): a staff caller's lmsuserid, else nobody. */
export const actorOf = (c: Caller): string | null => (c.kind === 'staff' ? c.lmsuserid : null);

const fallbackStores = new WeakMap<Config, ObjectStore>();

/** The store built from the configuration, one per configuration. */
export function configuredStore(config: Config): ObjectStore {
  let store = fallbackStores.get(config);
  if (!store) {
    store = createObjectStore(config.objectStore);
    fallbackStores.set(config, store);
  }
  return store;
}
