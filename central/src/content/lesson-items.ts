import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError, type RouteInput } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../auth/validation';
import { actorOf } from '../http/context';
import { guid, number, order, text } from '../http/fields';
import type { CentralCtx } from '../http/types';
import { now, writeTransaction } from '../http/writes';
import { INVALID_LESSON, lockLessons } from '../areas/lesson/store';
import { recomputeLessons } from './points';

/**
 * The four kinds of lesson item — learnings, plans, practices and quizzes (contract §13a, §13b) — are
 * one family: the same eight routes over a table of their own. A kind names its columns, labels and
 * messages; `lessonItems(kind)` gives the routes' inputs and handlers. Learnings and plans show a
 * document (one per lesson); practices and quizzes carry a name unique in their lesson and may move
 * to another lesson. Learnings, practices and quizzes share out the lesson's points (§13): every write
 * to them, their order included (the last one takes the remainder), recomputes the lesson.
 */
export interface ItemKind {
  table: string;
  /** Column prefix: `lessonlearning` → lessonlearningid, lessonlearningname, … */
  prefix: string;
  labels: { id: string; name: string; description: string; order: string; points?: string };
  /** Learnings and plans point at a document, which may be added to a lesson once. */
  document: boolean;
  /** A component of the lesson's points. */
  scored: boolean;
  /** `PUT` moves it to the body's lesson (practices and quizzes); the others keep theirs. */
  moves: boolean;
  invalid: string;
  duplicate: string;
}

export const learningKind: ItemKind = {
  table: 'lessonlearnings',
  prefix: 'lessonlearning',
  labels: {
    id: 'Lesson Learning ID',
    name: 'Lesson Learning Name',
    description: 'Lesson Learning Description',
    order: 'Lesson Learning order',
  },
  document: true,
  scored: true,
  moves: false,
  invalid: 'Invalid lesson learning id',
  duplicate: 'Learning document already added to lesson',
};
export const planKind: ItemKind = {
  table: 'lessonplans',
  prefix: 'lessonplan',
  labels: {
    id: 'Lesson Plan ID',
    name: 'Lesson Plan Name',
    description: 'Lesson Plan Description',
    order: 'Lesson Plan order',
  },
  document: true,
  scored: false,
  moves: false,
  invalid: 'Invalid lesson plan id',
  duplicate: 'Plan document already added to lesson',
};
export const practiceKind: ItemKind = {
  table: 'lessonpractices',
  prefix: 'lessonpractice',
  labels: {
    id: 'Lesson Practice ID',
    name: 'Lesson Practice Name',
    description: 'Lesson Practice Description',
    order: 'Lesson Practice order',
    points: 'Lesson Practice Points',
  },
  document: false,
  scored: true,
  moves: true,
  invalid: 'Invalid lesson practice id',
  duplicate: 'Practice name already added to lesson',
};
export const quizKind: ItemKind = {
  table: 'lessonquizzes',
  prefix: 'lessonquiz',
  labels: {
    id: 'Lesson Quiz ID',
    name: 'Lesson Quiz Name',
    description: 'Lesson Quiz Description',
    order: 'Lesson Quiz order',
    points: 'Lesson Quiz Points',
  },
  document: false,
  scored: true,
  moves: true,
  invalid: 'Invalid lesson quiz id',
  duplicate: 'Quiz name already added to lesson',
};

const INVALID_DOCUMENT = 'Invalid document id';

/** The question links that go with a practice or quiz when it is removed. */
const LINKS: Record<string, { table: string; parent: string }> = {
  lessonpractices: { table: 'lessonpracticequestions', parent: 'lessonpracticeid' },
  lessonquizzes: { table: 'lessonquizquestions', parent: 'lessonquizid' },
};

