import crypto from 'node:crypto';
import { isUniqueViolation, readRows, whereContains, whereJsonArrayHasAny, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody, uuidParam } from '../../auth/validation';
import { applyFilters, filterValues, pageRows, pagingBody, type Paging } from '../../http/paging';
import { applyScope, requireSchoolInScope, type Scope } from '../../http/scope';

export const INVALID_SCHOOL = 'Invalid school id';
const GUID = 'must be a valid GUID';

/** The original derives this feed from learner rows: one entry per school name that has learners. */
export async function schoolsFromLearners(db: Knex, scope: Scope) {
  const q = db('students')
    .where({ isdeleted: false })
    .whereNotNull('schoolname')
    .groupBy('schoolname')
    .orderBy('schoolname')
    .select('schoolname')
    .min({ schooltype: 'schooltype', city: 'city', country: 'country', state: 'state' });
  return readRows(applyScope(q, scope, { schoolname: 'schoolname' }));
}

export const schoolParams = uuidParam('schoolid', GUID);
export const countryParams = uuidParam('countryid', GUID);
export const countryCurriculumParams = countryParams.extend(uuidParam('curriculumid', GUID).shape);
export const allSchoolsQuery = z.looseObject({ countryid: z.string().optional(), school: z.string().optional() });
export const curriculumQuery = z.looseObject({ curriculumid: z.string().optional() });
// Ids picked from the page's drop-downs: compared whole, in one `IN` (a curriculum list is one JSON test).
const EXACT_KEYS = ['countryid', 'curriculums'];
export const schoolListBody = pagingBody(['schoolname', 'countryid', 'curriculums'], { exact: EXACT_KEYS });

const schoolname = z
  .string({ error: 'is required' })
  .min(1, { error: 'is not allowed to be empty', abort: true })
  // What the column holds (the original's validator allowed 300 and the database refused the rest).
  .max(45, { error: 'length must be less than or equal to 45 characters long', abort: true })
  .refine((v) => v.trim().length > 0, { error: 'not allowed' });
const schoolFields = {
  schoolname,
  countryid: z
    .string({ error: 'is required' })
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { error: GUID }),
  curriculums: z
    .array(
      z
        .string({ error: 'must be a string' })
        .max(36, { error: 'length must be less than or equal to 36 characters long' }),
      { error: 'is required' },
    )
    .max(200, { error: 'must contain less than or equal to 200 items' }),
};
export const createSchoolBody = strictBody(schoolFields);
export const updateSchoolBody = strictBody({
  ...schoolFields,
  uitheme: z.enum(['kids', 'corporate'], { error: 'must be one of [kids, corporate]' }).optional(),
});
type SchoolBody = z.infer<typeof updateSchoolBody>;

/** A live school the caller may see, or the area's invalid-id refusal. */
async function liveSchool(db: Knex, scope: Scope, schoolid: string) {
  const school = await db('schools').where({ schoolid, isdeleted: false }).first();
  if (!school) throw httpError(400, INVALID_SCHOOL);
  await requireSchoolInScope(scope, { schoolid }, INVALID_SCHOOL);
  return school;
}

/** The school picker: live schools whose name contains `school`, of a country, by name, within the caller's scope. */
export async function schoolsFor(db: Knex, scope: Scope, q: z.infer<typeof allSchoolsQuery>) {
  const query = db('schools').where({ isdeleted: false }).orderBy('schoolname');
  const part = q.school?.trim();
  if (part) whereContains(query, 'schoolname', part);
  if (q.countryid && q.countryid !== 'all') query.where({ countryid: q.countryid });
  return readRows(applyScope(query, scope, { schoolid: 'schoolid' }).select());
}

/** Schools of a country, deleted ones included (as the original lists them), within the caller's scope. */
export async function schoolsOfCountry(db: Knex, scope: Scope, countryid: string, curriculumid?: string) {
  const query = db('schools').where({ countryid }).orderBy('schoolname');
  if (curriculumid) whereJsonArrayHasAny(query, 'curriculums', [curriculumid]);
  return readRows(applyScope(query, scope, { schoolid: 'schoolid' }).select());
}

