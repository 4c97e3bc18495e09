import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { guidParams, text } from '../../http/fields';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { now, writeTransaction } from '../../http/writes';

// "Alphanumeric" in any script: letters, their combining marks (Khmer vowel signs are marks) and digits.
// The original allowed ASCII only, which left the tag form unusable for Khmer and other scripts.
const ALPHANUMERIC = /^[\p{L}\p{M}\p{N}]+$/u;

export const questiontagParams = guidParams({ questiontagid: 'Question Tag ID' });
export const questiontagListBody = pagingBody(['questiontagname']);
export const questiontagBody = strictBody({
  questiontagname: text('Question Tag Name', {
    min: 3,
    max: 8,
    nonblank: true,
    pattern: { re: ALPHANUMERIC, message: 'must only contain alpha-numeric characters' },
  }),
});
type TagBody = z.infer<typeof questiontagBody>;

const INVALID = 'Invalid question tag id';
const EXISTS = 'Question tag already exists';

const live = (db: Knex, questiontagid: string) => db('questiontags').where({ questiontagid, isdeleted: false });

export async function getQuestiontag(db: Knex, questiontagid: string) {
  const row = await live(db, questiontagid).first();
  if (!row) throw httpError(400, INVALID);
  return row;
}

export async function listQuestiontags(db: Knex, body: Paging) {
  const base = db('questiontags').where({ isdeleted: false });
  applyFilters(base, body, (k) => k);
  return pageRows(base, body, [{ column: 'questiontagname' }, { column: 'questiontagid' }]);
}

async function nameTaken(trx: Knex, questiontagname: string, except?: string): Promise<boolean> {
  const q = trx('questiontags').where({ questiontagname, isdeleted: false });
  if (except) q.whereNot({ questiontagid: except });
  return !!(await q.first('questiontagid'));
}

/** New tags are stored trimmed and lower-cased (a rename keeps what was typed, as the original does). */
export async function createQuestiontag(db: Knex, body: TagBody, by: string | null) {
  const questiontagid = crypto.randomUUID();
  const questiontagname = body.questiontagname.trim().toLowerCase();
  await writeTransaction(db, EXISTS, async (trx) => {
    if (await nameTaken(trx, questiontagname)) throw httpError(400, EXISTS);
    await trx('questiontags').insert({
      questiontagid,
      questiontagname,
      isdeleted: false,
      created_by: by,
      updated_by: by,
    });
  });
  return getQuestiontag(db, questiontagid);
}

export async function updateQuestiontag(db: Knex, questiontagid: string, body: TagBody, by: string | null) {
  await writeTransaction(db, EXISTS, async (trx) => {
    if (!(await live(trx, questiontagid).first('questiontagid'))) throw httpError(400, INVALID);
    if (await nameTaken(trx, body.questiontagname, questiontagid)) throw httpError(400, EXISTS);
    await trx('questiontags')
      .where({ questiontagid })
      .update({ questiontagname: body.questiontagname, updated_at: now(), updated_by: by });
  });
  return getQuestiontag(db, questiontagid);
}

export async function deleteQuestiontag(db: Knex, questiontagid: string, by: string | null): Promise<true> {
  const n = await live(db, questiontagid).update({ isdeleted: true, deleted_at: now(), deleted_by: by });
  if (!n) throw httpError(400, INVALID);
  return true;
}
