import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError, streamToBuffer, writeTeachersZip } from '@lms/shared';
import { z } from 'zod';
import { hashPassword } from '../../auth/passwords';
import { strictBody } from '../../auth/validation';
import { pushRoster, takenUsernames } from '../student/store';

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

/** Teacher school users (role 3) of one school, all or nothing; `cloud` also pushes them to the classroom server. */
export async function createTeachers(
  db: Knex,
  config: { rpiCloud: string; serverSyncKey: string },
  body: z.infer<typeof createTeachersBody>,
  cloud: boolean,
  by: string | null,
): Promise<true> {
  const school = await db('schools').where({ schoolname: body.schoolname, isdeleted: false }).first('schoolid');
  if (!school) throw httpError(400, 'Invalid School Name');
  const taken = await takenUsernames(db, body.teachers.map((t) => t.schoolusername));
  if (taken.length) throw httpError(400, `Teachers already exists, ${taken.join(',')}`);
  const hashes = await Promise.all(body.teachers.map((t) => hashPassword(t.schooluserpasswordhash)));
  const rows = body.teachers.map((t, i) => ({
    schooluserid: crypto.randomUUID(),
    schoolusername: t.schoolusername,
    schooluserpasswordhash: hashes[i],
    schooluserrole: 3,
    schooluserstatus: true,
    schoolname: body.schoolname,
    created_by: by,
  }));
  await db.transaction(async (trx) => {
    await trx.batchInsert('schoolusers', rows, 200);
    if (cloud) await pushRoster(config, '/import/teachers', await streamToBuffer(writeTeachersZip(rows)));
  });
  return true;
}
