import type { RequestHandler } from 'express';
import type { Knex } from '@lms/db';
import { httpError, type ScopeResolver, type ScopeRule } from '@lms/shared';
import { appDeps } from './context';
import type { Caller, Scope, ScopeName } from './types';

export type { Scope, ScopeName } from './types';

/**
 * Which rows a route's caller may touch. Every central route names one rule next to its gate:
 *
 *   route('GET', '/level/:levelid', perms('view_level'), scope.curriculaOfCaller, { params }, getLevel)
 *
 * and the app refuses to start on a route without one. The rule is resolved once per request, after
 * the gate and the input checks, from the caller and the database, and the handler receives the result
 * as `ctx.scope` (on curriculaOfCaller routes the content ids the request names are checked then too).
 *
 * Who is narrowed (contract: staff tokens carry `schools`/`countries` id lists): a staff account with
 * neither list, the API key and the sync key are whole-system callers; a staff account with a list sees
 * the schools of those ids / of those countries (both lists: schools meeting both); a school user sees
 * its own school; any other caller (a token of another type, nobody) sees nothing.
 */

const rule = (name: ScopeName, doc: string): ScopeRule & { scope: ScopeName } => Object.freeze({ scope: name, doc });

export const scope = Object.freeze({
  /**
   * No narrowing, by decision: rows shared by the whole organisation (subjects, tags, the question bank,
   * roles, public files), whole-system callers only, or nothing school-bound at all.
   */
  global: rule('global', 'not narrowed: shared by every school and country'),
  /**
   * Rows of a school (learners, teachers, classes, logs, reports,
   * contributions, feedback, content downloads): the caller's schools.
   */
  schoolsOfCaller: rule(
    'schoolsOfCaller',
    "the caller's schools: a school user its own, narrowed staff the schools of their schools/countries claims",
  ),
  /**
   * Country rows: narrowed staff their `countries` claim (or the
   * countries of their `schools`), a school user its school's country.
   */
  countriesOfCaller: rule(
    'countriesOfCaller',
    "the caller's countries: the countries claim, else the countries of the caller's schools",
  ),
  /**
   * Curriculum content (curricula, grades, levels, lessons, lesson items, question links, assessments, a
   * curriculum's media list): the curricula offered (curriculumcountry) in the caller's countries.
   */
  curriculaOfCaller: rule(
    'curriculaOfCaller',
    "the curricula offered in the caller's countries, and everything below them",
  ),
  /** The account the request proves (a token) or names (sign-in, reset): the handler acts on that account only. */
  ownAccount: rule('ownAccount', "the caller's own account only"),
  /**
   * Staff accounts: a narrowed staff caller sees and manages only the accounts whose own narrowing lies
   * within its own (see staffWithin), and gives an account it creates or edits only such a narrowing; the
   * account named in the path (or a body's `lmsuserid`) and the body's `schoolids`/`countryids` are
   * checked before the handler runs. An unnarrowed caller manages every account.
   */
  staffOfCaller: rule('staffOfCaller', "staff accounts narrowed within the caller's own schools/countries"),
  /**
   * Changes that reach the whole organisation (roles and their permissions, which accounts of every
   * school and country hold): only a caller that nothing narrows. A narrowed staff caller holding the
   * permission would otherwise widen what broader accounts may do; it is refused 403 before the handler.
   */
  wholeOrganisation: rule(
    'wholeOrganisation',
    'the whole organisation: callers that nothing narrows only; a narrowed caller is refused 403',
  ),
});

export const SCOPE_NAMES = Object.keys(scope) as ScopeName[];


const ids = (v: unknown): string[] | null => {
  const list = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
  return list.length ? list : null;
};

const EVERYTHING = (name: ScopeName, account: string | null = null): Scope =>
  Object.freeze({
    rule: name,
    all: true,
    schoolids: [],
    schoolnames: [],
    countryids: [],
    curriculumids: [],
    account,
    accountids: [],
    wholecountries: [],
  });
const NOTHING = (name: ScopeName, account: string | null = null): Scope =>
  Object.freeze({
    rule: name,
    all: false,
    schoolids: [],
    schoolnames: [],
    countryids: [],
    curriculumids: [],
    account,
    accountids: [],
    wholecountries: [],
  });

