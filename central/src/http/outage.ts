import { ClassroomError } from '../classroom-client';
import { EnvelopeError } from '../classroom-client/rows';
import { ObjectStoreError } from '../objects';

/** A dependency that was unreachable or refused for want of capacity, as opposed to a refusal of the request. */
export type Dependency = 'database' | 'object store' | 'redis';

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
// S3 answers that mean "not now": the store is overloaded, restarting or failing inside.
const S3_TRANSIENT = new Set([
  'ServiceUnavailable',
  'SlowDown',
  'InternalError',
  'RequestTimeout',
  'RequestTimeTooSkewed',
]);

// The Redis client's own failures while it is disconnected (commands are not queued, see connectRedis).
const REDIS_ERRORS = new Set([
  'ClientClosedError',
  'ClientOfflineError',
  'SocketClosedUnexpectedlyError',
  'ReconnectStrategyError',
]);

function chain(err: unknown): unknown[] {
  const out: unknown[] = [];
  for (let e = err; e && out.length < 8; e = (e as { cause?: unknown }).cause) out.push(e);
  return out;
}

/** Which dependency an error says is out of reach, or null when the error is about the request itself. */
export function outageOf(err: unknown): Dependency | null {
  const errors = chain(err);
  for (const e of errors) {
    if (e instanceof ObjectStoreError) {
      if (e.code === 'Unavailable') return 'object store';
      const causeCode = (e.cause as { code?: string } | undefined)?.code;
      if (causeCode && (S3_TRANSIENT.has(causeCode) || NETWORK_ERROR_CODES.has(causeCode))) return 'object store';
      return null;
    }
  }
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

/** Seconds a client is asked to wait before it sends the same request again after an outage. */
export const OUTAGE_RETRY_AFTER_SECONDS = 30;

/**
 * Which of central's own dependencies a request's failure says is out of reach (its answer is then a 503
 * with Retry-After, see createApp), or null. A failure to reach a classroom server is not one of them:
 * the classroom client's errors, and any outbound HTTP call's (`fetch failed`), are the route's to
 * answer (a 500 naming the classroom server, or the classroom's own refusal).
 */
export function requestOutage(err: unknown): Dependency | null {
  const errors = chain(err);
  const outbound = errors.some(
    (e) =>
      e instanceof ClassroomError ||
      e instanceof EnvelopeError ||
      (e instanceof TypeError && e.message === 'fetch failed'),
  );
  return outbound ? null : outageOf(err);
}