export function lessonItems(kind: ItemKind) {
  const p = kind.prefix;
  const col = {
    id: `${p}id`,
    name: `${p}name`,
    description: `${p}description`,
    status: `${p}status`,
    order: `${p}order`,
  };
  const idField = { [col.id]: guid(kind.labels.id) };
  const lessonid = guid('Lesson ID');
  const name = text(kind.labels.name, { min: 3, max: 100 });
  const description = text(kind.labels.description);
  const documentid = guid('Document ID');
  // Sent by the admin UI and required, then ignored: the points model sets them.
  const points = number(kind.labels.points ?? 'Points');

  const createBody = strictBody({
    ...(kind.document ? { documentid } : {}),
    [col.name]: name,
    [col.description]: description,
    [col.order]: order(kind.labels.order),
    ...(kind.labels.points ? { points } : {}),
  });
  const updateBody = strictBody({
    lessonid,
    ...(kind.document ? { documentid } : {}),
    [col.name]: name,
    [col.description]: description,
    ...(kind.labels.points ? { points } : {}),
  });
  type Body = Record<string, unknown> & { lessonid?: string; documentid?: string };

  const inputs = {
    list: { params: z.object({ lessonid }) },
    one: { params: z.object({ lessonid, ...idField }) },
    create: { params: z.object({ lessonid }), body: createBody },
    id: { params: z.object(idField) },
    order: { params: z.object({ ...idField, [col.order]: order(kind.labels.order) }) },
    update: { params: z.object(idField), body: updateBody },
  } satisfies Record<string, RouteInput>;

  /** The item as the admin UI reads it: its columns with its lesson's name and description (and its document's). */
  const itemQuery = (db: Knex) => {
    const q = db(`${kind.table} as i`).join('lessons as l', 'l.lessonid', 'i.lessonid');
    const columns = [`i.${col.id}`, `i.${col.name}`, `i.${col.description}`, 'i.lessonid'];
    if (kind.document) {
      q.leftJoin('documents as d', 'd.documentid', 'i.documentid');
      columns.push(
        'i.documentid',
        `i.${col.status}`,
        `i.${col.order}`,
        'l.lessonname',
        'l.lessondescription',
        'd.documentname',
        'd.documenttypeid',
      );
    } else {
      columns.push(`i.${col.status}`, `i.${col.order}`, 'l.lessonname', 'l.lessondescription', 'i.points');
    }
    return q.select(columns);
  };

  /** Problems with the lesson and document a write names, all of them (the original joins its rule messages). */
  async function checkRefs(trx: Knex, lessonOk: boolean, body: Body): Promise<void> {
    const problems: string[] = [];
    if (!lessonOk) problems.push(INVALID_LESSON);
    if (
      kind.document &&
      !(await trx('documents').where({ documentid: body.documentid, isdeleted: false }).first('documentid'))
    )
      problems.push(INVALID_DOCUMENT);
    if (problems.length) throw httpError(400, problems.join(', '));
  }

  /**
   * The lesson already holds the document (learnings, plans) or an item of that name, case aside (practices, quizzes).
   */
  async function taken(trx: Knex, lesson: string, body: Body, except?: string): Promise<boolean> {
    const q = trx(kind.table).where({ lessonid: lesson });
    if (kind.document) q.where({ documentid: body.documentid });
    else q.whereRaw('lower(??) = lower(?)', [col.name, body[col.name] as string]);
    if (except) q.whereNot({ [col.id]: except });
    return !!(await q.first(col.id));
  }

  async function existing(trx: Knex, id: string): Promise<{ lessonid: string }> {
    const row = await trx(kind.table).where({ [col.id]: id }).first('lessonid');
    if (!row) throw httpError(400, kind.invalid);
    return row as { lessonid: string };
  }

  /**
   * A new, active item of the lesson (`body`: the create body as its schema gave it); the lesson's
   * points spread again. `id`: given by the demo seed, whose rows have fixed ids; a request's item
   * gets a new one.
   */
  function add(
    db: Knex,
    lessonid: string,
    input: Record<string, unknown>,
    by: string | null,
    id: string = crypto.randomUUID(),
  ): Promise<true> {
    const body = input as Body;
    return writeTransaction(db, kind.duplicate, async (trx) => {
      const lessons = await lockLessons(trx, [lessonid]);
      await checkRefs(trx, lessons.has(lessonid), body);
      if (await taken(trx, lessonid, body)) throw httpError(400, kind.duplicate);
      await trx(kind.table).insert({
        [col.id]: id,
        lessonid,
        ...(kind.document ? { documentid: body.documentid } : {}),
        [col.name]: body[col.name],
        [col.description]: body[col.description],
        [col.order]: body[col.order],
        [col.status]: true,
        points: 0,
        created_by: by,
        updated_by: by,
      });
      if (kind.scored) await recomputeLessons(trx, [lessonid]);
      return true as const;
    });
  }

  return {
    inputs,
    add,

    /** GET `…/:lessonid`: the lesson's items by order, in one query once the lesson is known. */
    async list({ db, params }: CentralCtx<typeof inputs.list>) {
      const [lesson] = await readRows(
        db('lessons').where({ lessonid: params.lessonid, isdeleted: false }).select('lessonid').limit(1),
      );
      if (!lesson) throw httpError(400, INVALID_LESSON);
      return readRows(
        itemQuery(db)
          .where('i.lessonid', params.lessonid)
          .orderBy([{ column: `i.${col.order}` }, { column: `i.${col.id}` }]),
      );
    },

    /** GET `…/:lessonid/:id`: one item of that lesson. */
    async one({ db, params }: CentralCtx<typeof inputs.one>) {
      const [row] = await readRows(
        itemQuery(db)
          .where({ [`i.${col.id}`]: (params as Record<string, string>)[col.id], 'i.lessonid': params.lessonid })
          .limit(1),
      );
      if (!row) throw httpError(400, kind.invalid);
      return row;
    },


    /** POST `…/:lessonid`. */
    create({ db, params, body, caller }: CentralCtx<typeof inputs.create>) {
      return add(db, params.lessonid, body, actorOf(caller));
    },

    /** PUT `…/activate/:id`, `…/deactivate/:id`. */
    status(value: boolean) {
      return async ({ db, params }: CentralCtx<typeof inputs.id>) => {
        const n = await db(kind.table).where({ [col.id]: params[col.id] }).update({ [col.status]: value });
        if (!n) throw httpError(400, kind.invalid);
        return true;
      };
    },

    /** PUT `…/order/:id/:order`: sets that item's order and nothing else's (the remainder may change hands). */
    order({ db, params }: CentralCtx<typeof inputs.order>) {
      return writeTransaction(db, undefined, async (trx) => {
        const item = await existing(trx, params[col.id] as string);
        if (kind.scored) await lockLessons(trx, [item.lessonid]);
        await trx(kind.table).where({ [col.id]: params[col.id] }).update({ [col.order]: params[col.order] });
        if (kind.scored) await recomputeLessons(trx, [item.lessonid]);
        return true;
      });
    },

    /**
     * PUT `…/:id`: name and description (and document, for learnings and plans; the lesson, for practices
     * and quizzes, whose points are then spread again in both lessons).
     */
    update({ db, params, body: input, caller }: CentralCtx<typeof inputs.update>) {
      const id = params[col.id] as string;
      const body = input as Body;
      return writeTransaction(db, kind.duplicate, async (trx) => {
        const item = await existing(trx, id);
        const target = kind.moves ? (body.lessonid as string) : item.lessonid;
        const lessons = await lockLessons(trx, [item.lessonid, target]);
        await checkRefs(trx, lessons.has(target), body);
        if (await taken(trx, target, body, id)) throw httpError(400, kind.duplicate);
        await trx(kind.table).where({ [col.id]: id }).update({
          ...(kind.moves ? { lessonid: target } : {}),
          ...(kind.document ? { documentid: body.documentid } : {}),
          [col.name]: body[col.name],
          [col.description]: body[col.description],
          updated_at: now(),
          updated_by: actorOf(caller),
        });
        if (kind.scored) await recomputeLessons(trx, [item.lessonid, target]);
        return true;
      });
    },

    /**
     * DELETE `…/:id`: the row is removed (with a practice's or
     * quiz's question links); the lesson's points spread again.
     */
    remove({ db, params }: CentralCtx<typeof inputs.id>) {
      const id = params[col.id] as string;
      return writeTransaction(db, undefined, async (trx) => {
        const item = await existing(trx, id);
        if (kind.scored) await lockLessons(trx, [item.lessonid]);
        const links = LINKS[kind.table];
        if (links) await trx(links.table).where({ [links.parent]: id }).del();
        await trx(kind.table).where({ [col.id]: id }).del();
        if (kind.scored) await recomputeLessons(trx, [item.lessonid]);
        return true;
      });
    },
  };
}