/** The caller's narrowing claims; null when the caller is a whole-system caller. */
function claimsOf(
  caller: Caller,
): { schoolids: string[] | null; countryids: string[] | null; schoolname: string | null } | null | 'none' {
  if (caller.kind === 'staff') {
    const schoolids = ids(caller.claims.schools);
    const countryids = ids(caller.claims.countries);
    return schoolids || countryids ? { schoolids, countryids, schoolname: null } : null;
  }
  if (caller.kind === 'school') {
    const name = caller.claims.schoolname;
    return typeof name === 'string' && name ? { schoolids: null, countryids: null, schoolname: name } : 'none';
  }
  if (caller.kind === 'apikey' || caller.kind === 'synckey') return null;
  return 'none';
}

function accountOf(caller: Caller): string | null {
  if (caller.kind === 'staff') return caller.lmsuserid;
  if (caller.kind === 'school') return caller.schooluserid;
  if (caller.kind === 'token') return caller.sub;
  if (caller.kind === 'box' || caller.kind === 'enrolcode') return caller.boxid;
  return null;
}

/** Resolves a rule for a caller (one or two small queries for a narrowed caller, none otherwise). */
export async function resolveScope(db: Knex, name: ScopeName, caller: Caller): Promise<Scope> {
  if (name === 'global') return EVERYTHING(name);
  if (name === 'ownAccount') return NOTHING(name, accountOf(caller));
  const claims = claimsOf(caller);
  if (claims === null) return EVERYTHING(name);
  if (name === 'wholeOrganisation') throw httpError(403, 'Forbidden resource');
  if (claims === 'none') return NOTHING(name);
  // Staff accounts are managed by staff only: a school user is admitted none.
  if (name === 'staffOfCaller' && claims.schoolname !== null) return NOTHING(name);
  const q = db('schools').select('schoolid', 'schoolname', 'countryid');
  if (claims.schoolids) q.whereIn('schoolid', claims.schoolids);
  if (claims.countryids) q.whereIn('countryid', claims.countryids);
  if (claims.schoolname !== null) q.where('schoolname', claims.schoolname);
  const schools = (await q) as Array<{ schoolid: string; schoolname: string; countryid: string | null }>;
  const countryids = claims.countryids && !claims.schoolids
    ? claims.countryids
    : [...new Set(schools.map((s) => s.countryid).filter((c): c is string => !!c))];
  let curriculumids: string[] = [];
  if (name === 'curriculaOfCaller' && countryids.length) {
    const rows = (await db('curriculumcountry').whereIn('countryid', countryids).distinct('curriculumid')) as Array<{
      curriculumid: string;
    }>;
    curriculumids = rows.map((r) => r.curriculumid);
  }
  const resolved: Scope = {
    rule: name,
    all: false,
    schoolids: schools.map((s) => s.schoolid),
    schoolnames: schools.map((s) => s.schoolname),
    countryids,
    curriculumids,
    account: null,
    accountids: [],
    wholecountries: claims.countryids && !claims.schoolids ? claims.countryids : [],
  };
  if (name === 'staffOfCaller') {
    const accounts = (await db('lmsusers').select('lmsuserid', 'schools', 'countries')) as Array<{
      lmsuserid: string;
      schools: unknown;
      countries: unknown;
    }>;
    return Object.freeze({
      ...resolved,
      accountids: accounts
        .filter((a) => staffWithin(resolved, { schools: a.schools, countries: a.countries }))
        .map((a) => a.lmsuserid),
    });
  }
  return Object.freeze(resolved);
}

/** A JSON id list as stored (parsed already, or text) or sent. */
const idList = (v: unknown): string[] => {
  let list = v;
  if (typeof v === 'string') {
    try { list = JSON.parse(v); } catch { list = []; }
  }
  return ids(list) ?? [];
};

