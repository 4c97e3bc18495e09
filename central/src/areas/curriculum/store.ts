import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { actorOf } from '../../http/context';
import { description, guid, guidParams, text } from '../../http/fields';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { countriesInScope, scopedCurricula, type Curricula, type Scope } from '../../http/scope';
import { locked, now, writeTransaction } from '../../http/writes';
import type { Caller } from '../../http/types';

/** More countries than exist anywhere: a curriculum's country list is bounded by it. */
const MAX_COUNTRIES = 500;

const optional = z.string().optional();

export const allCurriculaQuery = z.looseObject({
  cur: optional,
  curid: optional,
  studentid: optional,
  standardid: optional,
  schoolname: optional,
});
export const countryParams = guidParams({ countryid: 'Country ID' });

/** Active curricula for the filter dropdowns, narrowed to a learner's, a class's or a school's curricula when asked. */
export async function allCurricula(db: Knex, q: z.infer<typeof allCurriculaQuery>, curricula: Curricula) {
  const query = db('curriculums').where({ isdeleted: false, curriculumstatus: true }).orderBy('curriculumname');
  if (curricula) query.whereIn('curriculumid', curricula);
  if (q.cur) query.where('curriculumname', 'like', `%${q.cur}%`);
  if (q.curid) query.where('curriculumid', q.curid);
  if (q.studentid || q.standardid) {
    const [student] = await readRows(
      db('students')
        .where((w) => {
          if (q.studentid) w.orWhere('studentid', q.studentid);
          if (q.standardid) w.orWhere('standard', q.standardid);
        })
        .select('curriculumids', 'curriculumid')
        .limit(1),
    );
    const ids: string[] = student
      ? Array.isArray(student.curriculumids) && student.curriculumids.length
        ? student.curriculumids
        : [student.curriculumid]
      : [];
    query.whereIn('curriculumid', ids);
  }
  if (q.schoolname) {
    const [school] = await readRows(db('schools').where({ schoolname: q.schoolname }).select('curriculums').limit(1));
    query.whereIn('curriculumid', Array.isArray(school?.curriculums) ? school.curriculums : []);
  }
  return readRows(query.select());
}

/** Curricula offered in a country; baseline curricula are assessments, not courses, and stay out. */
export async function curriculaOfCountry(db: Knex, countryid: string, curricula: Curricula) {
  const [country] = await readRows(db('countries').where({ countryid, isdeleted: false }).select('countryid').limit(1));
  if (!country) throw httpError(400, 'Invalid country id');
  const rows = await readRows<{ curriculumname: string }>(
    db('curriculums as c')
      .join('curriculumcountry as cc', 'cc.curriculumid', 'c.curriculumid')
      .where({ 'cc.countryid': countryid, 'c.isdeleted': false })
      .modify((b) => { if (curricula) b.whereIn('c.curriculumid', curricula); })
      .orderBy('c.curriculumname')
      .select('c.*'),
  );
  return rows.filter((r) => !/baseline/i.test(r.curriculumname));
}

export const curriculumParams = guidParams({ curriculumid: 'Curriculum ID' });
export const curriculumListBody = pagingBody(['curriculumname', 'curriculumdescription']);
export const curriculumBody = strictBody({
  curriculumname: text('Curriculum Name', { min: 3, max: 50, nonblank: true }),
  curriculumdescription: description('Curriculum description', 3, 500),
  // Items are named by their path (`"countryid.0" must be a string`), as the original names them.
  countryid: z
    .array(
      z
        .string({ error: 'must be a string' })
        .max(36, { error: 'length must be less than or equal to 36 characters long' }),
      {
        error: (iss) => (iss.input === undefined ? '"Country Id" is required' : '"Country Id" must be an array'),
      },
    )
    .max(MAX_COUNTRIES, { error: `"Country Id" must contain less than or equal to ${MAX_COUNTRIES} items` }),
  subjectid: guid('Subject ID'),
});
type CurriculumBody = z.infer<typeof curriculumBody>;

