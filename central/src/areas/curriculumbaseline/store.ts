import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import crypto from 'node:crypto';
import { readRows, whereContains } from '@lms/db';
import { z } from 'zod';
import { applyScope, type Scope, scopeSchools, type Curricula } from '../../http/scope';
import { locked } from '../../http/writes';

export const BASELINE_RESULT_COLUMNS = [
  'student',
  'username',
  'schoolname',
  'baselinename',
  'ispass',
  'resultpercentage',
  'correct',
  'totalquestions',
  'scores',
] as const;

interface ResultRow {
  studentfirstname?: string | null;
  schoolusername?: string | null;
  schoolname?: string | null;
  baselinename?: string | null;
  ispass?: unknown;
  resultpercentage?: unknown;
  marks?: unknown;
  totalquestions?: unknown;
  scores?: unknown;
}

function csvRow(r: ResultRow) {
  const passed = r.ispass === true || r.ispass === 1 || r.ispass === '1' || r.ispass === 'true';
  return {
    student: r.studentfirstname ?? '',
    username: r.schoolusername ?? '',
    schoolname: r.schoolname ?? '',
    baselinename: r.baselinename ?? '',
    ispass: passed ? 'Pass' : '',
    resultpercentage: r.resultpercentage ?? '',
    correct: r.marks ?? '',
    totalquestions: r.totalquestions ?? '',
    scores: r.scores ?? '',
  };
}

/** The classroom server's rows for the same assessment (a bare array, contract sync-formats D). */
async function classroomResults(config: { rpiCloud: string; serverSyncKey: string }, id: string): Promise<ResultRow[]> {
  let rows: unknown;
  try {
    const res = await fetch(`${config.rpiCloud}/curriculum/${encodeURIComponent(id)}/getstudentresult`, {
      headers: { Authorization: config.serverSyncKey },
    });
    if (!res.ok) throw new Error(String(res.status));
    rows = await res.json();
  } catch {
    throw httpError(500, 'Could not read the classroom server results');
  }
  if (!Array.isArray(rows)) throw httpError(500, 'Could not read the classroom server results');
  return rows.map((r: Record<string, any>) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
    studentfirstname: r.student?.studentfirstname,
    schoolusername: r.student?.schooluser?.schoolusername,
    schoolname: r.student?.schoolname,
    baselinename: r.curriculumbaseline?.baselinename,
    ispass: r.ispass,
    resultpercentage: r.resultpercentage,
    marks: r.marks,
    totalquestions: r.totalquestions,
    scores: r.scores,
  }));
}

/** Learner identity with assessment results, from the cloud and the classroom server, as CSV rows. */
export async function baselineResultRows(
  db: Knex,
  config: { rpiCloud: string; serverSyncKey: string },
  id: string,
  scope: Scope,
): Promise<Array<Record<string, unknown>>> {
  const baseline = await db('curriculumbaseline')
    .where({ curriculumbaselineid: id })
    .first('curriculumbaselineid', 'baselinename');
  if (!baseline) throw httpError(400, 'Invalid curriculum Baseline');
  const totalquestions = Number(
    (await db('baselinequestion').where({ curriculumbaselineid: id, isdeleted: false }).count({ n: '*' }).first())?.n ??
      0,
  );
  const cloud: ResultRow[] = (
    await db('studentprogress as p')
      .join('students as s', 's.studentid', 'p.studentid')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('p.studentprogressreferenceid', id)
      .orderBy('p.starttime')
      .select(
        's.studentfirstname',
        'u.schoolusername',
        's.schoolname',
        'p.ispass',
        'p.resultpercentage',
        'p.marks',
        'p.scores',
      )
  ).map((r: ResultRow) => ({ ...r, baselinename: baseline.baselinename, totalquestions }));
  const classroom = await classroomResults(config, id);
  // Learners of the caller's schools only: an assessment of a curriculum offered in two countries has learners in both.
  const schools = scopeSchools(scope);
  const mine = schools
    ? (r: ResultRow) => typeof r.schoolname === 'string' && schools.names.includes(r.schoolname)
    : () => true;
  return [...cloud, ...classroom].filter(mine).map(csvRow);
}

// ---- The assessments themselves (baseline, midline, endline) -------------------------------------

const TYPE_NAMES: Record<number, string> = { 1: 'Baseline', 2: 'Midline', 3: 'Endline' };
/** The word the rule messages use for an assessment type (`Baseline` when none is known). */
export const typeName = (t: unknown): string => TYPE_NAMES[Number(t)] ?? 'Baseline';