/**
 * Whether a staff account's narrowing lies within a narrowed caller's: the account is narrowed (an
 * account with neither list sees everything, so it is broader than any narrowed caller), each school
 * of its `schools` list is one of the caller's, and, with a `countries` list alone (which admits every
 * school of those countries, also ones made later), each of those countries is held whole by the
 * caller (the caller's own `countries` list, without a `schools` list).
 */
export function staffWithin(
  s: Pick<Scope, 'all' | 'schoolids' | 'wholecountries'>,
  account: { schools: unknown; countries: unknown },
): boolean {
  if (s.all) return true;
  const schools = idList(account.schools);
  const countries = idList(account.countries);
  if (schools.length) return schools.every((id) => s.schoolids.includes(id));
  return countries.length > 0 && countries.every((id) => s.wholecountries.includes(id));
}

/**
 * The staffOfCaller checks of a narrowed caller's request: the account named in the path (or by a body's
 * `lmsuserid`) must be one it manages ('Invalid user id', as for an account that does not exist), and the
 * narrowing a body gives an account (its `schoolids`/`countryids`; on an edit, a list not sent stays as
 * stored) must lie within the caller's own.
 */
async function checkStaff(db: Knex, s: Scope, params: unknown, body: unknown): Promise<void> {
  if (s.all) return;
  const p = (params ?? {}) as Record<string, unknown>;
  const b = (body && typeof body === 'object' && !Array.isArray(body) ? body : {}) as Record<string, unknown>;
  const named =
    typeof p.lmsuserid === 'string' ? p.lmsuserid : typeof b.lmsuserid === 'string' ? b.lmsuserid : undefined;
  let stored: { schools: unknown; countries: unknown } | undefined;
  if (named !== undefined) {
    stored = (await db('lmsusers').where({ lmsuserid: named }).first('schools', 'countries')) as typeof stored;
    if (stored && !s.accountids.includes(named)) throw httpError(400, 'Invalid user id');
  }
  if (!('schoolids' in b) && !('countryids' in b)) {
    if (named === undefined && body !== undefined && 'lmsusername' in b)
      throw httpError(400, 'The user must have at least 1 school or country');
    return;
  }
  const wanted = {
    schools: 'schoolids' in b ? b.schoolids : stored?.schools,
    countries: 'countryids' in b ? b.countryids : stored?.countries,
  };
  if (staffWithin(s, wanted)) return;
  const schools = idList(wanted.schools);
  if (schools.length) throw httpError(400, 'Invalid school id');
  if (idList(wanted.countries).length) throw httpError(400, 'Invalid country id');
  throw httpError(400, 'The user must have at least 1 school or country');
}

/** Grades, levels and lessons below some curricula, as sub-queries of ids (soft-deleted rows included). */
export const gradesUnder = (db: Knex, curricula: string[]) =>
  db('grades').whereIn('curriculumid', curricula).select('gradeid');
export const levelsUnder = (db: Knex, curricula: string[]) =>
  db('levels').whereIn('gradeid', gradesUnder(db, curricula)).select('levelid');
export const lessonsUnder = (db: Knex, curricula: string[]) =>
  db('lessons').whereIn('levelid', levelsUnder(db, curricula)).select('lessonid');

/**
 * Every id of curriculum content a request may name, with the query that finds the curriculum above
 * it and the message the area answers for an unknown id. On a curriculaOfCaller route, each of these
 * named in the path or at the top of the body is checked before the handler runs: one that exists
 * under a curriculum outside the caller's is refused as if it did not exist (an unknown id is left to
 * the handler, which answers as it always has).
 */
type CurriculumOf = (db: Knex, id: string) => Knex.QueryBuilder;
const lessonChain = (db: Knex, table: string, idcol: string, id: string) =>
  db(`${table} as x`)
    .join('lessons as ls', 'ls.lessonid', 'x.lessonid')
    .join('levels as lv', 'lv.levelid', 'ls.levelid')
    .join('grades as g', 'g.gradeid', 'lv.gradeid')
    .where(`x.${idcol}`, id)
    .first('g.curriculumid');