/** Live schools (within the caller's scope) that teach a curriculum; none without one. */
export async function schoolsWithCurriculum(db: Knex, scope: Scope, curriculumid: string | undefined) {
  if (!curriculumid) return [];
  const query = db('schools').where({ isdeleted: false }).orderBy('schoolname');
  whereJsonArrayHasAny(query, 'curriculums', [curriculumid]);
  return readRows(applyScope(query, scope, { schoolid: 'schoolid' }).select());
}

export async function getSchool(db: Knex, scope: Scope, schoolid: string) {
  return liveSchool(db, scope, schoolid);
}

/** The school's curricula with their names (null for an id no curriculum has). */
export async function schoolCurriculums(db: Knex, scope: Scope, schoolid: string) {
  const school = await liveSchool(db, scope, schoolid);
  const ids: string[] = Array.isArray(school.curriculums) ? school.curriculums : [];
  const names = await curriculumNames(db, ids);
  return ids.map((curriculumid) => ({ schoolid, curriculumid, curriculumname: names.get(curriculumid) ?? null }));
}

/** Names of the curricula in `ids`, read at once. */
export async function curriculumNames(db: Knex, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids.filter((x) => typeof x === 'string'))];
  if (!unique.length) return new Map();
  const rows = await readRows<{ curriculumid: string; curriculumname: string }>(
    db('curriculums').whereIn('curriculumid', unique).select('curriculumid', 'curriculumname'),
  );
  return new Map(rows.map((r) => [r.curriculumid, r.curriculumname]));
}

/**
 * The Schools page: live schools by name with their country row, and the curricula by NAME (as the
 * original answers), in four queries whatever the page size.
 */
export async function listSchools(db: Knex, scope: Scope, body: Paging) {
  const base = db('schools').where({ isdeleted: false });
  const curriculumFilters = (body.filter ?? []).filter((f) => f.key === 'curriculums');
  applyFilters(
    base,
    { ...body, filter: (body.filter ?? []).filter((f) => f.key !== 'curriculums') },
    (k) => k,
    true,
    EXACT_KEYS,
  );
  for (const f of curriculumFilters) {
    const values = [...new Set(filterValues(f.value))];
    if (values.length) whereJsonArrayHasAny(base, 'curriculums', values);
  }
  applyScope(base, scope, { schoolid: 'schoolid' });
  const page = await pageRows(base, body, [{ column: 'schoolname' }, { column: 'schoolid' }]);
  const countryIds = [...new Set(page.data.map((s) => s.countryid).filter((x): x is string => typeof x === 'string'))];
  const countries = countryIds.length
    ? await readRows<Record<string, unknown>>(db('countries').whereIn('countryid', countryIds).select())
    : [];
  const byId = new Map(countries.map((c) => [c.countryid, c]));
  const names = await curriculumNames(
    db,
    page.data.flatMap((s) => (Array.isArray(s.curriculums) ? (s.curriculums as string[]) : [])),
  );
  return {
    ...page,
    data: page.data.map((s) => ({
      ...s,
      countries: byId.get(s.countryid) ?? null,
      curriculums: (Array.isArray(s.curriculums) ? (s.curriculums as string[]) : []).map((id) => names.get(id) ?? null),
    })),
  };
}

/** School names are unique among all rows, deleted ones included (the table's constraint), whatever their case. */
async function nameTaken(db: Knex, name: string, except?: string): Promise<boolean> {
  const q = db('schools').whereRaw('lower(schoolname) = ?', [name.toLowerCase()]);
  if (except) q.whereNot({ schoolid: except });
  return !!(await q.first('schoolid'));
}

/**
 * The country must be a live one the caller works in; every curriculum a live one. A narrowed caller
 * also gives a school only curricula offered (curriculumcountry) in the school's country, as it
 * enrols learners (it sees no other); a curriculum the school already has may stay. An unnarrowed
 * caller places any live curriculum, as the existing system lets it.
 */
