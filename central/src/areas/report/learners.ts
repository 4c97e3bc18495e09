import type { Knex } from '@lms/db';
import { filterMap, pageEnvelope, pageOf, type MultiPaging } from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';
import { LEARNER_IDENTITY_COLUMNS } from '../../http/privacy';
import { bool, dateOf, notTeacherAccount, num, numOrNull } from './values';

// The learner and class tables (contract §16.2). Each report is a fixed number of set-based queries
// whatever the number of learners, lessons or attempts: the "best attempt" of a lesson or level (the
// earliest passing attempt, else the latest failing one) and the "last completed" quiz are ranked in
// SQL with row_number(), which SQLite and PostgreSQL both run, and only the rows of the page come back.
// Every query that returns rows is also the source of the matching CSV download (`query` builders are
// returned unexecuted for streaming).

export type Filters = Map<string, string[]>;

/** What every report reads: the database, the caller's scope, whether it may see learner identities. */
export interface ReportCtx {
  db: Knex;
  scope: Scope;
  identity: boolean;
}

type Row = Record<string, unknown>;

/** The empty page: no learner chosen yet (decision 25: there is no fixed test learner to fall back on). */
export const emptyPage = (body: MultiPaging, extra: Row = {}) => ({ ...pageEnvelope([], 0, body), ...extra });

// ---- learners ---------------------------------------------------------------------------------------

/** Columns joined to a learner row, prefixed so that they never collide with the learner's own. */
const LEARNER_EXTRAS = {
  x_schoolusername: 'u.schoolusername',
  x_schoolid: 'sc.schoolid',
  x_schoolname: 'sc.schoolname',
  x_countryid: 'sc.countryid',
  x_countryname: 'co.countryname',
  x_standardname: 'st.standardname',
  x_curriculumname: 'cu.curriculumname',
};

/**
 * Learners of the reports: not deleted, not a teacher's own account, with their account, school (by the
 * name the learner carries), country, class and curriculum; only those of the caller's scope (a school
 * outside it answers nothing, whatever the filter names).
 */
export function learnerBase(c: ReportCtx): Knex.QueryBuilder {
  const q = c.db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .leftJoin('schools as sc', 'sc.schoolname', 's.schoolname')
    .leftJoin('countries as co', 'co.countryid', 'sc.countryid')
    .leftJoin('standards as st', 'st.standardid', 's.standard')
    .leftJoin('curriculums as cu', 'cu.curriculumid', 's.curriculumid')
    .where('s.isdeleted', false);
  notTeacherAccount(q);
  return applyScope(q, c.scope, { schoolid: 'sc.schoolid' });
}

const learnerColumns = (q: Knex.QueryBuilder) => q.select('s.*', LEARNER_EXTRAS);

/** The learner's own columns (its identity only for a caller who may see it) and what was joined to it. */
function splitLearner(row: Row, identity: boolean): { learner: Row; x: Row } {
  const learner: Row = {};
  const x: Row = {};
  for (const [k, v] of Object.entries(row)) {
    if (k.startsWith('x_')) x[k.slice(2)] = v;
    else if (!k.startsWith('bp_')) learner[k] = v;
  }
  if (!identity) for (const k of LEARNER_IDENTITY_COLUMNS) delete learner[k];
  return { learner, x };
}

const classOf = (x: Row) => (x.standardname == null ? null : { standardname: x.standardname });
const schoolOf = (x: Row) =>
  x.schoolid == null ? null : { schoolname: x.schoolname, countries: { countryname: x.countryname ?? null } };
const fullSchoolOf = (x: Row) =>
  x.schoolid == null
    ? null
    : {
        schoolid: x.schoolid,
        schoolname: x.schoolname,
        countryid: x.countryid ?? null,
        countries: { countryname: x.countryname ?? null },
      };

/** The learner a one-learner report is about: the one named, else the first of the class named; none otherwise. */
async function oneLearner(c: ReportCtx, f: Filters): Promise<Row | undefined> {
  const ids = f.get('studentid');
  const classes = f.get('standard');
  if (!ids && !classes) return undefined;
  const q = learnerColumns(learnerBase(c));
  if (ids) q.whereIn('s.studentid', ids);
  else q.whereIn('s.standard', classes!);
  return (await q.orderBy([{ column: 's.created_at' }, { column: 's.studentid' }]).first()) as Row | undefined;
}

/** The learner object nested in the per-lesson and per-level rows: no identity, its account, class and school. */
function nestedLearner(row: Row, identity: boolean): Row {
  const { learner, x } = splitLearner(row, identity);
  return { ...learner, schooluser: { schoolusername: x.schoolusername }, class: classOf(x), school: schoolOf(x) };
}

// ---- best attempts -----------------------------------------------------------------------------------

