import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody, uuidParam } from '../../auth/validation';
import { dateLabel, dateTimeLabel, monthOf, MONTHS, wallClock } from '../../http/clock';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { applyScope, schoolInScope, type Scope } from '../../http/scope';

/**
 * Fee collection (contract §18): one record a month per school of what it was expected to pay and
 * what it paid. Every route answers only for the caller's schools (a school teacher signed in on
 * central: its own); a school or record outside them is refused as an unknown one is.
 */

const INVALID_SCHOOL = 'Invalid schoolid';
const INVALID_RECORD = 'Invalid schoolcontributeid';
const NOT_YET = 'School Contribute not create yet';
const THIS_MONTH = 'School Contribute already create this month';
const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

type Row = Record<string, unknown>;

const amount = z
  .number({ error: (iss) => (iss.input === undefined ? 'is required' : 'must be a number') })
  .min(1, { error: 'must be greater than or equal to 1' })
  .max(100000, { error: 'must be less than or equal to 100000' });
const guid = z.string({ error: 'is required' }).regex(GUID, { error: 'must be a valid GUID' });
const schoolname = z
  .string({ error: 'is required' })
  .min(1, { error: 'is not allowed to be empty', abort: true })
  // What the column holds (the original's validator allowed 300 and the database refused the rest).
  .max(45, { error: 'length must be less than or equal to 45 characters long', abort: true })
  .refine((v) => v.trim().length > 0, { error: 'not allowed' });

export const schoolParams = uuidParam('schoolid', 'must be a valid GUID');
export const recordParams = uuidParam('schoolcontributeid', 'must be a valid GUID');
export const createBody = strictBody({ schoolname, schoolid: guid, countryid: guid, expected: amount, actual: amount });
export const renameBody = strictBody({ schoolname, countryid: guid });
export const amountsBody = strictBody({ expected: amount, actual: amount });
export const recordListBody = pagingBody(['schoolname']);
const dateText = z
  .string()
  .max(100)
  .refine((v) => v === '' || !Number.isNaN(new Date(v).getTime()), { error: 'must be a valid date' });
export const dashboardQuery = z.looseObject({
  countryid: z.string().optional(),
  schoolname: z.string().optional(),
  date: dateText.optional(),
});
export const reportBody = strictBody({ date: z.union([dateText, z.null()]).optional() });

const series = (r: Row) => [
  { name: 'Expected($)', value: Number(r.expected ?? 0) },
  { name: 'Actuals($)', value: Number(r.actual ?? 0) },
];

/** A school (deleted ones too: their records are history) that the caller may see, or the refusal. */
async function schoolSeen(db: Knex, scope: Scope, schoolid: string, message: string) {
  const school = await db('schools').where({ schoolid }).first('schoolid', 'schoolname', 'countryid', 'isdeleted');
  if (!school || !(await schoolInScope(scope, { schoolid }))) throw httpError(400, message);
  return school;
}

/** A live record of a school the caller may see, or the refusal. */
async function recordSeen(db: Knex, scope: Scope, schoolcontributeid: string, message: string): Promise<Row> {
  const q = db('schoolcontributedata').where({ schoolcontributeid, isdeleted: false });
  const row = await applyScope(q, scope, { schoolid: 'schoolid' }).first();
  if (!row) throw httpError(400, message);
  return row;
}

/** Live records of a school, newest first. */
const recordsOf = (db: Knex, schoolid: string) =>
  db('schoolcontributedata')
    .where({ schoolid, isdeleted: false })
    .orderBy([
      { column: 'created_at', order: 'desc' },
      { column: 'schoolcontributeid', order: 'desc' },
    ]);

/**
 * The newest live record of each live school the caller may see (within a month when given), by school
 * name, in one query.
 */
