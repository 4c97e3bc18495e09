import { ClassroomError } from '../classroom-client';
import { EnvelopeError } from '../classroom-client/rows';
import { ObjectStoreError } from '../objects';
import {
  NETWORK_ERROR_CODES,
  OUTAGE_RETRY_AFTER_SECONDS,
  errorChain,
  sharedOutageOf,
  type SharedDependency,
} from '@lms/shared';

/** A dependency that was unreachable or refused for want of capacity, as opposed to a refusal of the request. */
export type Dependency = SharedDependency | 'object store';

export { NETWORK_ERROR_CODES, OUTAGE_RETRY_AFTER_SECONDS };

// S3 answers that mean "not now": the store is overloaded, restarting or failing inside.
const S3_TRANSIENT = new Set([
  'ServiceUnavailable',
  'SlowDown',
  'InternalError',
  'RequestTimeout',
  'RequestTimeTooSkewed',
]);

/** Which dependency an error says is out of reach, or null when the error is about the request itself. */
export function outageOf(err: unknown): Dependency | null {
  const errors = errorChain(err);
  for (const e of errors) {
    if (e instanceof ObjectStoreError) {
      if (e.code === 'Unavailable') return 'object store';
      const causeCode = (e.cause as { code?: string } | undefined)?.code;
      if (causeCode && (S3_TRANSIENT.has(causeCode) || NETWORK_ERROR_CODES.has(causeCode))) return 'object store';
      return null;
    }
  }
  return sharedOutageOf(err);
}

/**
 * Which of central's own dependencies a request's failure says is out of reach (its answer is then a 503
 * with Retry-After, see createApp), or null. A failure to reach a classroom server is not one of them:
 * the classroom client's errors, and any outbound HTTP call's (`fetch failed`), are the route's to
 * answer (a 500 naming the classroom server, or the classroom's own refusal).
 */
export function requestOutage(err: unknown): Dependency | null {
  const errors = errorChain(err);
  const outbound = errors.some(
    (e) =>
      e instanceof ClassroomError ||
      e instanceof EnvelopeError ||
      (e instanceof TypeError && e.message === 'fetch failed'),
  );
  return outbound ? null : outageOf(err);
}