export type Unit = 'lesson' | 'level';

/**
 * The best attempt of each learner at each lesson (a quiz of the lesson) or level (its level quiz),
 * restricted by `restrict` (learners, units) before ranking: passing attempts first, the earliest of
 * them; else the latest failing one. Columns: studentid, unitid, the attempt's fields, totalquestions
 * (the questions of that quiz), rn = 1 only.
 */
function bestAttempts(db: Knex, unit: Unit, restrict: (q: Knex.QueryBuilder) => void): Knex.QueryBuilder {
  // Ranked over studentquizresults (one row per learner and quiz, the quiz's best attempt kept by the
  // database): the best of a lesson is the best of its quizzes' bests. The winners' other columns are read by
  // primary key afterwards, one row per learner and unit.
  const ranked = db('studentquizresults as p').select('p.studentid', { studentprogressid: 'p.bestprogressid' });
  const unitColumn = unit === 'lesson' ? 'lq.lessonid' : 'lvq.levelid';
  if (unit === 'lesson') ranked.join('lessonquizzes as lq', 'lq.lessonquizid', 'p.studentprogressreferenceid');
  else ranked.join('levels as lvq', 'lvq.levelid', 'p.studentprogressreferenceid');
  ranked.select(
    `${unitColumn} as unitid`,
    db.raw(
      `row_number() over (partition by p.studentid, ${unitColumn} order by p.bestispass desc, ` +
        'case when p.bestispass then p.beststarttime end asc, p.beststarttime desc, p.bestprogressid) as rn',
    ),
  );
  restrict(ranked);
  // Shown only where the learner has a progress row for the unit (the original's rule).
  const progress = PROGRESS_TABLE[unit];
  ranked.whereExists(
    db(`${progress.table} as pr`)
      .whereRaw(`pr.studentid = p.studentid and pr.${progress.column} = ${unitColumn}`)
      .select(db.raw('1')),
  );
  const questions =
    unit === 'lesson'
      ? db('lessonquizquestions as qq').whereRaw('qq.lessonquizid = w.studentprogressreferenceid').count('*')
      : db('levelquizquestions as qq').whereRaw('qq.levelid = w.studentprogressreferenceid').count('*');
  return db
    .from(ranked.as('b0'))
    .join('studentprogress as w', 'w.studentprogressid', 'b0.studentprogressid')
    .where('b0.rn', 1)
    .select(
      'b0.studentid',
      'b0.unitid',
      'w.studentprogressreferenceid',
      'w.scores',
      'w.resultpercentage',
      'w.marks',
      'w.ispass',
      'w.starttime',
      { totalquestions: questions },
    );
}

/** The best attempt's columns on the outer query, prefixed `bp_`. */
const bestColumns = {
  bp_studentprogressreferenceid: 'b.studentprogressreferenceid',
  bp_scores: 'b.scores',
  bp_resultpercentage: 'b.resultpercentage',
  bp_marks: 'b.marks',
  bp_ispass: 'b.ispass',
  bp_starttime: 'b.starttime',
  bp_totalquestions: 'b.totalquestions',
};

/** The best attempt of a row, when there is one and the learner has a progress row for the unit. */
function bestOf(row: Row): Row | undefined {
  if (row.bp_studentprogressreferenceid == null || !num(row.x_progresses)) return undefined;
  return {
    studentprogressreferenceid: row.bp_studentprogressreferenceid,
    scores: numOrNull(row.bp_scores),
    resultpercentage: numOrNull(row.bp_resultpercentage),
    marks: numOrNull(row.bp_marks),
    ispass: bool(row.bp_ispass),
    starttime: row.bp_starttime ?? null,
    totalquestions: num(row.bp_totalquestions),
  };
}

/** Newest attempt first; rows without one last, in curriculum order. */
function byAttemptThenOrder(q: Knex.QueryBuilder, unit: Unit): Knex.QueryBuilder {
  q.orderByRaw('case when b.starttime is null then 1 else 0 end')
    .orderBy('b.starttime', 'desc')
    .orderBy('g.gradeorder')
    .orderBy('lv.levelorder');
  if (unit === 'lesson') q.orderBy('l.lessonorder').orderBy('l.lessonid');
  else q.orderBy('lv.levelid');
  return q;
}

const PROGRESS_TABLE: Record<Unit, { table: string; column: string }> = {
  lesson: { table: 'studentlessonsprogress', column: 'lessonid' },
  level: { table: 'studentlevelsprogress', column: 'levelid' },
};

// ---- POST /report/studentprogress and /report/studentlevelquiz ----------------------------------------

export interface OneLearnerReport {
  learner: Row | undefined;
  /** The rows' query (unexecuted), when there is a learner. */
  query?: Knex.QueryBuilder;
  /** Builds a response row from a row of `query`. */
  shape: (row: Row) => Row;
}