async function newestPerSchool(
  db: Knex,
  scope: Scope,
  o: { month?: { start: string; end: string }; countryid?: string; schoolname?: string } = {},
): Promise<Row[]> {
  const ranked = db('schoolcontributedata as r')
    .join('schools as sc', 'sc.schoolid', 'r.schoolid')
    .where({ 'r.isdeleted': false, 'sc.isdeleted': false })
    .select(
      'r.*',
      'sc.schoolname as currentname',
      db.raw('row_number() over (partition by r.schoolid order by r.created_at desc, r.schoolcontributeid desc) as rn'),
    );
  if (o.month) ranked.where('r.created_at', '>=', o.month.start).where('r.created_at', '<', o.month.end);
  if (o.countryid) ranked.where('sc.countryid', o.countryid);
  if (o.schoolname) ranked.where('sc.schoolname', o.schoolname);
  applyScope(ranked, scope, { schoolid: 'r.schoolid' });
  const rows = await readRows<Row>(
    db
      .from(ranked.as('x'))
      .where('rn', 1)
      .orderBy([{ column: 'currentname' }, { column: 'schoolid' }])
      .select('*'),
  );
  return rows.map(({ rn, currentname, ...r }) => r);
}

/**
 * A school's record of the month. One a month: refused when the school's newest record falls in the
 * caller's current month. The school's own name and country are recorded (those sent must name it).
 */
export async function createRecord(
  db: Knex,
  scope: Scope,
  offset: number,
  body: z.infer<typeof createBody>,
  by: string | null,
) {
  const schoolcontributeid = crypto.randomUUID();
  await db.transaction(async (trx) => {
    const q = trx('schools').where({ schoolid: body.schoolid, isdeleted: false });
    // PostgreSQL: two requests for one school wait for each other, so that the month rule sees the
    // other's record (SQLite writes one transaction at a time).
    if (trx.client.config.client === 'pg') q.forUpdate();
    const school = await applyScope(q, scope, { schoolid: 'schoolid' }).first('schoolid', 'schoolname', 'countryid');
    if (!school) throw httpError(400, INVALID_SCHOOL);
    const newest = await recordsOf(trx, school.schoolid).first('created_at');
    if (newest) {
      const month = monthOf(new Date(), offset);
      const at = new Date(String(newest.created_at)).toISOString();
      if (at >= month.start && at < month.end) throw httpError(400, THIS_MONTH);
    }
    await trx('schoolcontributedata').insert({
      schoolcontributeid,
      schoolid: school.schoolid,
      schoolname: school.schoolname,
      countryid: school.countryid ?? body.countryid,
      expected: body.expected,
      actual: body.actual,
      isdeleted: false,
      created_at: new Date().toISOString(),
      created_by: by,
      updated_by: by,
    });
  });
  return db('schoolcontributedata').where({ schoolcontributeid }).first();
}

/** A school's records, newest first, paged (filter by school name). */
export async function listRecords(db: Knex, scope: Scope, schoolid: string, body: Paging) {
  await schoolSeen(db, scope, schoolid, INVALID_SCHOOL);
  const base = db('schoolcontributedata').where({ schoolid, isdeleted: false });
  applyFilters(base, body, (k) => k);
  return pageRows(
    base,
    body,
    [
      { column: 'created_at', order: 'desc' },
      { column: 'schoolcontributeid', order: 'desc' },
    ],
    ['schoolcontributeid', 'expected', 'actual', 'schoolid', 'schoolname', 'created_at'],
  );
}

/** Writes a school's (new) name and country on each of its live records. */
export async function renameRecords(
  db: Knex,
  scope: Scope,
  schoolid: string,
  body: z.infer<typeof renameBody>,
  by: string | null,
) {
  if (!(await schoolInScope(scope, { schoolid })) || !(await recordsOf(db, schoolid).first('schoolcontributeid')))
    throw httpError(400, NOT_YET);
  await db('schoolcontributedata')
    .where({ schoolid, isdeleted: false })
    .update({
      schoolname: body.schoolname,
      countryid: body.countryid,
      updated_at: new Date().toISOString(),
      updated_by: by,
    });
  return readRows(recordsOf(db, schoolid).select());
}

export async function updateAmounts(
  db: Knex,
  scope: Scope,
  schoolcontributeid: string,
  body: z.infer<typeof amountsBody>,
  by: string | null,
) {
  await recordSeen(db, scope, schoolcontributeid, NOT_YET);
  await db('schoolcontributedata')
    .where({ schoolcontributeid })
    .update({ expected: body.expected, actual: body.actual, updated_at: new Date().toISOString(), updated_by: by });
  return db('schoolcontributedata').where({ schoolcontributeid }).first();
}