async function checkPlacement(
  db: Knex,
  scope: Scope,
  body: SchoolBody,
  held: readonly string[] = [],
): Promise<string[]> {
  const country = db('countries').where({ countryid: body.countryid, isdeleted: false });
  if (!(await applyScope(country, scope, { countryid: 'countryid' }).first('countryid')))
    throw httpError(400, 'Invalid country id');
  const curriculums = [...new Set(body.curriculums)];
  if (curriculums.length) {
    const found = await db('curriculums')
      .whereIn('curriculumid', curriculums)
      .where({ isdeleted: false })
      .select('curriculumid');
    if (found.length !== curriculums.length) throw httpError(400, 'Invalid curriculum id');
    const added = curriculums.filter((c) => !held.includes(c));
    if (!scope.all && added.length) {
      const offered = await db('curriculumcountry')
        .whereIn('curriculumid', added)
        .where({ countryid: body.countryid })
        .distinct('curriculumid');
      if (offered.length !== added.length) throw httpError(400, 'Invalid curriculum id');
    }
  }
  return curriculums;
}

export async function createSchool(db: Knex, scope: Scope, body: SchoolBody, by: string | null) {
  // A narrowed caller sees a new school only through a country it holds whole (its `countries` list alone):
  // one narrowed to schools would create a school it could then neither see nor correct.
  if (!scope.all && !scope.wholecountries.includes(body.countryid)) throw httpError(400, 'Invalid country id');
  const curriculums = await checkPlacement(db, scope, body);
  const schoolid = crypto.randomUUID();
  try {
    await db.transaction(async (trx) => {
      if (await nameTaken(trx, body.schoolname)) throw httpError(400, 'School already exists');
      await trx('schools').insert({
        schoolid,
        schoolname: body.schoolname,
        countryid: body.countryid,
        curriculums: JSON.stringify(curriculums),
        isdeleted: false,
        created_by: by,
        updated_by: by,
      });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw httpError(400, 'School already exists');
    throw err;
  }
  return db('schools').where({ schoolid }).first();
}

/**
 * Updates a school. Learners, school users, classes and fee records name their school by NAME, so a
 * rename is carried to them in the same transaction: otherwise every learner of a renamed school
 * would fall out of its lists, its teachers' sign-in and its fee records.
 */
export async function updateSchool(db: Knex, scope: Scope, schoolid: string, body: SchoolBody, by: string | null) {
  const school = await liveSchool(db, scope, schoolid);
  const curriculums = await checkPlacement(
    db,
    scope,
    body,
    Array.isArray(school.curriculums) ? (school.curriculums as string[]) : [],
  );
  const now = new Date().toISOString();
  try {
    await db.transaction(async (trx) => {
      if (await nameTaken(trx, body.schoolname, schoolid)) throw httpError(400, 'School already exists');
      await trx('schools').where({ schoolid }).update({
        schoolname: body.schoolname, countryid: body.countryid, curriculums: JSON.stringify(curriculums),
        ...(body.uitheme ? { uitheme: body.uitheme } : {}), updated_at: now, updated_by: by,
      });
      if (school.schoolname !== body.schoolname) {
        for (const table of ['students', 'schoolusers', 'standards'])
          await trx(table).where({ schoolname: school.schoolname }).update({ schoolname: body.schoolname });
        await trx('schoolcontributedata').where({ schoolid }).update({ schoolname: body.schoolname });
      }
      if (school.countryid !== body.countryid)
        await trx('schoolcontributedata').where({ schoolid }).update({ countryid: body.countryid });
    });
  } catch (err) {
    if (isUniqueViolation(err)) throw httpError(400, 'School already exists');
    throw err;
  }
  return db('schools').where({ schoolid }).first();
}

/** Soft delete; refused while the school has learners (their history stays with it). */
export async function deleteSchool(db: Knex, scope: Scope, schoolid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    const school = await liveSchool(trx, scope, schoolid);
    if (await trx('students').where({ schoolname: school.schoolname, isdeleted: false }).first('studentid')) {
      throw httpError(400, 'School has students assigned. School cannot be deleted');
    }
    await trx('schools')
      .where({ schoolid })
      .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  });
  return true;
}