const guid = z.string({ error: 'is required' }).uuid({ error: 'must be a valid GUID' });
const isoDate = z
  .union([z.string(), z.number()], { error: 'must be a valid date' })
  .transform((v, ctx) => {
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) {
      ctx.addIssue({ code: 'custom', message: 'must be a valid date' });
      return z.NEVER;
    }
    return d.toISOString();
  });
const baselineFields = {
  baselineid: guid,
  curriculumid: guid,
  baselinename: z
    .string({ error: 'is required' })
    .min(1, { error: 'is not allowed to be empty' })
    // What the column holds (the original's validator allowed 300 and the database refused the rest).
    .max(36, { error: 'length must be less than or equal to 36 characters long' })
    .refine((v) => v.trim().length > 0, { error: 'not allowed' }),
  baselinetype: z
    .number({ error: 'must be a number' })
    .int({ error: 'must be an integer' })
    .min(1, { error: 'must be greater than or equal to 1' })
    .max(3, { error: 'must be less than or equal to 3' }),
  startdate: isoDate,
  enddate: isoDate,
  schoolid: z.array(z.string({ error: 'must be a string' }).max(36), { error: 'must be an array' }).max(1000),
};
/** Unknown keys are allowed (the admin UI sends its whole form), as in the original. */
export const baselineCreateBody = z.looseObject(baselineFields);
export const baselineUpdateBody = z.looseObject({
  curriculumid: baselineFields.curriculumid.optional(),
  baselineid: baselineFields.baselineid.optional(),
  baselinename: baselineFields.baselinename.optional(),
  baselinetype: baselineFields.baselinetype.optional(),
  startdate: baselineFields.startdate.optional(),
  enddate: baselineFields.enddate.optional(),
  schoolid: baselineFields.schoolid.optional(),
});
export const baselineIdParams = z.object({ curriculumbaselineid: guid });
export const activateParams = z.object({ curriculumbaselineid: guid, curriculumid: guid });
export const baselineQuery = z.looseObject({
  baselinename: z.string().max(300).optional(),
  baselinetype: z.string().regex(/^\d{0,9}$/, { error: 'must be a number' }).optional(),
});

type CreateBody = z.infer<typeof baselineCreateBody>;
type UpdateBody = z.infer<typeof baselineUpdateBody>;

const liveBaseline = (db: Knex, curriculumbaselineid: string) =>
  db('curriculumbaseline').where({ curriculumbaselineid, isdeleted: false }).first();
const liveCurriculum = async (db: Knex, curriculumid: string) =>
  !!(await db('curriculums').where({ curriculumid, isdeleted: false }).first('curriculumid'));
const hasQuestions = async (db: Knex, curriculumbaselineid: string) =>
  !!(await db('baselinequestion').where({ curriculumbaselineid, isdeleted: false }).first('baselinequestionid'));

async function nameTaken(db: Knex, baselinename: string, baselinetype: number, except?: string): Promise<boolean> {
  const q = db('curriculumbaseline').where({ baselinename, baselinetype, isdeleted: false });
  if (except) q.whereNot({ curriculumbaselineid: except });
  return !!(await q.first('curriculumbaselineid'));
}

/**
 * The original's once-a-year rule: walking the curriculum's three newest assessments, one of this type
 * made this calendar year refuses another (the walk stops at the first made in an earlier year).
 */
async function madeThisYear(db: Knex, curriculumid: string, baselinetype: number): Promise<boolean> {
  const newest = await db('curriculumbaseline')
    .where({ curriculumid, baselineid: curriculumid, isdeleted: false })
    .orderBy([{ column: 'created_at', order: 'desc' }])
    .limit(3)
    .select('baselinetype', 'created_at');
  const year = new Date().getUTCFullYear();
  for (const row of newest) {
    if (new Date(row.created_at as string).getUTCFullYear() !== year) return false;
    if (Number(row.baselinetype) === baselinetype) return true;
  }
  return false;
}

/** The rule messages of a write, all of them (the contract joins them with ", "). */
function refuse(messages: string[]): void {
  if (messages.length) throw httpError(400, [...new Set(messages)].join(', '));
}

/**
 * The schools an assessment is given to, as a narrowed caller may set them: each school it names must
 * be one of the caller's (else 'Invalid school id', nothing written), and the schools of the stored list
 * it cannot see stay on it (the caller's list replaces only its own part). An unnarrowed caller's list
 * is stored as sent.
 */