/**
 * Every active lesson (or level) of the learner's curriculum (or the one filtered), with the learner's
 * best attempt at it. Two queries: the learner, then the rows.
 */
export async function oneLearnerReport(c: ReportCtx, body: MultiPaging, unit: Unit): Promise<OneLearnerReport> {
  const f = filterMap(body);
  const learner = await oneLearner(c, f);
  const shape = (row: Row) => shapeUnitRow(row, unit, learner!, c.identity);
  if (!learner) return { learner, shape };
  const { db } = c;
  const curricula = f.get('curriculumid') ?? [learner.curriculumid as string];
  const studentid = learner.studentid as string;
  const q =
    unit === 'lesson'
      ? db('lessons as l')
          .join('levels as lv', 'lv.levelid', 'l.levelid')
          .where('l.lessonstatus', true)
          .where('l.isdeleted', false)
      : db('levels as lv').where('lv.levelstatus', true).where('lv.isdeleted', false);
  q.join('grades as g', 'g.gradeid', 'lv.gradeid')
    .join('curriculums as c', 'c.curriculumid', 'g.curriculumid')
    .whereIn('c.curriculumid', curricula);
  if (f.has('gradeid')) q.whereIn('g.gradeid', f.get('gradeid')!);
  if (f.has('levelid')) q.whereIn('lv.levelid', f.get('levelid')!);
  if (unit === 'lesson' && f.has('lessonid')) q.whereIn('l.lessonid', f.get('lessonid')!);
  const unitid = unit === 'lesson' ? 'l.lessonid' : 'lv.levelid';
  const progress = PROGRESS_TABLE[unit];
  q.leftJoin(bestAttempts(db, unit, (r) => r.where('p.studentid', studentid)).as('b'), 'b.unitid', unitid)
    .select(unit === 'lesson' ? 'l.*' : 'lv.*', bestColumns, {
      x_levelname: 'lv.levelname',
      x_gradename: 'g.gradename',
      x_curriculumname: 'c.curriculumname',
      x_progresses: db(`${progress.table} as sp`)
        .where('sp.studentid', studentid)
        .whereRaw(`sp.${progress.column} = ${unitid}`)
        .count('*'),
    },
  );
  return { learner, query: byAttemptThenOrder(q, unit), shape };
}

function shapeUnitRow(row: Row, unit: Unit, learner: Row, identity: boolean): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) if (!k.startsWith('x_') && !k.startsWith('bp_')) out[k] = v;
  const curriculum = { curriculumname: row.x_curriculumname };
  if (unit === 'lesson') out.level = { levelname: row.x_levelname, grade: { gradename: row.x_gradename, curriculum } };
  else out.grade = { gradename: row.x_gradename, curriculum };
  const key = unit === 'lesson' ? 'studentlessonsprogresses' : 'studentlevelsprogresses';
  const id = unit === 'lesson' ? { lessonid: row.lessonid } : { levelid: row.levelid };
  out[key] = Array.from({ length: num(row.x_progresses) }, () => ({ ...id }));
  const best = bestOf(row);
  if (best) {
    out.laststudentprogress = best;
    out.starttime = best.starttime;
  }
  out.student = nestedLearner(learner, identity);
  return out;
}

/** The JSON page of a one-learner report: every row (not paged; total = all rows). */
export async function oneLearnerPage(c: ReportCtx, body: MultiPaging, unit: Unit) {
  const r = await oneLearnerReport(c, body, unit);
  if (!r.query) return emptyPage(body);
  const rows = ((await r.query) as Row[]).map(r.shape);
  return pageEnvelope(rows, rows.length, body);
}

// ---- POST /report/studentprogress/class and /report/studentlevelquiz/class ------------------------------

export interface LearnerRows {
  /** The rows (unexecuted, not paged); absent when no learner or class was named (or nothing to show). */
  query?: Knex.QueryBuilder;
  /** The learners the rows are about, for the page's total (without the rows' joins). */
  count?: Knex.QueryBuilder;
  shape: (row: Row) => Row;
  /** Adds to a batch of rows of `query` what is read per batch of learners (at most ATTACH_BATCH rows). */
  attach?: (rows: Row[]) => Promise<void>;
}

/** Learners per attach: the batch a CSV download streams by, and the most a page is read in at once. */
export const ATTACH_BATCH = 500;

