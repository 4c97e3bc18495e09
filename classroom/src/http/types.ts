import type { Knex } from '@lms/db';
import type { Logger, RedisClient, RouteDef } from '@lms/shared';

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

export type ClassroomRoute = RouteDef<Caller>;

export interface Deps {
  db: Knex;
  logger: Logger;
  redis?: RedisClient;
  /** Where requests are counted instead of logged one by one (LOG_REQUESTS unset): the daily files' hourly summary. */
  countRequest?: (status: number) => void;
}
