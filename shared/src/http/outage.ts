/**
 * Telling a dependency out of reach (the database, Redis) from a refusal of the request, for both
 * services: such a failure is answered 503 with Retry-After (see OutageAnswer in ./app), since the same
 * request succeeds once the dependency is back, where a 500 tells a client nothing it can act on.
 */

/** A dependency that was unreachable or refused for want of capacity, as opposed to a refusal of the request. */
export type SharedDependency = 'database' | 'redis';

/** Seconds a client is asked to wait before it sends the same request again after an outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 30;

/** Socket errors that mean the other end could not be reached or went away. */
export const NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
// PostgreSQL: connection exceptions (08…), too many connections (53300), out of memory or disk (53…),
// shutting down / starting up (57P01–57P03), serialization and deadlock (40001, 40P01: the same request
// succeeds when sent again).
const PG_TRANSIENT = /^(08...|53...|57P0[123]|40001|40P01)$/;
const DB_MESSAGES = new RegExp(
  'Unable to acquire a connection|Connection terminated|Connection ended unexpectedly|' +
    'Timeout acquiring a connection|connect ECONNREFUSED|Client has encountered a connection error|' +
    'terminating connection|the database system is (starting up|shutting down)|SQLITE_BUSY|database is locked',
  'i',
);

// The Redis client's own failures while it is disconnected (commands are not queued, see connectRedis).
const REDIS_ERRORS = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError',
]);

/** The error and its causes, outermost first (a bounded walk: a cause may point back at its error). */
export function errorChain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/** Whether the database or Redis is what an error says is out of reach, or null. */
export function sharedOutageOf(err: unknown): SharedDependency | null {
  const errors = errorChain(err);
  for (const e of errors) {
    const name = (e as { name?: unknown; constructor?: { name?: unknown } }).constructor?.name;
    if (typeof name === 'string' && REDIS_ERRORS.has(name)) return 'redis';
  }
  for (const e of errors) {
    const x = e as { code?: unknown; name?: unknown; message?: unknown };
    const code = typeof x.code === 'string' ? x.code : '';
    if (
      x.name === 'KnexTimeoutError' ||
      PG_TRANSIENT.test(code) ||
      NETWORK_ERROR_CODES.has(code) ||
      code === 'SQLITE_BUSY'
    )
      return 'database';
    if (typeof x.message === 'string' && DB_MESSAGES.test(x.message)) return 'database';
  }
  return null;
}
