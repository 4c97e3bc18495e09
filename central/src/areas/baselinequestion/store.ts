import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';

const guid = z.string({ error: 'is required' }).uuid({ error: 'must be a valid GUID' });
export const baselineQuestionBody = strictBody({
  curriculumbaselineid: guid,
  questionid: guid,
  baselinequestionorder: z.number({ error: 'must be a number' }),
});
export const cloneBody = strictBody({ curriculumbaselineid: guid, clonecurriculumbaselineid: guid });
export const baselineQuestionParams = z.object({ baselinequestionid: guid });
export const orderParams = z.object({
  baselinequestionid: guid,
  baselinequestionorder: z.string().regex(/^-?\d{1,9}$/, { error: 'must be a number' }).transform(Number),
});
// Not validated in the original; bounded here.
export const listParams = z.object({ curriculumbaselineid: z.string().max(100) });

const MESSAGES = {
  baseline: 'Invalid curriculum Baseline',
  question: 'Invalid question id',
  added: 'Question already added to BaselineQuestion',
  targetFull: 'Curriculum Base Line already have question!',
  sourceEmpty: 'Curriculum Base Line have empty question!',
  invalid: 'Invalid BaselineQuestion ID',
} as const;

const liveBaseline = async (db: Knex, curriculumbaselineid: string) =>
  !!(await db('curriculumbaseline').where({ curriculumbaselineid, isdeleted: false }).first('curriculumbaselineid'));
const liveQuestions = (db: Knex, curriculumbaselineid: string) =>
  db('baselinequestion').where({ curriculumbaselineid, isdeleted: false });
const row = (db: Knex, baselinequestionid: string) => db('baselinequestion').where({ baselinequestionid }).first();

/** Adds a question to an assessment (active). A question removed earlier may be added again. */
export async function addBaselineQuestion(db: Knex, body: z.infer<typeof baselineQuestionBody>, by: string | null) {
  const baselinequestionid = crypto.randomUUID();
  await db.transaction(async (trx) => {
    if (!(await liveBaseline(trx, body.curriculumbaselineid))) throw httpError(400, MESSAGES.baseline);
    if (!(await trx('questions').where({ questionid: body.questionid, isdeleted: false }).first('questionid')))
      throw httpError(400, MESSAGES.question);
    if (
      await liveQuestions(trx, body.curriculumbaselineid)
        .where({ questionid: body.questionid })
        .first('baselinequestionid')
    )
      throw httpError(400, MESSAGES.added);
    const now = new Date().toISOString();
    await trx('baselinequestion').insert({
      baselinequestionid,
      curriculumbaselineid: body.curriculumbaselineid,
      questionid: body.questionid,
      baselinequestionstatus: true,
      baselinequestionorder: body.baselinequestionorder,
      isdeleted: false,
      created_at: now,
      created_by: by,
      updated_at: now,
      updated_by: by,
    });
  });
  return row(db, baselinequestionid);
}

/** Copies every live question of one assessment into another that has none, with new ids. */
export async function cloneBaselineQuestions(db: Knex, body: z.infer<typeof cloneBody>, by: string | null) {
  const ids: string[] = [];
  await db.transaction(async (trx) => {
    if (
      !(await liveBaseline(trx, body.curriculumbaselineid)) ||
      !(await liveBaseline(trx, body.clonecurriculumbaselineid))
    )
      throw httpError(400, MESSAGES.baseline);
    if (await liveQuestions(trx, body.clonecurriculumbaselineid).first('baselinequestionid'))
      throw httpError(400, MESSAGES.targetFull);
    const source = await liveQuestions(trx, body.curriculumbaselineid).orderBy([
      'baselinequestionorder',
      'baselinequestionid',
    ]);
    if (!source.length) throw httpError(400, MESSAGES.sourceEmpty);
    const now = new Date().toISOString();
    const copies = source.map((q) => {
      const baselinequestionid = crypto.randomUUID();
      ids.push(baselinequestionid);
      return {
        baselinequestionid,
        curriculumbaselineid: body.clonecurriculumbaselineid,
        questionid: q.questionid,
        baselinequestionstatus: q.baselinequestionstatus,
        baselinequestionorder: q.baselinequestionorder,
        isdeleted: false,
        created_at: now,
        created_by: by,
        updated_at: now,
        updated_by: by,
      };
    });
    for (let i = 0; i < copies.length; i += 500) await trx('baselinequestion').insert(copies.slice(i, i + 500));
  });
  const rows = [];
  for (let i = 0; i < ids.length; i += 500)
    rows.push(...(await db('baselinequestion').whereIn('baselinequestionid', ids.slice(i, i + 500))));
  const order = new Map(ids.map((id, i) => [id, i]));
  return rows.sort((a, b) => order.get(a.baselinequestionid)! - order.get(b.baselinequestionid)!);
}

async function change(db: Knex, baselinequestionid: string, patch: Record<string, unknown>): Promise<true> {
  const changed = await db('baselinequestion').where({ baselinequestionid, isdeleted: false }).update(patch);
  if (!changed) throw httpError(400, MESSAGES.invalid);
  return true;
}

export const setBaselineQuestionStatus = (db: Knex, id: string, status: boolean, by: string | null) =>
  change(db, id, { baselinequestionstatus: status, updated_at: new Date().toISOString(), updated_by: by });
export const setBaselineQuestionOrder = (db: Knex, id: string, order: number, by: string | null) =>
  change(db, id, { baselinequestionorder: order, updated_at: new Date().toISOString(), updated_by: by });
export const deleteBaselineQuestion = (db: Knex, id: string, by: string | null) =>
  change(db, id, { isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });

/**
 * An assessment's live questions in their order, with the assessment's name and type and each question's identifier.
 */
export async function listBaselineQuestions(db: Knex, curriculumbaselineid: string) {
  return readRows(
    db('baselinequestion as bq')
      .leftJoin('curriculumbaseline as b', 'b.curriculumbaselineid', 'bq.curriculumbaselineid')
      .leftJoin('questions as q', 'q.questionid', 'bq.questionid')
      .where({ 'bq.curriculumbaselineid': curriculumbaselineid, 'bq.isdeleted': false })
      .orderBy(['bq.baselinequestionorder', 'bq.baselinequestionid'])
      .select(
        'bq.baselinequestionid',
        'bq.curriculumbaselineid',
        'bq.questionid',
        'bq.baselinequestionstatus',
        'bq.baselinequestionorder',
        'b.baselinename',
        'b.baselinetype',
        'q.questionidentifier',
      ),
  );
}
