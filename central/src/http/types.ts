import type { Knex } from '@lms/db';
import type { HandlerContext, Logger, RedisClient, RouteDef } from '@lms/shared';
import type { Config } from '../config';
import type { Mailer } from '../auth/mail';
import type { Scope } from './scope';
import type { ObjectStore } from '../objects';

/** The one identity resolved from a request's Authorization header; every guard reads only this. */
export type Caller =
  | { kind: 'anonymous' }
  /** `Bearer <APPLICATION_API_KEY>`: the literal user `API KEY`, no roles, no permissions. */
  | { kind: 'apikey'; user: 'API KEY' }
  /** The raw SERVER_SYNC_KEY as the Authorization header value. */
  | { kind: 'synckey' }
  | {
      kind: 'staff';
      lmsuserid: string;
      lmsusername: string;
      roleids: string[];
      permissions: string[];
      /** The synthetic superadmin entry: every permission row is held (or the dev-only username shortcut). */
      wildcard: boolean;
      jti: string;
      sessionid: string | null;
      claims: Record<string, unknown>;
    }
  | {
      kind: 'school';
      schooluserid: string;
      schoolusername: string;
      /** 1 superadmin, 2 admin, 3 teacher, 4 student; only 1-3 may use an access-token route. */
      schooluserrole: number;
      jti: string;
      sessionid: string | null;
      claims: Record<string, unknown>;
    }
  /** A refresh, change-password or verify-email token read from the query string by a token gate. */
  | { kind: 'token'; type: 'REFRESH' | 'CHANGEPASSWORD' | 'VERIFYEMAIL'; sub: string; jti: string; sessionid: string | null };

export type CentralRoute = RouteDef<Caller, Scope>;
/** What a central handler receives: the request, the caller, its input and its resolved scope. */
export type CentralCtx = HandlerContext<Caller, Scope>;

export interface Deps {
  db: Knex;
  logger: Logger;
  redis?: RedisClient;
  /** Archive for uploaded log ZIPs and media; `createObjectStore(config.objectStore)`. */
  objects?: ObjectStore;
  /** Where reset and verification mail goes; by default SMTP when SMTP_URL is set, else the log. */
  mailer?: Mailer;
}

export interface AppContext {
  config: Config;
  deps: Deps;
}
