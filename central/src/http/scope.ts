import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import type { Caller } from './types';

/**
 * What part of the organisation a caller may see (contract: staff tokens carry `schools`/`countries`
 * id lists that narrow what they read and change). A staff account with neither list sees everything;
 * with a list, only schools of those ids / of those countries (both: schools meeting both). A central
 * school user (a teacher signed in on central) sees only its own school. The API key and the sync key
 * are whole-system callers.
 */
export type Scope =
  | { all: true }
  | { all: false; schoolids: string[] | null; countryids: string[] | null; schoolname: string | null };

const ids = (v: unknown): string[] | null => {
  const list = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  return list.length ? list : null;
};

export function scopeOf(caller: Caller): Scope {
  if (caller.kind === 'staff') {
    const schoolids = ids(caller.claims.schools);
    const countryids = ids(caller.claims.countries);
    return schoolids || countryids ? { all: false, schoolids, countryids, schoolname: null } : { all: true };
  }
  if (caller.kind === 'school') {
    const name = caller.claims.schoolname;
    // A school user without a school sees nothing (an empty list of schools).
    return typeof name === 'string' && name
      ? { all: false, schoolids: null, countryids: null, schoolname: name }
      : { all: false, schoolids: [], countryids: null, schoolname: null };
  }
  if (caller.kind === 'apikey' || caller.kind === 'synckey') return { all: true };
  return { all: false, schoolids: [], countryids: null, schoolname: null };
}

/** Which columns of the query identify a row's school or country; at least one must be given. */
export interface ScopeColumns {
  schoolid?: string;
  schoolname?: string;
  countryid?: string;
}

/** The schools (ids) a scope admits, as a sub-query. */
function schoolsIn(db: Knex, scope: Exclude<Scope, { all: true }>, select: 'schoolid' | 'schoolname' | 'countryid') {
  const q = db('schools').select(select);
  if (scope.schoolids) q.whereIn('schoolid', scope.schoolids);
  if (scope.countryids) q.whereIn('countryid', scope.countryids);
  if (scope.schoolname !== null) q.where('schoolname', scope.schoolname);
  return q;
}

/**
 * Narrows `q` to the rows of the caller's scope. Rows are placed by their school id, school name or
 * country id column (the first given that the scope can decide on). A row whose school is unknown is
 * outside every restricted scope.
 */
export function applyScope<Q extends Knex.QueryBuilder>(db: Knex, q: Q, scope: Scope, cols: ScopeColumns): Q {
  if (scope.all) return q;
  if (cols.schoolid) q.whereIn(cols.schoolid, schoolsIn(db, scope, 'schoolid'));
  else if (cols.schoolname) q.whereIn(cols.schoolname, schoolsIn(db, scope, 'schoolname'));
  else if (cols.countryid) {
    // Country-level rows (a country itself): a country-restricted caller sees its countries, a
    // school-restricted one the countries of its schools.
    if (scope.countryids && !scope.schoolids && scope.schoolname === null) q.whereIn(cols.countryid, scope.countryids);
    else q.whereIn(cols.countryid, schoolsIn(db, scope, 'countryid'));
  } else throw new Error('applyScope: no column to scope by');
  return q;
}

/** Whether one school (by id or name) lies in the caller's scope. */
export async function schoolInScope(db: Knex, scope: Scope, school: { schoolid?: string | null; schoolname?: string | null }): Promise<boolean> {
  if (scope.all) return true;
  const q = schoolsIn(db, scope, 'schoolid');
  if (school.schoolid) q.where('schoolid', school.schoolid);
  else if (school.schoolname) q.where('schoolname', school.schoolname);
  else return false;
  return !!(await q.first());
}

/** Refuses a school outside the caller's scope with the area's own invalid-id message (as if it did not exist). */
export async function requireSchoolInScope(db: Knex, scope: Scope, school: { schoolid?: string | null; schoolname?: string | null }, message: string): Promise<void> {
  if (!(await schoolInScope(db, scope, school))) throw httpError(400, message);
}


/** The schools a restricted scope admits, by id and by name (one query); null when the scope admits every school. */
export async function scopeSchools(db: Knex, scope: Scope): Promise<{ ids: string[]; names: string[] } | null> {
  if (scope.all) return null;
  const rows = (await schoolsIn(db, scope, 'schoolid').select('schoolname')) as Array<{ schoolid: string; schoolname: string }>;
  return { ids: rows.map((r) => r.schoolid), names: rows.map((r) => r.schoolname) };
}

/**
 * The curricula a staff caller's `countries`/`schools` claims admit, as a sub-query of curriculum ids:
 * those offered (curriculumcountry) in one of the caller's countries, or in a country of one of its
 * schools. Undefined when the caller sees every curriculum: curricula are shared content, so only a
 * staff account's own claims narrow them (the API key, the sync key and school users are not narrowed).
 */
export function scopedCurriculumIds(db: Knex, caller: Caller): Knex.QueryBuilder | undefined {
  if (caller.kind !== 'staff') return undefined;
  const scope = scopeOf(caller);
  if (scope.all) return undefined;
  return applyScope(db, db('curriculumcountry').select('curriculumid'), scope, { countryid: 'countryid' });
}

/** Of `countryids`, the live countries a caller may name (all of them for an unrestricted caller). */
export async function countriesInScope(db: Knex, caller: Caller, countryids: readonly string[]): Promise<string[]> {
  if (!countryids.length) return [];
  const q = db('countries').whereIn('countryid', [...countryids]).where('isdeleted', false).select('countryid');
  const scope = caller.kind === 'staff' ? scopeOf(caller) : ({ all: true } as const);
  const rows = (await applyScope(db, q, scope, { countryid: 'countryid' })) as Array<{ countryid: string }>;
  return rows.map((r) => r.countryid);
}