const INVALID = 'Invalid Curriculum id';
const EXISTS = 'Curriculum already exists';

/** A live curriculum the caller may see (`curricula`: their ids, undefined for all). */
function liveCurriculum(db: Knex, curriculumid: string, curricula: Curricula) {
  const q = db('curriculums').where({ curriculumid, isdeleted: false });
  if (curricula) q.whereIn('curriculumid', curricula);
  return q;
}

/** The curriculum row with the ids of the countries it is offered in. */
export async function getCurriculum(db: Knex, curriculumid: string, curricula: Curricula) {
  const row = await liveCurriculum(db, curriculumid, curricula).first();
  if (!row) throw httpError(400, INVALID);
  const links = await db('curriculumcountry').where({ curriculumid }).orderBy('countryid').select('countryid');
  return { ...row, countryid: links.map((l: { countryid: string }) => l.countryid) };
}

/** The admin UI's curriculum list: `subjectid` holds the subject's name and `countryid` the countries' names. */
export async function listCurricula(db: Knex, body: Paging, curricula: Curricula) {
  const base = db('curriculums').where({ isdeleted: false });
  if (curricula) base.whereIn('curriculumid', curricula);
  applyFilters(base, body, (k) => k);
  const page = await pageRows(base, body, [{ column: 'curriculumname' }, { column: 'curriculumid' }]);
  const rows = page.data as Array<{ curriculumid: string; subjectid: string | null }>;
  if (!rows.length) return page;
  const subjectids = [...new Set(rows.map((r) => r.subjectid).filter((s): s is string => !!s))];
  const subjects = subjectids.length
    ? await db('subjects').whereIn('subjectid', subjectids).select('subjectid', 'subjectname')
    : [];
  const subjectName = new Map(
    subjects.map((s: { subjectid: string; subjectname: string }) => [s.subjectid, s.subjectname]),
  );
  const links = (await db('curriculumcountry as cc')
    .join('countries as co', 'co.countryid', 'cc.countryid')
    .whereIn('cc.curriculumid', rows.map((r) => r.curriculumid))
    .orderBy(['co.countryname', 'co.countryid'])
    .select('cc.curriculumid', 'co.countryname')) as Array<{ curriculumid: string; countryname: string }>;
  const countryNames = new Map<string, string[]>();
  for (const l of links) countryNames.set(l.curriculumid, [...(countryNames.get(l.curriculumid) ?? []), l.countryname]);
  return {
    ...page,
    data: rows.map((r) => ({
      ...r,
      subjectid: (r.subjectid && subjectName.get(r.subjectid)) ?? '',
      countryid: countryNames.get(r.curriculumid) ?? [],
    })),
  };
}

/** The subject must be live; share-locked so that it cannot be deleted under the curriculum meanwhile. */
async function requireSubject(trx: Knex, subjectid: string): Promise<void> {
  if (!(await locked(trx, trx('subjects').where({ subjectid, isdeleted: false }), 'share').first('subjectid')))
    throw httpError(400, 'Invalid Subject');
}

async function nameTaken(trx: Knex, curriculumname: string, except?: string): Promise<boolean> {
  const q = trx('curriculums').where({ curriculumname, isdeleted: false });
  if (except) q.whereNot({ curriculumid: except });
  return !!(await q.first('curriculumid'));
}

/**
 * Replaces the countries a curriculum is offered in: each must be a live country the caller may name.
 * `linkids`: the links' ids, in the order of the distinct countries (the demo seed's are fixed).
 */
async function setCountries(
  trx: Knex,
  scope: Scope | undefined,
  curriculumid: string,
  countryids: string[],
  linkids: readonly string[] = [],
): Promise<void> {
  const wanted = [...new Set(countryids)];
  const found = await countriesInScope(trx, scope, wanted);
  if (found.length !== wanted.length) throw httpError(400, 'some country not found');
  await trx('curriculumcountry').where({ curriculumid }).del();
  if (wanted.length) {
    await trx('curriculumcountry').insert(
      wanted.map((countryid, i) => ({
        curriculumcountryid: linkids[i] ?? crypto.randomUUID(),
        curriculumid,
        countryid,
      })),
    );
  }
}