/** The lesson (or level) a class report shows: the one named, else the first of the class's curriculum. */
async function classUnit(
  c: ReportCtx,
  f: Filters,
  classes: string[],
  unit: Unit,
): Promise<{ unitid: string; info: Row | undefined } | undefined> {
  const { db } = c;
  const named = f.get(unit === 'lesson' ? 'lessonid' : 'levelid')?.[0];
  const q =
    unit === 'lesson'
      ? db('lessons as l')
          .join('levels as lv', 'lv.levelid', 'l.levelid')
          .select('l.lessonid as unitid', 'l.lessonname')
      : db('levels as lv').select('lv.levelid as unitid');
  q.join('grades as g', 'g.gradeid', 'lv.gradeid')
    .join('curriculums as c', 'c.curriculumid', 'g.curriculumid')
    .select('lv.levelname', 'g.gradename', 'c.curriculumname');
  if (named) {
    q.where(unit === 'lesson' ? 'l.lessonid' : 'lv.levelid', named);
    // A lesson is shown with its names only while it and its parents are active (the original's lookup).
    if (unit === 'lesson') activeChain(q, true);
    const info = (await q.first()) as Row | undefined;
    return { unitid: named, info };
  }
  // The first lesson (level) of the lowest grade and level of the curriculum of the class's first learner,
  // among those that have an active lesson.
  const first = learnerBase(c)
    .whereIn('s.standard', classes)
    .orderBy([{ column: 's.created_at' }, { column: 's.studentid' }])
    .limit(1)
    .select('s.curriculumid');
  activeChain(q, unit === 'lesson').where('c.curriculumid', first);
  if (unit === 'level')
    q.whereExists(
      db('lessons as l').whereRaw('l.levelid = lv.levelid').where('l.lessonstatus', true).where('l.isdeleted', false),
    );
  q.orderBy([
    { column: 'g.gradeorder' },
    { column: 'lv.levelorder' },
    ...(unit === 'lesson' ? [{ column: 'l.lessonorder' }, { column: 'l.lessonid' }] : [{ column: 'lv.levelid' }]),
  ]);
  const info = (await q.first()) as Row | undefined;
  return info ? { unitid: info.unitid as string, info } : undefined;
}

/** Active and not deleted: the curriculum, grade, level (and lesson, when joined). */
function activeChain(q: Knex.QueryBuilder, withLesson: boolean): Knex.QueryBuilder {
  q.where('c.curriculumstatus', true)
    .where('c.isdeleted', false)
    .where('g.gradestatus', true)
    .where('g.isdeleted', false)
    .where('lv.levelstatus', true)
    .where('lv.isdeleted', false);
  if (withLesson) q.where('l.lessonstatus', true).where('l.isdeleted', false);
  return q;
}

/**
 * One lesson (or level) × the learners of a class: each learner with their best attempt at it. Queries:
 * the unit (one), then the learners (count and page, or the stream).
 */
export async function classReport(c: ReportCtx, body: MultiPaging, unit: Unit): Promise<LearnerRows> {
  const f = filterMap(body);
  const classes = f.get('standard');
  const shape = (row: Row) => row;
  if (!classes) return { shape };
  const chosen = await classUnit(c, f, classes, unit);
  if (!chosen) return { shape };
  const { db } = c;
  const progress = PROGRESS_TABLE[unit];
  // The caller's scope before the ranking: only the learners the answer can show are ranked.
  const classLearners = learnerBase(c).whereIn('s.standard', classes).select('s.studentid');
  const q = learnerColumns(learnerBase(c).whereIn('s.standard', classes))
    .leftJoin(
      bestAttempts(db, unit, (r) => {
        // By the attempt's own reference, so that the ranking index is read for this unit only.
        if (unit === 'lesson')
          r.whereIn(
            'p.studentprogressreferenceid',
            db('lessonquizzes').where('lessonid', chosen.unitid).select('lessonquizid'),
          );
        else r.where('p.studentprogressreferenceid', chosen.unitid);
        r.whereIn('p.studentid', classLearners);
      }).as('b'),
      'b.studentid',
      's.studentid',
    )
    .select(bestColumns, {
      x_progresses: db(`${progress.table} as sp`)
        .whereRaw('sp.studentid = s.studentid')
        .where(`sp.${progress.column}`, chosen.unitid)
        .count('*'),
    })
    .orderBy([{ column: 'u.schoolusername' }, { column: 's.studentid' }]);
  const info = chosen.info;
  const curriculum = info ? { curriculumname: info.curriculumname } : undefined;
  const unitInfo = !info
    ? undefined
    : unit === 'lesson'
      ? {
          lessonname: info.lessonname,
          level: { levelname: info.levelname, grade: { gradename: info.gradename, curriculum } },
        }
      : { levelname: info.levelname, grade: { gradename: info.gradename, curriculum } };
  return {
    query: q,
    count: learnerBase(c).whereIn('s.standard', classes),
    shape: (row: Row) => {
      const { learner, x } = splitLearner(row, c.identity);
      const out: Row = { ...learner };
      const key = unit === 'lesson' ? 'studentlessonsprogresses' : 'studentlevelsprogresses';
      out[key] = Array.from({ length: num(row.x_progresses) }, () =>
        unit === 'lesson' ? { lessonid: chosen.unitid } : { levelid: chosen.unitid },
      );
      const best = bestOf(row);
      if (best) out.laststudentprogress = best;
      if (unitInfo) out[unit] = unitInfo;
      out.class = classOf(x);
      out.school = schoolOf(x);
      out.schooluser = { schoolusername: x.schoolusername };
      return out;
    },
  };
}