const questionChain = (db: Knex, table: string, idcol: string, parent: string, parentcol: string, id: string) =>
  db(`${table} as q`)
    .join(`${parent} as x`, `x.${parentcol}`, `q.${parentcol}`)
    .join('lessons as ls', 'ls.lessonid', 'x.lessonid')
    .join('levels as lv', 'lv.levelid', 'ls.levelid')
    .join('grades as g', 'g.gradeid', 'lv.gradeid')
    .where(`q.${idcol}`, id)
    .first('g.curriculumid');
export const CONTENT_IDS: Record<string, { curriculumOf: CurriculumOf; message: string }> = {
  curriculumid: {
    curriculumOf: (db, id) => db('curriculums').where({ curriculumid: id }).first('curriculumid'),
    message: 'Invalid Curriculum id',
  },
  gradeid: {
    curriculumOf: (db, id) => db('grades').where({ gradeid: id }).first('curriculumid'),
    message: 'Invalid Grade id',
  },
  levelid: {
    curriculumOf: (db, id) =>
      db('levels as lv').join('grades as g', 'g.gradeid', 'lv.gradeid').where('lv.levelid', id).first('g.curriculumid'),
    message: 'Invalid Level id',
  },
  lessonid: {
    curriculumOf: (db, id) =>
      db('lessons as ls')
        .join('levels as lv', 'lv.levelid', 'ls.levelid')
        .join('grades as g', 'g.gradeid', 'lv.gradeid')
        .where('ls.lessonid', id)
        .first('g.curriculumid'),
    message: 'Invalid Lesson id',
  },
  lessonlearningid: {
    curriculumOf: (db, id) => lessonChain(db, 'lessonlearnings', 'lessonlearningid', id),
    message: 'Invalid lesson learning id',
  },
  lessonplanid: {
    curriculumOf: (db, id) => lessonChain(db, 'lessonplans', 'lessonplanid', id),
    message: 'Invalid lesson plan id',
  },
  lessonpracticeid: {
    curriculumOf: (db, id) => lessonChain(db, 'lessonpractices', 'lessonpracticeid', id),
    message: 'Invalid lesson practice id',
  },
  lessonquizid: {
    curriculumOf: (db, id) => lessonChain(db, 'lessonquizzes', 'lessonquizid', id),
    message: 'Invalid lesson quiz id',
  },
  lessonpracticequestionid: {
    curriculumOf: (db, id) =>
      questionChain(
        db,
        'lessonpracticequestions',
        'lessonpracticequestionid',
        'lessonpractices',
        'lessonpracticeid',
        id,
      ),
    message: 'Invalid Lesson practice question id',
  },
  lessonquizquestionid: {
    curriculumOf: (db, id) =>
      questionChain(db, 'lessonquizquestions', 'lessonquizquestionid', 'lessonquizzes', 'lessonquizid', id),
    message: 'Invalid Lesson quiz question id',
  },
  levelquizquestionid: {
    curriculumOf: (db, id) =>
      db('levelquizquestions as q')
        .join('levels as lv', 'lv.levelid', 'q.levelid')
        .join('grades as g', 'g.gradeid', 'lv.gradeid')
        .where('q.levelquizquestionid', id)
        .first('g.curriculumid'),
    message: 'Invalid Level quiz question id',
  },
  curriculumbaselineid: {
    curriculumOf: (db, id) => db('curriculumbaseline').where({ curriculumbaselineid: id }).first('curriculumid'),
    message: 'Invalid curriculum Baseline',
  },
  baselinequestionid: {
    curriculumOf: (db, id) =>
      db('baselinequestion as q')
        .join('curriculumbaseline as b', 'b.curriculumbaselineid', 'q.curriculumbaselineid')
        .where('q.baselinequestionid', id)
        .first('b.curriculumid'),
    message: 'Invalid BaselineQuestion ID',
  },
};

/** Refuses a request naming curriculum content outside a narrowed curriculaOfCaller scope (see CONTENT_IDS). */
async function checkContentIds(db: Knex, s: Scope, parts: unknown[]): Promise<void> {
  if (s.all) return;
  for (const part of parts) {
    if (!part || typeof part !== 'object' || Array.isArray(part)) continue;
    for (const [key, value] of Object.entries(part as Record<string, unknown>)) {
      // Own keys only: a body key such as `toString` or `__proto__` names nothing of CONTENT_IDS.
      const known = Object.hasOwn(CONTENT_IDS, key) ? CONTENT_IDS[key] : undefined;
      if (!known || typeof value !== 'string' || !value) continue;
      const row = (await known.curriculumOf(db, value)) as { curriculumid: string | null } | undefined;
      if (row && !(row.curriculumid && s.curriculumids.includes(row.curriculumid))) throw httpError(400, known.message);
    }
  }
}

