import crypto from 'node:crypto';
import { isUniqueViolation, type Knex } from '@lms/db';
import { httpError, streamToBuffer, writeTeachersZip } from '@lms/shared';
import { z } from 'zod';
import { hashSchoolUserPassword, type SchoolUserPasswordFormat } from '../../auth/passwords';
import { revokeAll } from '../../auth/tokens';
import { strictBody, uuidParam } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';
import { pushRoster, takenUsernames } from '../student/store';

const TEACHER = 3;

const alnum = (min: number, max: number) =>
  z.string({ error: 'is required' })
    .min(min, { error: `length must be at least ${min} characters long` })
    .max(max, { error: `length must be less than or equal to ${max} characters long` })
    .regex(/^[A-Za-z0-9]+$/, { error: 'must only contain alpha-numeric characters' });

export const createTeachersBody = strictBody({
  schoolname: z.string({ error: 'is required' }).min(1, { error: 'is not allowed to be empty' }),
  teachers: z
    .array(strictBody({ schoolusername: alnum(2, 16), schooluserpasswordhash: alnum(1, 16) }))
    .min(1, { error: 'must contain at least 1 items' })
    .max(500, { error: 'must contain less than or equal to 500 items' }),
});
export const createTeachersQuery = z.looseObject({ cloud: z.string().optional() });
export const teacherListBody = pagingBody(['schoolname', 'schoolusername'], { maxFilters: 6 });
export const teacherParams = uuidParam('schooluserid', 'must be a valid GUID');

// Everything of a teacher's school user row but its password hash.
const COLUMNS = [
  'schooluserid',
  'schoolusername',
  'schooluserrole',
  'schooluserstatus',
  'schoolname',
  'isdisabled',
  'isdeleted',
  'created_at',
  'created_by',
  'updated_at',
  'updated_by',
  'deleted_at',
  'deleted_by',
];

/** The Teachers page: live teacher accounts of the caller's schools, by school then username. */
export async function listTeachers(db: Knex, scope: Scope, body: Paging) {
  const base = db('schoolusers').where({ schooluserrole: TEACHER, isdeleted: false });
  applyFilters(base, body, (k) => k);
  applyScope(base, scope, { schoolname: 'schoolname' });
  return pageRows(
    base,
    body,
    [{ column: 'schoolname' }, { column: 'schoolusername' }, { column: 'schooluserid' }],
    COLUMNS,
  );
}

/** Soft-deletes a teacher account of the caller's schools and ends its sign-ins; the username stays taken. */
export async function deleteTeacher(db: Knex, scope: Scope, schooluserid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    const teacher = await applyScope(trx('schoolusers').where({ schooluserid, schooluserrole: TEACHER }), scope, {
      schoolname: 'schoolname',
    }).first('isdeleted');
    if (!teacher) throw httpError(400, 'Invalid teacher user id');
    if (teacher.isdeleted) throw httpError(400, 'Teacher already deleted or not found');
    await trx('schoolusers')
      .where({ schooluserid })
      .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
    await revokeAll(trx, schooluserid);
  });
  return true;
}

/**
 * Teacher school users (role 3) of one school of the caller's, all or nothing; `cloud` also pushes
 * them to the classroom server before the transaction commits. Usernames are free whatever their case,
 * checked again inside the transaction; a concurrent request that took one answers the same 400.
 */
export async function createTeachers(
  db: Knex,
  scope: Scope,
  config: { rpiCloud: string; serverSyncKey: string; schoolUserPasswordFormat: SchoolUserPasswordFormat },
  body: z.infer<typeof createTeachersBody>,
  cloud: boolean,
  by: string | null,
): Promise<true> {
  const school = await applyScope(db('schools').where({ schoolname: body.schoolname, isdeleted: false }), scope, {
    schoolid: 'schoolid',
  }).first('schoolid', 'schoolname');
  if (!school) throw httpError(400, 'Invalid School Name');
  const names = body.teachers.map((t) => t.schoolusername);
  const refuse = (taken: string[]) => {
    if (taken.length) throw httpError(400, `Teachers already exists, ${taken.join(',')}`);
  };
  refuse(await takenUsernames(db, names));
  const hashes = await Promise.all(
    body.teachers.map((t) => hashSchoolUserPassword(t.schooluserpasswordhash, config.schoolUserPasswordFormat)),
  );
  const rows = body.teachers.map((t, i) => ({
    schooluserid: crypto.randomUUID(),
    schoolusername: t.schoolusername,
    schooluserpasswordhash: hashes[i],
    schooluserrole: TEACHER,
    schooluserstatus: true,
    schoolname: school.schoolname,
    created_by: by,
    updated_by: by,
  }));
  try {
    await db.transaction(async (trx) => {
      refuse(await takenUsernames(trx, names));
      await trx.batchInsert('schoolusers', rows, 200);
      if (cloud) await pushRoster(config, '/import/teachers', await streamToBuffer(writeTeachersZip(rows)));
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    refuse(await takenUsernames(db, names));
    throw err;
  }
  return true;
}

