import type { Knex } from '@lms/db';
import type { HandlerContext, Logger, RedisClient, RouteDef, RouteInput } from '@lms/shared';
import type { Config } from '../config';
import type { SyncAgent } from '../fleet/agent';

/** schooluserrole values. Staff = superadmin, admin, teacher. */
export const SCHOOL_ROLE = { superadmin: 1, admin: 2, teacher: 3, student: 4 } as const;

/** The one identity resolved from a request's Authorization header; every guard reads only this. */
export type Caller =
  | { kind: 'anonymous' }
  /** The raw SERVER_SYNC_KEY: the central API calling. */
  | { kind: 'synckey' }
  | {
      kind: 'user';
      schooluserid: string;
      schoolusername: string;
      schooluserrole: number;
      jti: string;
      claims: Record<string, unknown>;
    };


export interface Deps {
  db: Knex;
  logger: Logger;
  redis?: RedisClient;
  /** Where requests are counted instead of logged one by one (LOG_REQUESTS unset): the daily files' hourly summary. */
  countRequest?: (status: number) => void;
  /** The box's sync agent (absent when FLEET_SYNC is off): the teacher page's "Sync now" asks it. */
  agent?: SyncAgent;
}

/** What every classroom handler's context carries besides the request. */
export interface ClassroomTools {
  db: Knex;
  config: Config;
  /** The service's logger (the context's `log` is the request's own, with its id). */
  logger: Logger;
  agent?: SyncAgent;
}

export type ClassroomRoute = RouteDef<Caller, undefined, ClassroomTools>;
/** What a classroom handler receives: the tools, the caller and its input, typed by the route's schemas. */
export type ClassroomCtx<I extends RouteInput = object> = HandlerContext<Caller, undefined, I, ClassroomTools>;