/** The curricula whose content uses a shared question or media document (through any lesson item or assessment). */
async function curriculaUsing(db: Knex, row: { questionid: string } | { documentid: string }): Promise<string[]> {
  const viaLesson = (table: string, where: (q: Knex.QueryBuilder) => void) => {
    const q = db(`${table} as x`).join('lessons as ls', 'ls.lessonid', 'x.lessonid')
      .join('levels as lv', 'lv.levelid', 'ls.levelid').join('grades as g', 'g.gradeid', 'lv.gradeid')
      .distinct('g.curriculumid as curriculumid');
    where(q);
    return q;
  };
  let queries: Knex.QueryBuilder[];
  if ('documentid' in row) {
    const documentid = row.documentid;
    queries = ['lessonlearnings', 'lessonplans'].map((t) => viaLesson(t, (q) => q.where('x.documentid', documentid)));
  } else {
    const id = row.questionid;
    queries = [
      viaLesson('lessonpractices', (q) =>
        q.join('lessonpracticequestions as pq', 'pq.lessonpracticeid', 'x.lessonpracticeid').where('pq.questionid', id),
      ),
      viaLesson('lessonquizzes', (q) =>
        q.join('lessonquizquestions as qq', 'qq.lessonquizid', 'x.lessonquizid').where('qq.questionid', id),
      ),
      db('levelquizquestions as q')
        .join('levels as lv', 'lv.levelid', 'q.levelid')
        .join('grades as g', 'g.gradeid', 'lv.gradeid')
        .where('q.questionid', id)
        .distinct('g.curriculumid as curriculumid'),
      db('baselinequestion as q')
        .join('curriculumbaseline as b', 'b.curriculumbaselineid', 'q.curriculumbaselineid')
        .where('q.questionid', id)
        .distinct('b.curriculumid as curriculumid'),
    ];
  }
  const found = new Set<string>();
  for (const q of queries) {
    for (const r of (await q) as Array<{ curriculumid: string | null }>) if (r.curriculumid) found.add(r.curriculumid);
  }
  return [...found];
}

/**
 * Questions and media documents are shared by every country (scope.global), but removing one takes it out
 * of every lesson that uses it: a narrowed caller removes or deactivates only one that no curriculum outside
 * its own (scope.curriculaOfCaller) uses. An unnarrowed caller removes any.
 */
export async function requireUsedWithin(
  db: Knex,
  caller: Caller,
  row: { questionid: string } | { documentid: string },
): Promise<void> {
  const s = await resolveScope(db, 'curriculaOfCaller', caller);
  if (s.all) return;
  const outside = (await curriculaUsing(db, row)).filter((c) => !s.curriculumids.includes(c));
  if (outside.length) {
    const what = 'documentid' in row ? 'document' : 'question';
    const who = 'only an account that nothing narrows may remove it';
    throw httpError(400, `This ${what} is used by curricula outside your countries: ${who}`);
  }
}

/** The app's scope resolver: each rule becomes one middleware that puts the resolved scope in `res.locals.scope`. */
export const centralScopes: { resolve: ScopeResolver; names: readonly string[] } = {
  names: SCOPE_NAMES,
  resolve: (r: ScopeRule): RequestHandler | undefined => {
    if (!(SCOPE_NAMES as string[]).includes(r.scope)) return undefined;
    const name = r.scope as ScopeName;
    return (req, res, next) => {
      const db = appDeps(req).db;
      resolveScope(db, name, res.locals.caller as Caller)
        .then(async (s) => {
          if (name === 'curriculaOfCaller') await checkContentIds(db, s, [res.locals.params, res.locals.body]);
          if (name === 'staffOfCaller') await checkStaff(db, s, res.locals.params, res.locals.body);
          res.locals.scope = s;
        })
        .then(() => next(), next);
    };
  },
};