/** Ids the demo seed gives its rows; a request's curriculum and links get new ones. */
export interface CurriculumIds {
  curriculumid?: string;
  curriculumcountryids?: readonly string[];
}

export async function createCurriculum(
  db: Knex,
  body: CurriculumBody,
  caller: Caller,
  scope: Scope | undefined,
  ids: CurriculumIds = {},
) {
  const curriculumid = ids.curriculumid ?? crypto.randomUUID();
  const by = actorOf(caller);
  await writeTransaction(db, EXISTS, async (trx) => {
    await requireSubject(trx, body.subjectid);
    if (await nameTaken(trx, body.curriculumname)) throw httpError(400, EXISTS);
    await trx('curriculums').insert({
      curriculumid,
      curriculumname: body.curriculumname,
      curriculumdescription: body.curriculumdescription ?? null,
      subjectid: body.subjectid,
      curriculumstatus: true,
      isdeleted: false,
      created_by: by,
      updated_by: by,
    });
    await setCountries(trx, scope, curriculumid, body.countryid, ids.curriculumcountryids);
  });
  return getCurriculum(db, curriculumid, undefined);
}

export async function updateCurriculum(
  db: Knex,
  curriculumid: string,
  body: CurriculumBody,
  caller: Caller,
  scope: Scope,
) {
  const curricula = scopedCurricula(scope);
  await writeTransaction(db, EXISTS, async (trx) => {
    if (!(await liveCurriculum(trx, curriculumid, curricula).first('curriculumid'))) throw httpError(400, INVALID);
    await requireSubject(trx, body.subjectid);
    if (await nameTaken(trx, body.curriculumname, curriculumid)) throw httpError(400, EXISTS);
    await trx('curriculums')
      .where({ curriculumid })
      .update({
        curriculumname: body.curriculumname,
        curriculumdescription: body.curriculumdescription ?? null,
        subjectid: body.subjectid,
        updated_at: now(),
        updated_by: actorOf(caller),
      });
    await setCountries(trx, scope, curriculumid, body.countryid);
  });
  return getCurriculum(db, curriculumid, undefined);
}

/** Soft-deletes the curriculum; it is offered nowhere any more. */
export async function deleteCurriculum(
  db: Knex,
  curriculumid: string,
  by: string | null,
  curricula: Curricula,
): Promise<true> {
  await db.transaction(async (trx) => {
    const n = await liveCurriculum(trx, curriculumid, curricula).update({
      isdeleted: true,
      deleted_at: now(),
      deleted_by: by,
    });
    if (!n) throw httpError(400, INVALID);
    await trx('curriculumcountry').where({ curriculumid }).del();
  });
  return true;
}

export async function setCurriculumStatus(
  db: Knex,
  curriculumid: string,
  curriculumstatus: boolean,
  curricula: Curricula,
): Promise<true> {
  const n = await liveCurriculum(db, curriculumid, curricula).update({ curriculumstatus });
  if (!n) throw httpError(400, INVALID);
  return true;
}

type Row = Record<string, unknown>;

/**
 * The rows of the curriculum map: curricula, grades, levels, lessons, lesson quizzes and practices, deleted
 * rows included as the original gave them (each carries its isdeleted flag), one query per table whatever
 * the size of the curricula: each table is narrowed by a sub-query on its parent, never by a list of ids.
 * `curricula` narrows to some curricula (a sub-query or list of ids), undefined for all.
 */