/** Count and page of learner rows (two queries; the page is not read when it lies beyond the total). */
export async function pageOfLearners(r: LearnerRows, body: MultiPaging) {
  if (!r.query || !r.count) return emptyPage(body);
  const total = num((await r.count.clone().clearSelect().clearOrder().count({ n: '*' }).first())?.n);
  const { limit, offset } = pageOf(body);
  const rows = total > offset ? ((await r.query.clone().limit(limit).offset(offset)) as Row[]) : [];
  if (r.attach) for (let i = 0; i < rows.length; i += ATTACH_BATCH) await r.attach(rows.slice(i, i + ATTACH_BATCH));
  return pageEnvelope(rows.map(r.shape), total, body);
}

export async function classPage(c: ReportCtx, body: MultiPaging, unit: Unit) {
  return pageOfLearners(await classReport(c, body, unit), body);
}

// ---- POST /report/studentlastcompletedquiz -------------------------------------------------------------

/**
 * Learners with the quiz they reached last: the highest grade, level, lesson and quiz order among their
 * lesson-quiz attempts, and their latest attempt there. Queries: count and page (or the stream).
 */
export function lastCompletedReport(c: ReportCtx, body: MultiPaging): LearnerRows {
  const f = filterMap(body);
  const shape = lastCompletedShape(c.identity);
  if (!f.has('studentid') && !f.has('standard')) return { shape };
  const { db } = c;
  const learners = learnerBase(c);
  if (f.has('studentid')) learners.whereIn('s.studentid', f.get('studentid')!);
  if (f.has('standard')) learners.whereIn('s.standard', f.get('standard')!);
  if (f.has('schoolid')) learners.whereIn('sc.schoolid', f.get('schoolid')!);
  if (f.has('schoolname')) learners.whereIn('s.schoolname', f.get('schoolname')!);
  if (f.has('countryid')) learners.whereIn('sc.countryid', f.get('countryid')!);

  const chain = (q: Knex.QueryBuilder) => {
    q.join('lessonquizzes as lq', 'lq.lessonquizid', 'p.studentprogressreferenceid')
      .join('lessons as l', 'l.lessonid', 'lq.lessonid')
      .join('levels as lv', 'lv.levelid', 'l.levelid')
      .join('grades as g', 'g.gradeid', 'lv.gradeid')
      .where('p.progresstype', 2);
    if (f.has('curriculumid')) q.whereIn('g.curriculumid', f.get('curriculumid')!);
    if (f.has('gradeid')) q.whereIn('g.gradeid', f.get('gradeid')!);
    if (f.has('levelid')) q.whereIn('lv.levelid', f.get('levelid')!);
    if (f.has('lessonid')) q.whereIn('l.lessonid', f.get('lessonid')!);
    return q;
  };
  const narrowed = ['curriculumid', 'gradeid', 'levelid', 'lessonid'].some((k) => f.has(k));
  // A content filter keeps the learners who have an attempt there, and their attempts there.
  if (narrowed) {
    learners.whereExists(
      chain(db('studentquizresults as p').whereRaw('p.studentid = s.studentid')).select(db.raw('1')),
    );
  }
  const query = learnerColumns(learners.clone())
    .orderBy([{ column: 's.created_at', order: 'desc' }, { column: 's.studentid' }]);
  return { query, count: learners, shape, attach: (rows) => attachLastCompleted(db, rows, chain) };
}

/**
 * The last completed quiz of a batch of learners (a page, or a batch of a download), ranked over their
 * studentquizresults rows: one per quiz tried, each with the quiz's last attempt, so that the ranking reads
 * the learners' quizzes and not their years of attempts, and only once the learners are chosen.
 */
type Chain = (q: Knex.QueryBuilder) => Knex.QueryBuilder;

