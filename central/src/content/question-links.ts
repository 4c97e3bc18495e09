import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError, type RouteInput } from '@lms/shared';
import { z } from 'zod';
import { guid, order } from '../http/fields';
import type { CentralCtx } from '../http/types';
import { writeTransaction } from '../http/writes';

/**
 * The three links of a question from the bank to what asks it — a practice, a lesson quiz, a level's
 * quiz (contract §13c, §14a) — are one family: list by parent, link at an order, activate, deactivate,
 * reorder, remove. A kind names its tables, labels and messages; `questionLinks(kind)` gives the routes'
 * inputs and handlers. A question is linked to one parent once.
 */
export interface LinkKind {
  table: string;
  /** Column prefix: `lessonpracticequestion` → lessonpracticequestionid, …status, …order. */
  prefix: string;
  label: string;
  invalid: string;
  duplicate: string;
  parent: {
    table: string;
    id: string;
    label: string;
    invalid: string;
    /** Levels are soft-deleted: a deleted one takes no links. */
    softDeleted: boolean;
  };
  /** The listed item: the link's columns with what the admin UI shows of its parent and question. */
  listQuery(db: Knex): Knex.QueryBuilder;
  shape?(row: Record<string, unknown>): Record<string, unknown>;
}

export const practiceQuestionKind: LinkKind = {
  table: 'lessonpracticequestions',
  prefix: 'lessonpracticequestion',
  label: 'Lesson Practice Question ID',
  invalid: 'Invalid Lesson practice question id',
  duplicate: 'Question already added to lesson practice',
  parent: {
    table: 'lessonpractices',
    id: 'lessonpracticeid',
    label: 'Lesson Practice ID',
    invalid: 'Invalid lesson practice id',
    softDeleted: false,
  },
  listQuery: (db) =>
    db('lessonpracticequestions as x')
      .join('lessonpractices as p', 'p.lessonpracticeid', 'x.lessonpracticeid')
      .leftJoin('lessons as l', 'l.lessonid', 'p.lessonid')
      .leftJoin('questions as q', 'q.questionid', 'x.questionid')
      .select(
        'p.lessonid',
        'l.lessonname',
        'x.lessonpracticequestionid',
        'x.lessonpracticeid',
        'x.questionid',
        'x.lessonpracticequestionstatus',
        'x.lessonpracticequestionorder',
        'p.lessonpracticename',
        'q.questionidentifier',
      ),
};

export const quizQuestionKind: LinkKind = {
  table: 'lessonquizquestions',
  prefix: 'lessonquizquestion',
  label: 'Lesson Quiz Question ID',
  invalid: 'Invalid Lesson quiz question id',
  duplicate: 'Question already added to lesson quiz',
  parent: {
    table: 'lessonquizzes',
    id: 'lessonquizid',
    label: 'Lesson Quiz ID',
    invalid: 'Invalid lesson quiz id',
    softDeleted: false,
  },
  listQuery: (db) =>
    db('lessonquizquestions as x')
      .join('lessonquizzes as p', 'p.lessonquizid', 'x.lessonquizid')
      .leftJoin('lessons as l', 'l.lessonid', 'p.lessonid')
      .leftJoin('questions as q', 'q.questionid', 'x.questionid')
      .select(
        'p.lessonid',
        'l.lessonname',
        'x.lessonquizquestionid',
        'x.lessonquizid',
        'x.questionid',
        'x.lessonquizquestionstatus',
        'x.lessonquizquestionorder',
        'p.lessonquizname',
        'q.questionidentifier',
      ),
};

export const levelQuizQuestionKind: LinkKind = {
  table: 'levelquizquestions', prefix: 'levelquizquestion', label: 'Level Quiz Question ID',
  invalid: 'Invalid Level quiz question id', duplicate: 'Question already added to level',
  parent: { table: 'levels', id: 'levelid', label: 'Level ID', invalid: 'Invalid Level id', softDeleted: true },
  listQuery: (db) =>
    db('levelquizquestions as x')
      .join('levels as p', 'p.levelid', 'x.levelid')
      .leftJoin('questions as q', 'q.questionid', 'x.questionid')
      .leftJoin('lessons as l', 'l.lessonid', 'x.lessonid')
      .select(
        'x.levelquizquestionid',
        'x.levelid',
        'x.questionid',
        'x.levelquizquestionstatus',
        'x.levelquizquestionorder',
        'p.levelname',
        'p.leveldescription',
        'q.questionidentifier',
        'l.lessonid as lesson_lessonid',
        'l.lessonname as lesson_lessonname',
      ),
  // The lesson the link is tied to, as an object (null when none is set or it is gone).
  shape: ({ lesson_lessonid, lesson_lessonname, ...row }) => ({
    ...row,
    lesson: lesson_lessonid ? { lessonid: lesson_lessonid, lessonname: lesson_lessonname } : null,
  }),
};

const INVALID_QUESTION = 'Invalid question id';
const INVALID_LESSON = 'Invalid Lesson id';

