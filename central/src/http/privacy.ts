import { LEARNER_IDENTITY_COLUMNS } from '@lms/shared';
import type { Caller } from './types';

// A learner's identity (spec, Teacher rule 8): the roster codec's list, so a box's roster and central's answers
// withhold the same fields.
export { LEARNER_IDENTITY_COLUMNS } from '@lms/shared';

export function seesLearnerIdentity(caller: Caller): boolean {
  return caller.kind === 'staff' && (caller.wildcard || caller.permissions.includes('view_student'));
}

/** The row without the identity columns, unless the caller may see them. */
export function withoutIdentity<T extends Record<string, unknown>>(row: T, caller: Caller): T {
  if (seesLearnerIdentity(caller)) return row;
  const out: Record<string, unknown> = { ...row };
  for (const c of LEARNER_IDENTITY_COLUMNS) delete out[c];
  return out as T;
}

const IDENTITY = new Set<string>(LEARNER_IDENTITY_COLUMNS);

/**
 * A row from elsewhere (the classroom server's reports) without identity at any depth, unless the caller
 * may see it: the classroom nests the learner under `student` and names it in its own words.
 */
export function withoutIdentityDeep(value: unknown, caller: Caller, depth = 0): unknown {
  if (seesLearnerIdentity(caller) || depth > 8) return value;
  if (Array.isArray(value)) return value.map((v) => withoutIdentityDeep(v, caller, depth + 1));
  if (!value || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) if (!IDENTITY.has(k)) out[k] = withoutIdentityDeep(v, caller, depth + 1);
  return out;
}
