import type { Knex } from '@lms/db';
import type { HandlerContext, Logger, RedisClient, RouteDef, RouteInput } from '@lms/shared';
import type { Config } from '../config';
import type { Mailer } from '../auth/mail';
import type { ObjectStore } from '../objects';
import type { ReplicaReads } from '../replica';

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
  /** A fleet box proven by its own credential (`Box <boxid>.<secret>`), read by the box gate only. */
  | { kind: 'box'; boxid: string; schoolid: string }
  /** A box presenting a valid one-time enrolment code (`Enrol <code>`), read by the enrolcode gate only. */
  | { kind: 'enrolcode'; boxid: string; schoolid: string; codehash: string }
  /** A refresh, change-password or verify-email token read from the query string by a token gate. */
  | {
      kind: 'token';
      type: 'REFRESH' | 'CHANGEPASSWORD' | 'VERIFYEMAIL';
      sub: string;
      jti: string;
      sessionid: string | null;
    };

/**
 * Which rows a route's caller may touch (the rules are in scope.ts).
 */
export type ScopeName =
  | 'global'
  | 'schoolsOfCaller'
  | 'countriesOfCaller'
  | 'curriculaOfCaller'
  | 'ownAccount'
  | 'staffOfCaller'
  | 'wholeOrganisation';

/** A rule resolved for one request; `all` when nothing narrows (then the lists are empty and unused). */
export interface Scope {
  readonly rule: ScopeName;
  readonly all: boolean;
  /** The schools admitted (by id and by name). */
  readonly schoolids: readonly string[];
  readonly schoolnames: readonly string[];
  /** The countries admitted: the `countries` claim alone, else the countries of the admitted schools. */
  readonly countryids: readonly string[];
  /** The curricula admitted (curriculaOfCaller only): those offered in `countryids`. */
  readonly curriculumids: readonly string[];
  /** ownAccount: the caller's own account id (lmsuserid, schooluserid or a token's subject). */
  readonly account: string | null;
  /** staffOfCaller: the staff accounts (lmsuserid) whose narrowing lies within the caller's. */
  readonly accountids: readonly string[];
  /** staffOfCaller: the countries the caller holds whole (its `countries` claim, when it has no `schools` claim). */
  readonly wholecountries: readonly string[];
}

/** What every central handler's context carries besides the request. */
export interface CentralTools {
  db: Knex;
  /** The primary's pool, where a route's `db` is the replica's: what must be written goes here. */
  primary?: Knex;
  config: Config;
  /** The object store the app was given, else the one of the configuration (OBJECT_DIR / S3_ENDPOINT). */
  objects: ObjectStore;
  /** The service's logger (the context's `log` is the request's own, with its id). */
  logger: Logger;
  redis?: RedisClient;
  /** Where reset and verification mail goes (see mailerOf). */
  mailer: Mailer;
}

export type CentralRoute = RouteDef<Caller, Scope, CentralTools>;
/**
 * What a central handler receives: the tools, the caller, its resolved scope and its input, typed by the
 * route's schemas (`CentralCtx<{ body: typeof gradeBody }>`).
 */
export type CentralCtx<I extends RouteInput = object> = HandlerContext<Caller, Scope, I, CentralTools>;

export interface Deps {
  db: Knex;
  logger: Logger;
  redis?: RedisClient;
  /** Archive for uploaded log ZIPs and media; `createObjectStore(config.objectStore)`. */
  objects?: ObjectStore;
  /** Where reset and verification mail goes; by default SMTP when SMTP_URL is set, else the log. */
  mailer?: Mailer;
  /** The read replica of DATABASE_REPLICA_URL: the database of routes that `reads: 'replica'` while it keeps up. */
  replica?: ReplicaReads;
}

export interface AppContext {
  config: Config;
  deps: Deps;
}