/** Soft-deletes every live record of one school (and of no other). */
export async function deleteSchoolRecords(db: Knex, scope: Scope, schoolid: string, by: string | null): Promise<true> {
  if (!(await schoolInScope(scope, { schoolid }))) throw httpError(400, INVALID_SCHOOL);
  const n = await db('schoolcontributedata')
    .where({ schoolid, isdeleted: false })
    .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  if (!n) throw httpError(400, INVALID_SCHOOL);
  return true;
}

export async function deleteRecord(
  db: Knex,
  scope: Scope,
  schoolcontributeid: string,
  by: string | null,
): Promise<true> {
  await recordSeen(db, scope, schoolcontributeid, INVALID_RECORD);
  await db('schoolcontributedata')
    .where({ schoolcontributeid })
    .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  return true;
}

export const getRecord = (db: Knex, scope: Scope, schoolcontributeid: string) =>
  recordSeen(db, scope, schoolcontributeid, INVALID_RECORD);

/** A school's chart: its three newest records, oldest first, each named by when it was made. */
export async function schoolDashboard(db: Knex, scope: Scope, offset: number, schoolid: string) {
  await schoolSeen(db, scope, schoolid, INVALID_SCHOOL);
  const rows = await readRows<Row>(recordsOf(db, schoolid).limit(3).select());
  return rows
    .reverse()
    .map((r) => ({ name: dateTimeLabel(new Date(String(r.created_at)), offset), series: series(r) }));
}

/** Every school's newest record, named by the school. */
export async function allDashboard(db: Knex, scope: Scope) {
  return (await newestPerSchool(db, scope)).map((r) => ({ name: r.schoolname ?? '', series: series(r) }));
}

/** A school's records, newest first, each with `school{schoolname}`. */
export async function schoolRecords(db: Knex, scope: Scope, schoolid: string) {
  const school = await schoolSeen(db, scope, schoolid, INVALID_SCHOOL);
  return (await readRows<Row>(recordsOf(db, schoolid).select())).map((r) => ({
    ...r,
    school: { schoolname: school.schoolname },
  }));
}

/** Every school's newest record, as the rows themselves. */
export const newestRecords = (db: Knex, scope: Scope) => newestPerSchool(db, scope);

/**
 * The dashboard by country, school and month: each school's newest record of that month, named `D/Mon/YYYY/ <school>`.
 */
export async function filteredDashboard(db: Knex, scope: Scope, offset: number, q: z.infer<typeof dashboardQuery>) {
  const rows = await newestPerSchool(db, scope, {
    month: q.date ? monthOf(new Date(q.date), offset) : undefined,
    countryid: q.countryid && q.countryid !== 'all' ? q.countryid : undefined,
    schoolname: q.schoolname || undefined,
  });
  return rows.map((r) => {
    const w = wallClock(new Date(String(r.created_at)), offset);
    return {
      name: `${w.getUTCDate()}/${MONTHS[w.getUTCMonth()]}/${w.getUTCFullYear()}/ ${r.schoolname ?? ''}`,
      series: series(r),
    };
  });
}

export const REPORT_COLUMNS = ['school_contribute', 'expected', 'actual', 'date'] as const;

/**
 * The fee report: each school's newest record (of the given month, else of any month, those not of
 * the current month reported as nothing due and nothing paid), as CSV rows.
 */
export async function reportRows(db: Knex, scope: Scope, offset: number, date: string | null | undefined) {
  const now = monthOf(new Date(), offset);
  const rows = await newestPerSchool(db, scope, date ? { month: monthOf(new Date(date), offset) } : {});
  return rows.map((r) => {
    const at = new Date(String(r.created_at));
    const current = !!date || (at.toISOString() >= now.start && at.toISOString() < now.end);
    const expected = current ? Number(r.expected ?? 0) : 0;
    const actual = current ? Number(r.actual ?? 0) : 0;
    return {
      school_contribute: r.schoolname ?? 'N/A',
      expected: `${expected}$`,
      actual: `${actual}$`,
      date: expected !== 0 && actual !== 0 ? dateLabel(at, offset) : 'N/A',
    };
  });
}