export function questionLinks(kind: LinkKind) {
  const col = { id: `${kind.prefix}id`, status: `${kind.prefix}status`, order: `${kind.prefix}order` };
  const parentid = kind.parent.id;
  const idField = { [col.id]: guid(kind.label) };
  const questionOrder = order('Question order');

  const inputs = {
    list: { params: z.object({ [parentid]: guid(kind.parent.label) }) },
    create: {
      params: z.object({
        [parentid]: guid(kind.parent.label),
        questionid: guid('Question ID'),
        [col.order]: questionOrder,
      }),
    },
    id: { params: z.object(idField) },
    order: { params: z.object({ ...idField, [col.order]: questionOrder }) },
  } satisfies Record<string, RouteInput>;

  const liveParent = (db: Knex, id: string) => {
    const q = db(kind.parent.table).where({ [parentid]: id });
    if (kind.parent.softDeleted) q.where({ isdeleted: false });
    return q.select(parentid).limit(1);
  };
  const shape = (rows: Array<Record<string, unknown>>) => (kind.shape ? rows.map(kind.shape) : rows);

  async function update(db: Knex, id: string, values: Record<string, unknown>): Promise<true> {
    const n = await db(kind.table).where({ [col.id]: id }).update(values);
    if (!n) throw httpError(400, kind.invalid);
    return true;
  }

  /**
   * An active link of the question to the parent at an order. `id`: given by the demo seed, whose rows
   * have fixed ids; a request's link gets a new one.
   */
  function add(
    db: Knex,
    parent: string,
    questionid: string,
    order: number,
    id: string = crypto.randomUUID(),
  ): Promise<true> {
    return writeTransaction(db, kind.duplicate, async (trx) => {
      const problems: string[] = [];
      if (!(await liveParent(trx, parent)).length) problems.push(kind.parent.invalid);
      if (!(await trx('questions').where({ questionid, isdeleted: false }).first('questionid')))
        problems.push(INVALID_QUESTION);
      if (problems.length) throw httpError(400, problems.join(', '));
      if (
        await trx(kind.table)
          .where({ [parentid]: parent, questionid })
          .first(col.id)
      )
        throw httpError(400, kind.duplicate);
      await trx(kind.table).insert({
        [col.id]: id,
        [parentid]: parent,
        questionid,
        [col.status]: true,
        [col.order]: order,
      });
      return true as const;
    });
  }

  return {
    inputs,
    add,

    /** GET `…/:parentid`: the parent's links by order, in one query once the parent is known. */
    async list({ db, params }: CentralCtx<typeof inputs.list>) {
      if (!(await readRows(liveParent(db, params[parentid]))).length) throw httpError(400, kind.parent.invalid);
      return shape(
        await readRows(
          kind
            .listQuery(db)
            .where(`x.${parentid}`, params[parentid])
            .orderBy([{ column: `x.${col.order}` }, { column: `x.${col.id}` }]),
        ),
      );
    },


    /** POST `…/:parentid/:questionid/:order`. */
    create({ db, params }: CentralCtx<typeof inputs.create>) {
      return add(db, params[parentid] as string, params.questionid as string, params[col.order] as number);
    },

    /** PUT `…/activate/:id`, `…/deactivate/:id`. */
    status(value: boolean) {
      return ({ db, params }: CentralCtx<typeof inputs.id>) =>
        update(db, params[col.id] as string, { [col.status]: value });
    },

    /** PUT `…/order/:id/:order`: that link's order and nothing else's. */
    order({ db, params }: CentralCtx<typeof inputs.order>) {
      return update(db, params[col.id] as string, { [col.order]: params[col.order] });
    },

    /** DELETE `…/:id`: the link is removed. */
    async remove({ db, params }: CentralCtx<typeof inputs.id>) {
      const n = await db(kind.table).where({ [col.id]: params[col.id] }).del();
      if (!n) throw httpError(400, kind.invalid);
      return true;
    },
  };
}

/**
 * `PUT /level/quiz/question/setlesson/:levelquizquestionid` — the lesson a level-quiz question reviews:
 * a live lesson of the link's own level, or none (`null` or `''`).
 */
export const setLessonInput = {
  params: z.object({ levelquizquestionid: guid('Level Quiz Question ID') }),
  body: z.looseObject({
    lessonid: z.union([z.literal(''), z.null(), guid('Lesson ID')], {
    error: (iss) => (iss.input === undefined ? '"Lesson ID" is required' : '"Lesson ID" must be a valid GUID'),
  }),
  }),
} satisfies RouteInput;

/** Ties a level-quiz question to a live lesson of its level, or to none (`null`). */
export function setLevelQuizLesson(db: Knex, levelquizquestionid: string, lessonid: string | null): Promise<true> {
  return writeTransaction(db, undefined, async (trx) => {
    const link = await trx('levelquizquestions').where({ levelquizquestionid }).first('levelid');
    if (!link) throw httpError(400, levelQuizQuestionKind.invalid);
    if (
      lessonid &&
      !(await trx('lessons').where({ lessonid, levelid: link.levelid, isdeleted: false }).first('lessonid'))
    )
      throw httpError(400, INVALID_LESSON);
    await trx('levelquizquestions').where({ levelquizquestionid }).update({ lessonid });
    return true as const;
  });
}

export function setLesson({ db, params, body }: CentralCtx<typeof setLessonInput>) {
  return setLevelQuizLesson(db, params.levelquizquestionid, body.lessonid ? (body.lessonid as string) : null);
}
