import crypto from 'node:crypto';
import { isUniqueViolation, readRows, whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody, uuidParam } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { applyScope, requireSchoolInScope, type Scope } from '../../http/scope';

export const INVALID_STANDARD = 'Invalid standard id';
const GUID = 'must be a valid GUID';

export const allStandardsQuery = z.looseObject({
  standardname: z.string().optional(),
  schoolname: z.string().optional(),
});
export const standardParams = uuidParam('standardid', GUID);
export const schoolParams = uuidParam('schoolid', GUID);
export const standardListBody = pagingBody(['standardname', 'schoolid'], { exact: ['schoolid'] });
export const standardBody = strictBody({
  standardname: z
    .string({ error: 'is required' })
    .min(1, { error: 'is not allowed to be empty', abort: true })
    // What the column holds (the original's validator allowed 300 and the database refused the rest).
    .max(45, { error: 'length must be less than or equal to 45 characters long', abort: true })
    .refine((v) => v.trim().length > 0, { error: 'not allowed' }),
  schoolid: z
    .string({ error: 'is required' })
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: GUID }),
});
type StandardBody = z.infer<typeof standardBody>;

/** Class list for the filter dropdowns (deleted classes included, as the original does), within the caller's scope. */
export async function allStandards(db: Knex, scope: Scope, q: z.infer<typeof allStandardsQuery>) {
  const query = db('standards as s').leftJoin('schools as sc', 'sc.schoolid', 's.schoolid').orderBy('s.standardname');
  if (q.standardname?.trim()) whereContains(query, 's.standardname', q.standardname.trim());
  if (q.schoolname) query.where((w) => w.where('sc.schoolname', q.schoolname).orWhere('s.schoolname', q.schoolname));
  applyScope(query, scope, { schoolid: 's.schoolid' });
  const rows = await readRows<{
    standardid: string;
    standardname: string;
    joinedschool: string | null;
    ownschool: string | null;
  }>(query.select('s.standardid', 's.standardname', 'sc.schoolname as joinedschool', 's.schoolname as ownschool'));
  return rows.map((r) => ({
    standardid: r.standardid,
    standardname: r.standardname,
    school: { schoolname: r.joinedschool ?? r.ownschool },
  }));
}

/** Rows with `school: {schoolname}` (the school's current name, else the one the class recorded). */
function withSchool(rows: Array<Record<string, unknown>>) {
  return rows.map(({ joinedschool, ...r }) => ({ ...r, school: { schoolname: joinedschool ?? r.schoolname ?? null } }));
}

/** A live class the caller may see, or the area's invalid-id refusal. */
async function liveStandard(db: Knex, scope: Scope, standardid: string) {
  const row = await db('standards').where({ standardid, isdeleted: false }).first();
  if (!row || !row.schoolid) throw httpError(400, INVALID_STANDARD);
  await requireSchoolInScope(scope, { schoolid: row.schoolid }, INVALID_STANDARD);
  return row;
}

export async function getStandard(db: Knex, scope: Scope, standardid: string) {
  return liveStandard(db, scope, standardid);
}

/** The Classes page: live classes by name with their school's name, within the caller's scope. */
export async function listStandards(db: Knex, scope: Scope, body: Paging) {
  const base = db('standards as s').leftJoin('schools as sc', 'sc.schoolid', 's.schoolid').where('s.isdeleted', false);
  applyFilters(base, body, (k) => `s.${k}`, true, ['schoolid']);
  applyScope(base, scope, { schoolid: 's.schoolid' });
  const page = await pageRows(
    base,
    body,
    [{ column: 's.standardname' }, { column: 's.standardid' }],
    ['s.*', 'sc.schoolname as joinedschool'],
  );
  return { ...page, data: withSchool(page.data) };
}

/** Live classes of a school the caller may see. */
export async function standardsOfSchool(db: Knex, scope: Scope, schoolid: string) {
  if (!(await db('schools').where({ schoolid, isdeleted: false }).first('schoolid')))
    throw httpError(400, 'Invalid school id');
  await requireSchoolInScope(scope, { schoolid }, 'Invalid school id');
  const rows = await readRows<Record<string, unknown>>(
    db('standards as s')
      .join('schools as sc', 'sc.schoolid', 's.schoolid')
      .where({ 's.schoolid': schoolid, 's.isdeleted': false })
      .orderBy('s.standardname')
      .select('s.*', 'sc.schoolname as joinedschool'),
  );
  return withSchool(rows);
}

/** The school a class is put in: live and within the caller's scope, else the contract's `no school found`. */
async function targetSchool(
  db: Knex,
  scope: Scope,
  schoolid: string,
): Promise<{ schoolid: string; schoolname: string }> {
  const q = db('schools').where({ schoolid, isdeleted: false });
  // PostgreSQL: two requests naming classes of one school wait for each other, so that the
  // duplicate-name check below sees the other's class (SQLite writes one transaction at a time); the
  // unique index on live class names holds the rule whatever happens.
  if (db.client.config.client === 'pg') q.forUpdate();
  const school = await applyScope(q, scope, { schoolid: 'schoolid' }).first('schoolid', 'schoolname');
  if (!school) throw httpError(400, 'no school found');
  return school;
}