async function attachLastCompleted(db: Knex, rows: Row[], chain: Chain): Promise<void> {
  if (!rows.length) return;
  const ranked = chain(db('studentquizresults as p'))
    .whereIn('p.studentid', rows.map((r) => r.studentid as string))
    .select(
      'p.studentid',
      { studentprogressid: 'p.lastprogressid' },
      db.raw(
        'row_number() over (partition by p.studentid order by g.gradeorder desc, lv.levelorder desc, ' +
          'l.lessonorder desc, lq.lessonquizorder desc, p.laststarttime desc, p.lastprogressid desc) as rn',
      ),
    );
  const last = (await db
    .from(ranked.as('r'))
    .join('studentprogress as w', 'w.studentprogressid', 'r.studentprogressid')
    .join('lessonquizzes as wq', 'wq.lessonquizid', 'w.studentprogressreferenceid')
    .join('lessons as wl', 'wl.lessonid', 'wq.lessonid')
    .join('levels as wv', 'wv.levelid', 'wl.levelid')
    .join('grades as wg', 'wg.gradeid', 'wv.gradeid')
    .leftJoin('curriculums as wc', 'wc.curriculumid', 'wg.curriculumid')
    .where('r.rn', 1)
    .select(
      'w.studentid',
      'w.studentprogressid',
      'w.ispass',
      'w.studentprogressreferenceid',
      'w.starttime',
      'w.endtime',
      'w.progresstype',
      'w.resultpercentage',
      'w.points',
      'w.fullpoints',
      'w.marks',
      'w.scores',
      {
        lq_lessonquizid: 'wq.lessonquizid',
        lq_lessonquizorder: 'wq.lessonquizorder',
        lq_lessonname: 'wl.lessonname',
        lq_lessonorder: 'wl.lessonorder',
      },
      {
        lq_levelname: 'wv.levelname',
        lq_levelorder: 'wv.levelorder',
        lq_gradename: 'wg.gradename',
        lq_gradeorder: 'wg.gradeorder',
        lq_curriculumname: 'wc.curriculumname',
      },
    )) as Row[];
  const byLearner = new Map(last.map((b) => [b.studentid as string, b]));
  for (const row of rows) {
    const b = byLearner.get(row.studentid as string);
    if (!b) continue;
    for (const [k, v] of Object.entries(b)) if (k !== 'studentid') row[`bp_${k}`] = v;
  }
}

export function lastCompletedShape(identity: boolean) {
  return (row: Row): Row => {
    const { learner, x } = splitLearner(row, true);
    const out: Row = {
      studentid: learner.studentid,
      ...(identity ? { studentfirstname: learner.studentfirstname } : {}),
      country: learner.country,
      standard: learner.standard,
      created_at: learner.created_at,
      curriculumid: learner.curriculumid,
      studentprogresses: [],
    };
    if (row.bp_studentprogressid != null) {
      out.laststudentprogress = {
        studentprogressid: row.bp_studentprogressid,
        studentid: learner.studentid,
        ispass: bool(row.bp_ispass),
        studentprogressreferenceid: row.bp_studentprogressreferenceid,
        starttime: row.bp_starttime ?? null,
        endtime: row.bp_endtime ?? null,
        progresstype: numOrNull(row.bp_progresstype),
        resultpercentage: numOrNull(row.bp_resultpercentage),
        points: numOrNull(row.bp_points),
        fullpoints: numOrNull(row.bp_fullpoints),
        marks: numOrNull(row.bp_marks),
        scores: numOrNull(row.bp_scores),
        lessonquiz: {
          lessonquizid: row.bp_lq_lessonquizid,
          lessonquizorder: numOrNull(row.bp_lq_lessonquizorder),
          lesson: {
            lessonname: row.bp_lq_lessonname,
            lessonorder: numOrNull(row.bp_lq_lessonorder),
            level: {
              levelname: row.bp_lq_levelname,
              levelorder: numOrNull(row.bp_lq_levelorder),
              grade: {
                gradename: row.bp_lq_gradename,
                gradeorder: numOrNull(row.bp_lq_gradeorder),
                curriculum: { curriculumname: row.bp_lq_curriculumname ?? null },
              },
            },
          },
        },
      };
    }
    out.schooluser = { schoolusername: x.schoolusername };
    out.class = classOf(x);
    out.school = fullSchoolOf(x);
    out.curriculum = x.curriculumname == null ? null : { curriculumname: x.curriculumname };
    return out;
  };
}

export async function lastCompletedPage(c: ReportCtx, body: MultiPaging) {
  return pageOfLearners(lastCompletedReport(c, body), body);
}

// ---- POST /report/student-grade-progress ---------------------------------------------------------------

/**
 * The learners of a class (paged) with their progress in one grade (the one named, else the lowest grade
 * of the curriculum of the class's first learner that has an active level and lesson). Queries: the
 * grade, count and page of learners, their progress rows.
 */