function schoolsFor(scope: Scope, sent: readonly string[], stored: readonly string[] = []): string[] {
  if (scope.all) return [...sent];
  const own = new Set(scope.schoolids);
  if (sent.some((id) => !own.has(id) && !stored.includes(id))) throw httpError(400, 'Invalid school id');
  return [...new Set([...stored.filter((id) => !own.has(id)), ...sent])];
}

const storedSchools = (v: unknown): string[] => {
  const list = typeof v === 'string' ? (() => { try { return JSON.parse(v) as unknown; } catch { return []; } })() : v;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
};

/**
 * A new assessment, inactive. Its `baselineid` is its curriculum's id, as the original stores it (the
 * body's `baselineid` only has to name a curriculum that exists).
 */
export async function createBaseline(db: Knex, scope: Scope, body: CreateBody, by: string | null) {
  const type = typeName(body.baselinetype);
  const schoolids = schoolsFor(scope, body.schoolid);
  const curriculumbaselineid = crypto.randomUUID();
  await db.transaction(async (trx) => {
    const problems: string[] = [];
    if (!(await liveCurriculum(trx, body.curriculumid))) problems.push('Curriculum does not exists');
    else if (!(await liveCurriculum(trx, body.baselineid))) problems.push(`${type} Curriculum does not exists`);
    else if (await madeThisYear(trx, body.curriculumid, body.baselinetype))
      problems.push(`${type} Curriculum already exists this year`);
    if (await nameTaken(trx, body.baselinename, body.baselinetype)) problems.push(`${type} Name already exists`);
    refuse(problems);
    const now = new Date().toISOString();
    await trx('curriculumbaseline').insert({
      curriculumbaselineid,
      curriculumid: body.curriculumid,
      baselineid: body.curriculumid,
      baselinename: body.baselinename,
      baselinetype: body.baselinetype,
      baselinestatus: false,
      startdate: body.startdate,
      enddate: body.enddate,
      schoolid: JSON.stringify(schoolids),
      isdeleted: false,
      created_at: now,
      created_by: by,
      updated_at: now,
      updated_by: by,
    });
  });
  return liveBaseline(db, curriculumbaselineid);
}

/** Overwrites the fields given; a moved assessment's `baselineid` follows its curriculum. */
export async function updateBaseline(
  db: Knex,
  scope: Scope,
  curriculumbaselineid: string,
  body: UpdateBody,
  by: string | null,
) {
  await db.transaction(async (trx) => {
    const row = await liveBaseline(trx, curriculumbaselineid);
    const type = typeName(body.baselinetype ?? row?.baselinetype);
    if (!row) throw httpError(400, `Invalid curriculum ${type}`);
    const next = {
      curriculumid: body.curriculumid ?? row.curriculumid,
      baselinename: body.baselinename ?? row.baselinename,
      baselinetype: body.baselinetype ?? row.baselinetype,
    };
    const problems: string[] = [];
    if (body.curriculumid && body.curriculumid !== row.curriculumid && !(await liveCurriculum(trx, body.curriculumid)))
      problems.push('Curriculum does not exists');
    if (await nameTaken(trx, next.baselinename, next.baselinetype, curriculumbaselineid))
      problems.push(`${type} Name already exists`);
    refuse(problems);
    const patch: Record<string, unknown> = {
      ...next,
      baselineid: next.curriculumid,
      updated_at: new Date().toISOString(),
      updated_by: by,
    };
    if (body.startdate !== undefined) patch.startdate = body.startdate;
    if (body.enddate !== undefined) patch.enddate = body.enddate;
    if (body.schoolid !== undefined)
      patch.schoolid = JSON.stringify(schoolsFor(scope, body.schoolid, storedSchools(row.schoolid)));
    await trx('curriculumbaseline').where({ curriculumbaselineid }).update(patch);
  });
  return liveBaseline(db, curriculumbaselineid);
}

/**
 * Makes this the curriculum's one active assessment: the others of its curriculum are switched off in
 * the same transaction, so two activations at once still leave one active. An assessment without a
 * question cannot be activated.
 */
export async function activateBaseline(db: Knex, curriculumbaselineid: string): Promise<true> {
  await db.transaction(async (trx) => {
    const row = await liveBaseline(trx, curriculumbaselineid);
    if (!row) throw httpError(400, 'Invalid curriculum Baseline');
    if (!(await hasQuestions(trx, curriculumbaselineid))) throw httpError(400, 'Please add question!');
    // Two activations of the same curriculum's assessments at once take turns (PostgreSQL): each would
    // otherwise switch the other's off before it commits and both would end active.
    await locked(trx, trx('curriculums').where({ curriculumid: row.curriculumid }).first('curriculumid'), 'update');
    await trx('curriculumbaseline')
      .where({ curriculumid: row.curriculumid, baselinestatus: true })
      .whereNot({ curriculumbaselineid })
      .update({ baselinestatus: false });
    await trx('curriculumbaseline').where({ curriculumbaselineid }).update({ baselinestatus: true });
  });
  return true;
}