function contentQueries(db: Knex, curricula: Knex.QueryBuilder | string[] | undefined) {
  const under = <Q extends Knex.QueryBuilder>(
    q: Q,
    column: string,
    parents: Knex.QueryBuilder | string[] | undefined,
  ): Q => (parents ? (q.whereIn(column, parents) as Q) : q);
  const gradeIds = curricula && db('grades').whereIn('curriculumid', curricula).select('gradeid');
  const levelIds = gradeIds && db('levels').whereIn('gradeid', gradeIds).select('levelid');
  const lessonIds = levelIds && db('lessons').whereIn('levelid', levelIds).select('lessonid');
  return {
    curriculums: under(db('curriculums'), 'curriculumid', curricula),
    grades: under(db('grades'), 'curriculumid', curricula),
    levels: under(db('levels'), 'gradeid', gradeIds),
    lessons: under(db('lessons'), 'levelid', levelIds),
    lessonquizzes: under(db('lessonquizzes'), 'lessonid', lessonIds),
    lessonpractices: under(db('lessonpractices'), 'lessonid', lessonIds),
  };
}

/** `GET /curriculum/map`: the flat lists, by name as the original gave them. */
export async function curriculumMap(db: Knex, curricula: Curricula) {
  const q = contentQueries(db, curricula);
  const [curriculums, grades, levels, lessons, lessonquizzes, lessonpractices] = await Promise.all([
    readRows(q.curriculums.orderBy(['curriculumname', 'curriculumid']).select()),
    readRows(q.grades.orderBy(['gradename', 'gradeid']).select()),
    readRows(q.levels.orderBy(['levelname', 'levelid']).select()),
    readRows(q.lessons.orderBy(['lessonname', 'lessonid']).select()),
    readRows(q.lessonquizzes.orderBy(['lessonid', 'lessonquizorder', 'lessonquizid']).select()),
    readRows(q.lessonpractices.orderBy(['lessonid', 'lessonpracticeorder', 'lessonpracticeid']).select()),
  ]);
  return { grades, levels, lessons, lessonquizzes, lessonpractices, curriculums };
}

/** Groups rows (already in their order) by a parent key. */
function byParent(rows: Row[], key: string): Map<unknown, Row[]> {
  const groups = new Map<unknown, Row[]>();
  for (const r of rows) {
    const list = groups.get(r[key]);
    if (list) list.push(r);
    else groups.set(r[key], [r]);
  }
  return groups;
}

/**
 * `GET /curriculum/tree[/:curriculumid]`: curricula by name, each with its grades (by order), their levels
 * (by order), their lessons (by order), each lesson with its quizzes and practices (by order). Six
 * queries; the rows are nested in place.
 */
export async function curriculumTree(db: Knex, curricula: Curricula, curriculumid?: string) {
  if (curriculumid && !(await liveCurriculum(db, curriculumid, curricula).first('curriculumid')))
    throw httpError(400, INVALID);
  const q = contentQueries(db, curriculumid ? [curriculumid] : curricula);
  const [curriculums, grades, levels, lessons, quizzes, practices] = await Promise.all([
    readRows(q.curriculums.orderBy(['curriculumname', 'curriculumid']).select()),
    readRows(q.grades.orderBy(['gradeorder', 'gradename', 'gradeid']).select()),
    readRows(q.levels.orderBy(['levelorder', 'levelname', 'levelid']).select()),
    readRows(q.lessons.orderBy(['lessonorder', 'lessonname', 'lessonid']).select()),
    readRows(q.lessonquizzes.orderBy(['lessonquizorder', 'lessonquizid']).select()),
    readRows(q.lessonpractices.orderBy(['lessonpracticeorder', 'lessonpracticeid']).select()),
  ]);
  const quizzesOf = byParent(quizzes, 'lessonid');
  const practicesOf = byParent(practices, 'lessonid');
  for (const lesson of lessons) {
    lesson.quizzes = quizzesOf.get(lesson.lessonid) ?? [];
    lesson.practices = practicesOf.get(lesson.lessonid) ?? [];
  }
  const lessonsOf = byParent(lessons, 'levelid');
  for (const level of levels) level.lessons = lessonsOf.get(level.levelid) ?? [];
  const levelsOf = byParent(levels, 'gradeid');
  for (const grade of grades) grade.levels = levelsOf.get(grade.gradeid) ?? [];
  const gradesOf = byParent(grades, 'curriculumid');
  for (const c of curriculums) c.grades = gradesOf.get(c.curriculumid) ?? [];
  return curriculums;
}