export async function gradeProgressPage(c: ReportCtx, body: MultiPaging) {
  const f = filterMap(body);
  const classes = f.get('standard');
  if (!classes) return emptyPage(body);
  const { db } = c;
  const grade = db('grades as g')
    .join('curriculums as c', 'c.curriculumid', 'g.curriculumid')
    .select('g.gradeid', 'g.gradename', 'c.curriculumname');
  if (f.has('gradeid')) grade.where('g.gradeid', f.get('gradeid')![0]);
  else {
    const first = learnerBase(c)
      .whereIn('s.standard', classes)
      .orderBy([{ column: 's.created_at' }, { column: 's.studentid' }])
      .limit(1)
      .select('s.curriculumid');
    grade
      .join('levels as lv', 'lv.gradeid', 'g.gradeid')
      .join('lessons as l', 'l.levelid', 'lv.levelid')
      .where('c.curriculumid', first)
      .orderBy([{ column: 'g.gradeorder' }, { column: 'g.gradeid' }]);
    activeChain(grade, true);
  }
  const g = (await grade.first()) as Row | undefined;
  const gradeid = (g?.gradeid as string | undefined) ?? f.get('gradeid')?.[0];
  const page = await pageOfLearners(
    {
      query: learnerColumns(learnerBase(c).whereIn('s.standard', classes)).orderBy([
        { column: 'u.schoolusername' },
        { column: 's.studentid' },
      ]),
      count: learnerBase(c).whereIn('s.standard', classes),
      shape: (r) => r,
    },
    body,
  );
  const ids = page.data.map((r) => r.studentid as string);
  const progress = new Map<string, Row[]>();
  if (gradeid && ids.length) {
    const rows = (await db('studentgradesprogress')
      .whereIn('studentid', ids)
      .where('gradeid', gradeid)
      .select('studentid', 'gradeid', 'progress', 'scores')
      .orderBy('lastupdated', 'desc')) as Row[];
    for (const r of rows) {
      const list = progress.get(r.studentid as string) ?? [];
      list.push({ gradeid: r.gradeid, progress: numOrNull(r.progress), scores: numOrNull(r.scores) });
      progress.set(r.studentid as string, list);
    }
  }
  const data = page.data.map((row) => {
    const { learner, x } = splitLearner(row, c.identity);
    return {
      ...learner,
      studentgradesprogresses: progress.get(learner.studentid as string) ?? [],
      ...(g ? { grade: { gradename: g.gradename, curriculum: { curriculumname: g.curriculumname } } } : {}),
      class: classOf(x),
      school: schoolOf(x),
    };
  });
  return { ...page, data };
}

// ---- POST /report/student-level-progress and /report/student-lesson-progress ---------------------------

/**
 * The active levels (or lessons) of one learner's curriculum, by name, paged, each with the learner's
 * progress row for it. Queries: the learner, count and page, the progress rows of the page.
 */
export async function learnerProgressPage(c: ReportCtx, body: MultiPaging, unit: Unit) {
  const f = filterMap(body);
  const ids = f.get('studentid');
  if (!ids) return emptyPage(body, { student: null });
  const { db } = c;
  const learner = (await learnerBase(c)
    .whereIn('s.studentid', ids)
    .join('curriculums as lc', 'lc.curriculumid', 's.curriculumid')
    .orderBy('s.studentid')
    .first('s.studentid', 's.studentfirstname', 's.curriculumid')) as Row | undefined;
  if (!learner) return emptyPage(body, { student: null });
  const student = {
    ...(c.identity ? { studentfirstname: learner.studentfirstname } : {}),
    curriculum: { curriculumid: learner.curriculumid },
  };

  const q = unit === 'lesson'
    ? db('lessons as l').join('levels as lv', 'lv.levelid', 'l.levelid').select('l.lessonid', 'l.lessonname')
    : db('levels as lv');
  q.join('grades as g', 'g.gradeid', 'lv.gradeid').join('curriculums as c', 'c.curriculumid', 'g.curriculumid')
    .where('c.curriculumid', learner.curriculumid as string)
    .select('lv.levelid', 'lv.levelname', 'g.gradeid', 'g.gradename', 'c.curriculumid', 'c.curriculumname');
  activeChain(q, unit === 'lesson');
  if (f.has('gradeid')) q.whereIn('lv.gradeid', f.get('gradeid')!);
  if (unit === 'lesson' && f.has('levelid')) q.whereIn('l.levelid', f.get('levelid')!);
  const total = num((await q.clone().clearSelect().count({ n: '*' }).first())?.n);
  const { limit, offset } = pageOf(body);
  const order =
    unit === 'lesson'
      ? [{ column: 'l.lessonname' }, { column: 'l.lessonid' }]
      : [{ column: 'lv.levelname' }, { column: 'lv.levelid' }];
  const rows = total > offset ? ((await q.orderBy(order).limit(limit).offset(offset)) as Row[]) : [];

  const progress = PROGRESS_TABLE[unit];
  const unitIds = rows.map((r) => r[progress.column] as string);
  const found = new Map<string, Row>();
  if (unitIds.length) {
    const list = (await db(progress.table)
      .where('studentid', learner.studentid as string)
      .whereIn(progress.column, unitIds)
      .orderBy('lastupdated', 'desc')) as Row[];
    for (const p of list) if (!found.has(p[progress.column] as string)) found.set(p[progress.column] as string, p);
  }
  const data = rows.map((r) => {
    const grade = {
      gradeid: r.gradeid,
      gradename: r.gradename,
      curriculum: { curriculumid: r.curriculumid, curriculumname: r.curriculumname },
    };
    const level = { levelid: r.levelid, levelname: r.levelname, grade };
    const own = found.get(r[progress.column] as string);
    return unit === 'lesson'
      ? { lessonid: r.lessonid, lessonname: r.lessonname, level, ...(own ? { studentlessonprogress: own } : {}) }
      : { ...level, ...(own ? { studentlevelprogress: own } : {}) };
  });
  return { ...pageEnvelope(data, total, body), student };
}