export async function deactivateBaseline(db: Knex, curriculumbaselineid: string): Promise<true> {
  const changed = await db('curriculumbaseline')
    .where({ curriculumbaselineid, isdeleted: false })
    .update({ baselinestatus: false });
  if (!changed) throw httpError(400, 'Invalid curriculum Baseline');
  return true;
}

/** Soft-deletes the assessment with its questions, together. */
export async function deleteBaseline(db: Knex, curriculumbaselineid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    if (!(await liveBaseline(trx, curriculumbaselineid))) throw httpError(400, 'Invalid curriculum Baseline');
    const stamp = { isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by };
    await trx('baselinequestion').where({ curriculumbaselineid, isdeleted: false }).update(stamp);
    await trx('curriculumbaseline').where({ curriculumbaselineid }).update(stamp);
  });
  return true;
}

const LIST_COLUMNS = [
  'b.baselineid',
  'b.curriculumbaselineid',
  'b.baselinename',
  'b.curriculumid',
  'c.curriculumname',
  'b.baselinestatus',
  'b.baselinetype',
  'b.startdate',
  'b.enddate',
  'b.created_at',
  'b.schoolid',
];

/** Live assessments, newest first, with their curriculum's name: one query, whatever their number. */
export async function listBaselines(
  db: Knex,
  curricula: Curricula,
  q: { baselinename?: string; baselinetype?: string } = {},
) {
  const query = db('curriculumbaseline as b')
    .leftJoin('curriculums as c', 'c.curriculumid', 'b.curriculumid')
    .where('b.isdeleted', false);
  if (curricula) query.whereIn('b.curriculumid', curricula);
  const name = q.baselinename?.trim();
  if (name) whereContains(query, 'b.baselinename', name);
  if (q.baselinetype && Number(q.baselinetype) > 0) query.where('b.baselinetype', Number(q.baselinetype));
  return readRows(
    query
      .orderBy([{ column: 'b.created_at', order: 'desc' }, { column: 'b.curriculumbaselineid' }])
      .select(LIST_COLUMNS),
  );
}

/** One assessment with the names of its curriculum and of its baseline curriculum; null when there is none. */
export async function getBaseline(db: Knex, curriculumbaselineid: string) {
  const row = await db('curriculumbaseline as b')
    .leftJoin('curriculums as c', 'c.curriculumid', 'b.curriculumid')
    .leftJoin('curriculums as bc', 'bc.curriculumid', 'b.baselineid')
    .where({ 'b.curriculumbaselineid': curriculumbaselineid, 'b.isdeleted': false })
    .first(
      'b.baselinename',
      'b.baselineid',
      'b.curriculumbaselineid',
      'bc.curriculumname as curriculumbaselinename',
      'b.curriculumid',
      'c.curriculumname',
      'b.baselinestatus',
      'b.baselinetype',
      'b.startdate',
      'b.enddate',
      'b.schoolid',
    );
  return row ?? null;
}

/** The schools an assessment names that exist and that the caller may see, in the assessment's order. */
export async function baselineSchools(db: Knex, curriculumbaselineid: string, scope: Scope) {
  const row = await liveBaseline(db, curriculumbaselineid);
  const ids = Array.isArray(row?.schoolid)
    ? (row.schoolid as unknown[]).filter((x): x is string => typeof x === 'string')
    : [];
  if (!row || !ids.length) return [];
  const schools = await applyScope(
    db('schools').whereIn('schoolid', ids.slice(0, 1000)).where({ isdeleted: false }),
    scope,
    { schoolid: 'schoolid' },
  ).select('schoolid', 'schoolname');
  const byId = new Map(schools.map((s: { schoolid: string; schoolname: string }) => [s.schoolid, s]));
  return ids.flatMap((id) => {
    const s = byId.get(id);
    return s
      ? [
          {
            curriculumbaselineid,
            baselinename: row.baselinename,
            baselinetype: row.baselinetype,
            schoolname: s.schoolname,
            schoolid: s.schoolid,
          },
        ]
      : [];
  });
}