/** Which columns of the query identify a row's school or country; at least one must be given. */
export interface ScopeColumns {
  schoolid?: string;
  schoolname?: string;
  countryid?: string;
}

function needs(s: Scope, what: string): void {
  if (s.rule === 'global' || s.rule === 'ownAccount' || s.rule === 'staffOfCaller' || s.rule === 'wholeOrganisation')
    throw new Error(`A route of scope ${s.rule} narrows by ${what}: declare the rule that narrows it`);
}

/**
 * Narrows `q` to the rows of the caller's scope. Rows are placed by their school id, school name or
 * country id column (the first given). A row whose school is unknown is outside every narrowed scope.
 */
export function applyScope<Q extends Knex.QueryBuilder>(q: Q, s: Scope, cols: ScopeColumns): Q {
  needs(s, 'school or country');
  if (s.all) return q;
  if (cols.schoolid) q.whereIn(cols.schoolid, [...s.schoolids]);
  else if (cols.schoolname) q.whereIn(cols.schoolname, [...s.schoolnames]);
  else if (cols.countryid) q.whereIn(cols.countryid, [...s.countryids]);
  else throw new Error('applyScope: no column to scope by');
  return q;
}

/** Whether one school (by id or name) lies in the caller's scope. */
export function schoolInScope(s: Scope, school: { schoolid?: string | null; schoolname?: string | null }): boolean {
  needs(s, 'school');
  if (s.all) return true;
  if (school.schoolid) return s.schoolids.includes(school.schoolid);
  if (school.schoolname) return s.schoolnames.includes(school.schoolname);
  return false;
}

/** Refuses a school outside the caller's scope with the area's own invalid-id message (as if it did not exist). */
export function requireSchoolInScope(
  s: Scope,
  school: { schoolid?: string | null; schoolname?: string | null },
  message: string,
): void {
  if (!schoolInScope(s, school)) throw httpError(400, message);
}

/** The schools a narrowed scope admits, by id and by name; null when the scope admits every school. */
export function scopeSchools(s: Scope): { ids: string[]; names: string[] } | null {
  needs(s, 'school');
  return s.all ? null : { ids: [...s.schoolids], names: [...s.schoolnames] };
}

/** The curricula a scope admits (curriculaOfCaller); undefined when it admits every curriculum. */
export function scopedCurricula(s: Scope): string[] | undefined {
  if (s.rule !== 'curriculaOfCaller')
    throw new Error(`A route of scope ${s.rule} narrows by curriculum: declare scope.curriculaOfCaller`);
  return s.all ? undefined : [...s.curriculumids];
}

/** The staff accounts a staffOfCaller scope admits; undefined when it admits every account. */
export function scopedStaff(s: Scope): string[] | undefined {
  if (s.rule !== 'staffOfCaller')
    throw new Error(`A route of scope ${s.rule} narrows staff accounts: declare scope.staffOfCaller`);
  return s.all ? undefined : [...s.accountids];
}

/** Whether one curriculum lies in a curriculaOfCaller scope. */
export function curriculumInScope(s: Scope, curriculumid: string | null | undefined): boolean {
  const list = scopedCurricula(s);
  return list === undefined || (!!curriculumid && list.includes(curriculumid));
}

/**
 * Of `countryids`, the live countries a caller may name (all live
 * ones for an unnarrowed caller, or with no scope: the seed).
 */
export async function countriesInScope(
  db: Knex,
  s: Scope | undefined,
  countryids: readonly string[],
): Promise<string[]> {
  if (!countryids.length) return [];
  const q = db('countries').whereIn('countryid', [...countryids]).where('isdeleted', false).select('countryid');
  const rows = (await (s ? applyScope(q, s, { countryid: 'countryid' }) : q)) as Array<{ countryid: string }>;
  return rows.map((r) => r.countryid);
}

/** The curricula a store narrows to: a list of ids, or undefined for every curriculum (see scopedCurricula). */
export type Curricula = string[] | undefined;
