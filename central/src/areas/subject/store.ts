import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { description, guidParams, text } from '../../http/fields';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { locked, now, writeTransaction } from '../../http/writes';

export const subjectParams = guidParams({ subjectid: 'Subject ID' });
export const subjectListBody = pagingBody(['subjectname']);
export const subjectBody = strictBody({
  subjectname: text('Subject Name', { min: 3, max: 25, nonblank: true }),
  subjectdescription: description('Subject Description', 3, 100),
});
type SubjectBody = z.infer<typeof subjectBody>;

const INVALID = 'Invalid subject id';
const EXISTS = 'Subject already exists';

const live = (db: Knex, subjectid: string) => db('subjects').where({ subjectid, isdeleted: false });

export async function getSubject(db: Knex, subjectid: string) {
  const row = await live(db, subjectid).first();
  if (!row) throw httpError(400, INVALID);
  return row;
}

export async function listSubjects(db: Knex, body: Paging) {
  const base = db('subjects').where({ isdeleted: false });
  applyFilters(base, body, (k) => k);
  return pageRows(base, body, [{ column: 'subjectname' }, { column: 'subjectid' }]);
}

async function nameTaken(trx: Knex, subjectname: string, except?: string): Promise<boolean> {
  const q = trx('subjects').where({ subjectname, isdeleted: false });
  if (except) q.whereNot({ subjectid: except });
  return !!(await q.first('subjectid'));
}

/** `subjectid`: given by the demo seed, whose rows have fixed ids; a request's subject gets a new one. */
export async function createSubject(
  db: Knex,
  body: SubjectBody,
  by: string | null,
  subjectid: string = crypto.randomUUID(),
) {
  await writeTransaction(db, EXISTS, async (trx) => {
    if (await nameTaken(trx, body.subjectname)) throw httpError(400, EXISTS);
    await trx('subjects').insert({
      subjectid,
      subjectname: body.subjectname,
      subjectdescription: body.subjectdescription ?? null,
      subjectstatus: true,
      isdeleted: false,
      created_by: by,
      updated_by: by,
    });
  });
  return getSubject(db, subjectid);
}

export async function updateSubject(db: Knex, subjectid: string, body: SubjectBody, by: string | null) {
  await writeTransaction(db, EXISTS, async (trx) => {
    if (!(await live(trx, subjectid).first('subjectid'))) throw httpError(400, INVALID);
    if (await nameTaken(trx, body.subjectname, subjectid)) throw httpError(400, EXISTS);
    await trx('subjects')
      .where({ subjectid })
      .update({
        subjectname: body.subjectname,
        subjectdescription: body.subjectdescription ?? null,
        updated_at: now(),
        updated_by: by,
      });
  });
  return getSubject(db, subjectid);
}

/** A subject that a live curriculum teaches stays (the curriculum would lose its subject's name). */
export async function deleteSubject(db: Knex, subjectid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    // Locked against a curriculum being given this subject meanwhile (which share-locks it).
    if (!(await locked(trx, live(trx, subjectid), 'update').first('subjectid'))) throw httpError(400, INVALID);
    if (await trx('curriculums').where({ subjectid, isdeleted: false }).first('curriculumid'))
      throw httpError(400, 'Subject is assigned to a curriculum.');
    await trx('subjects').where({ subjectid }).update({ isdeleted: true, deleted_at: now(), deleted_by: by });
  });
  return true;
}
