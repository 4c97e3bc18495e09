import type { Knex } from '@lms/db';
import type { Logger, RedisClient, RouteDef } from '@lms/shared';
import type { Config } from '../config';
import type { ObjectStore } from '../objects';

/** The one identity resolved from a request's Authorization header; every guard reads only this. */
export type Caller =
  | { kind: 'anonymous' }
  | { kind: 'apikey' }
  | {
      kind: 'staff';
      lmsuserid: string;
      lmsusername: string;
      roleids: string[];
      permissions: string[];
      /** The synthetic superadmin entry: every permission row is held. */
      wildcard: boolean;
      jti: string;
      claims: Record<string, unknown>;
    }
  | {
      kind: 'school';
      schooluserid: string;
      schoolusername: string;
      schooluserrole: number;
      jti: string;
      claims: Record<string, unknown>;
    };

export type CentralRoute = RouteDef<Caller>;

export interface Deps {
  db: Knex;
  logger: Logger;
  redis?: RedisClient;
  /** Archive for uploaded log ZIPs and media; `createObjectStore(config.objectStore)`. */
  objects?: ObjectStore;
}

export interface AppContext {
  config: Config;
  deps: Deps;
}