// ---- POST /report/studentstatus ------------------------------------------------------------------------

export interface StatusWindow {
  start?: Date;
  end?: Date;
}

/**
 * Learners with their activity: whether they signed in within the last month, their last sign-in, their
 * minutes of app use in the window (from `start` to `end`, or to now; up to `end` when no start is given;
 * without either, all of it, read from `studentappusagetotals`). One query for the rows (each learner's last
 * sign-in and usage are correlated sub-queries on indexed columns), one for the count.
 */
export function studentStatusQuery(c: ReportCtx, f: Filters, w: StatusWindow): Knex.QueryBuilder {
  const { db } = c;
  const q = learnerBase(c).whereNotNull('sc.schoolid').whereNotNull('cu.curriculumid');
  if (f.has('countryid')) q.whereIn('sc.countryid', f.get('countryid')!);
  if (f.has('schoolname')) q.whereIn('sc.schoolname', f.get('schoolname')!);
  if (f.has('schoolid')) q.whereIn('sc.schoolid', f.get('schoolid')!);
  if (f.has('studentid')) q.whereIn('s.studentid', f.get('studentid')!);
  if (f.has('standard')) q.whereIn('s.standard', f.get('standard')!);
  // Without a window, each learner's total kept at import time (one row, whatever the years behind it).
  const usage =
    w.start || w.end
      ? db('studentappusages as a').whereRaw('a.schooluserid = s.schooluserid').sum('a.time_spent')
      : db('studentappusagetotals as a').whereRaw('a.schooluserid = s.schooluserid').select('a.time_spent');
  if (w.start) usage.where('a.created_at', '>=', w.start).where('a.created_at', '<=', w.end ?? new Date());
  else if (w.end) usage.where('a.created_at', '<=', w.end);
  return q
    .select(
      's.studentid',
      's.country',
      's.schoolname',
      's.standard',
      's.schooluserid',
      's.created_at',
      LEARNER_EXTRAS,
      {
        x_lastlogin: db('rpiuseraccess as ra').whereRaw('ra.userid = s.schooluserid').max('ra.logintime'),
        x_usage: usage,
      },
    )
    .orderBy([{ column: 's.schoolname' }, { column: 'u.schoolusername' }, { column: 's.studentid' }]);
}

export function studentStatusShape(now = new Date()) {
  const monthAgo = new Date(now);
  monthAgo.setUTCMonth(monthAgo.getUTCMonth() - 1);
  return (row: Row): Row => {
    const { learner, x } = splitLearner(row, false);
    const last = x.lastlogin == null ? undefined : new Date(x.lastlogin as string);
    const lastLogin = last && !Number.isNaN(last.getTime()) ? last : undefined;
    return {
      studentid: learner.studentid,
      country: learner.country,
      schoolname: learner.schoolname,
      standard: learner.standard,
      schooluserid: learner.schooluserid,
      created_at: learner.created_at,
      schooluser: { schoolusername: x.schoolusername },
      school: fullSchoolOf(x),
      class: classOf(x),
      curriculum: { curriculumname: x.curriculumname ?? null },
      status: !!lastLogin && lastLogin >= monthAgo,
      // The key is absent, not null, for a learner who never signed in (the original's shape).
      ...(lastLogin ? { lastLogin: lastLogin.toISOString() } : {}),
      totalusages: Math.ceil(num(x.usage) / 60),
    };
  };
}

export async function studentStatusPage(c: ReportCtx, body: MultiPaging) {
  const f = filterMap(body);
  const query = studentStatusQuery(c, f, {
    start: dateOf(f.get('startDate')?.[0], 'startDate'),
    end: dateOf(f.get('endDate')?.[0], 'endDate'),
  });
  return pageOfLearners({ query, count: query, shape: studentStatusShape() }, body);
}