/** Class names are unique among a school's live classes, whatever their case. */
async function nameTaken(db: Knex, schoolid: string, standardname: string, except?: string): Promise<boolean> {
  const q = db('standards')
    .where({ schoolid, isdeleted: false })
    .whereRaw('lower(standardname) = ?', [standardname.toLowerCase()]);
  if (except) q.whereNot({ standardid: except });
  return !!(await q.first('standardid'));
}

/** A unique-index violation (two requests naming one class at once) is the same refusal as the check's. */
async function sameClassOnce<T>(write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (isUniqueViolation(err)) throw httpError(400, 'standard already exists');
    throw err;
  }
}

export async function createStandard(db: Knex, scope: Scope, body: StandardBody, by: string | null) {
  const standardid = crypto.randomUUID();
  await sameClassOnce(() =>
    db.transaction(async (trx) => {
      const school = await targetSchool(trx, scope, body.schoolid);
      if (await nameTaken(trx, school.schoolid, body.standardname)) throw httpError(400, 'standard already exists');
      await trx('standards').insert({
        standardid,
        standardname: body.standardname,
        schoolid: school.schoolid,
        schoolname: school.schoolname,
        isdeleted: false,
        created_by: by,
        updated_by: by,
      });
    }),
  );
  return db('standards').where({ standardid }).first();
}

/** Learners of a class, counted by its id (the learner's `standard`). */
const hasLearners = async (db: Knex, standardid: string) =>
  !!(await db('students').where({ standard: standardid, isdeleted: false }).first('studentid'));

/**
 * Renames a class or moves it to another school. A class that has learners stays in its school: its
 * learners name their school by name, and moving them along is an enrolment change (PUT
 * /student/update), not a class edit.
 */
export async function updateStandard(
  db: Knex,
  scope: Scope,
  standardid: string,
  body: StandardBody,
  by: string | null,
) {
  await sameClassOnce(() =>
    db.transaction(async (trx) => {
      const current = await liveStandard(trx, scope, standardid);
      const school = await targetSchool(trx, scope, body.schoolid);
      if (await nameTaken(trx, school.schoolid, body.standardname, standardid))
        throw httpError(400, 'standard already exists');
      if (school.schoolid !== current.schoolid && (await hasLearners(trx, standardid))) {
        throw httpError(400, 'Standard has students assigned. Standard cannot be moved');
      }
      await trx('standards').where({ standardid }).update({
        standardname: body.standardname,
        schoolid: school.schoolid,
        schoolname: school.schoolname,
        updated_at: new Date().toISOString(),
        updated_by: by,
      });
    }),
  );
  return db('standards').where({ standardid }).first();
}

/** Soft delete; refused while learners are in the class. */
export async function deleteStandard(db: Knex, scope: Scope, standardid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    await liveStandard(trx, scope, standardid);
    if (await hasLearners(trx, standardid))
      throw httpError(400, 'Standard has students assigned. Standard cannot be deleted');
    await trx('standards')
      .where({ standardid })
      .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  });
  return true;
}

/**
 * Data migration: every class that belongs to no school is copied into every school that lacks a class of that name.
 */
export async function copySchoollessStandards(db: Knex, by: string | null): Promise<string> {
  await db.transaction(async (trx) => {
    const orphans = await trx('standards').whereNull('schoolid').where({ isdeleted: false }).select('standardname');
    const names = [...new Set(orphans.map((o: { standardname: string }) => o.standardname))];
    const schools = await trx('schools').where({ isdeleted: false }).select('schoolid', 'schoolname');
    const existing = await trx('standards').whereNotNull('schoolid').select('schoolid', 'standardname');
    // Whatever its case: a school's live class names are unique regardless of case (migration 0006).
    const have = new Set(
      existing.map(
        (e: { schoolid: string; standardname: string }) => `${e.schoolid}\u0000${e.standardname.toLowerCase()}`,
      ),
    );
    const rows = [];
    for (const s of schools) {
      for (const standardname of names) {
        if (have.has(`${s.schoolid}\u0000${standardname.toLowerCase()}`)) continue;
        have.add(`${s.schoolid}\u0000${standardname.toLowerCase()}`);
        rows.push({
          standardid: crypto.randomUUID(),
          standardname,
          schoolid: s.schoolid,
          schoolname: s.schoolname,
          created_by: by,
        });
      }
    }
    if (rows.length) await trx.batchInsert('standards', rows, 200);
  });
  return 'Migrated successfully!';
}

/** Data migration: classes no learner belongs to are removed for good. */
export async function removeUnusedStandards(db: Knex): Promise<string> {
  await db('standards')
    .whereNotIn('standardid', db('students').whereNotNull('standard').select('standard'))
    .del();
  return 'Removed class successfully!';
}
