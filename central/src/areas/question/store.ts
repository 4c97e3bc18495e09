import crypto from 'node:crypto';
import { containsPattern, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { guid, integer, text } from '../../http/fields';
import { filterValues, pageRows, pagingBody, whereEach, type Paging } from '../../http/paging';
import { now, writeTransaction } from '../../http/writes';
import { requireUsedWithin } from '../../http/scope';
import type { Caller } from '../../http/types';

/**
 * The question bank. A question's content lives in JSON columns (heading, options, distractors, file,
 * tags); each template type (1..24) uses a subset of them and the admin UI's editor decides which, so the
 * body is checked for the shape of each part, not for what a template needs. Parts are stored as sent,
 * except that every option gets a new id (copied into its associate) as the original did.
 */

const INVALID = 'Invalid question id';
const EXISTS = 'Question identifier already exists';
export const TEMPLATE_TYPES = 24;

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();
const str = z.string({ error: 'must be a string' });
const bool = z.boolean({ error: 'must be a boolean' });
const num = z.number({ error: 'must be a number' });

/** `{filetype, filename, fileext}` of a media file; more keys are kept. */
const fileMeta = z.looseObject(
  { filename: nullable(str), fileext: nullable(str), filetype: nullable(num) },
  { error: 'must be an object' },
);

const option = z.looseObject(
  {
    questionoptionid: nullable(str),
    questionoptionfile: nullable(fileMeta),
    questionoptiontext: nullable(str),
    questionoptioniscorrect: nullable(bool),
    questionoptionsequence: nullable(num),
    questionassociate: nullable(
      z.looseObject(
        {
          questionoptionid: nullable(str),
          questionassociatefile: nullable(fileMeta),
          questionassociatetext: nullable(str),
        },
        { error: 'must be an object' },
      ),
    ),
    questionoptionisstaticfile: nullable(bool),
    questionoptionvalue: nullable(z.union([num, str], { error: 'must be a number' })),
    questionoptionnumeratorvalue: nullable(z.union([str, num], { error: 'must be a string' })),
    questionoptionnumeratorisstatic: nullable(bool),
    questionoptiondenominatorvalue: nullable(z.union([str, num], { error: 'must be a string' })),
    questionoptiondenominatorisstatic: nullable(bool),
    questionoptionisfraction: nullable(bool),
    questionoptionistext: nullable(bool),
  },
  { error: 'must be an object' },
);

/** A tag in the body's list, named by its place (`"questiontags.0" must be a string`). */
const tag = z
  .string({ error: 'must be a string' })
  .min(1, { error: 'is not allowed to be empty' })
  .max(100, { error: 'length must be less than or equal to 100 characters long' });
const IDENTIFIER = { min: 3, max: 100, nonblank: true };

/** Longest feedback message: a sentence or two on a tablet screen, with room for any script. */
export const FEEDBACK_MAX = 1000;
const tooLong = `length must be less than or equal to ${FEEDBACK_MAX} characters long`;
const message = nullable(str.max(FEEDBACK_MAX, { error: tooLong }));

/** What the learner app shows after a right or a wrong answer; other keys are dropped, so its size is bounded. */
const feedback = z.object({ correctmessage: message, incorrectmessage: message }, { error: 'must be an object' });

/** Create and update: unknown keys are allowed (the editor sends the whole question back) and ignored. */
export const questionBody = z.looseObject({
  questionidentifier: text('Question identifier', IDENTIFIER),
  templatetypeid: integer('templatetypeid', { min: 1, max: TEMPLATE_TYPES }),
  questionheading: nullable(
    z.looseObject({ headingtext: nullable(str), headingfile: nullable(fileMeta) }, { error: 'must be an object' }),
  ),
  questionoptions: nullable(z.array(option, { error: 'must be an array' })),
  questiontext: nullable(str),
  questiondistractors: nullable(
    z.array(
      z.looseObject(
        { questiondistractorid: nullable(str), questiondistractortext: nullable(str) },
        { error: 'must be an object' },
      ),
      { error: 'must be an array' },
    ),
  ),
  questionfile: nullable(fileMeta),
  questiontags: nullable(z.array(tag, { error: 'must be an array' })),
  questioncorrectvalue: nullable(integer('questioncorrectvalue')),
  questionfeedback: nullable(feedback),
});
type QuestionBody = z.infer<typeof questionBody>;

export const questionParams = z.object({ questionid: guid('Question ID') });
export const tagParams = z.object({ questionid: guid('Question ID'), tag: text('Tag', { max: 100 }) });
export const identifierParams = z.object({
  questionid: guid('Question ID'),
  questionidentifier: text('Question identifier', IDENTIFIER),
});

const FILTER_KEYS = ['questionidentifier', 'questiontags', 'questionstatus', 'templatetypeid'] as const;
export const questionListBody = pagingBody([...FILTER_KEYS], {
  unknownAllowed: true,
  exact: ['questionstatus', 'templatetypeid'],
});

/** A JSON column's value as stored: SQL NULL for nothing, else its JSON text (jsonb on PostgreSQL). */
const json = (v: unknown) => (v === undefined || v === null ? null : JSON.stringify(v));

/** Every option gets a new id, unless `keep` and it has one (the demo seed's options have fixed ids). */
function withOptionIds(options: QuestionBody['questionoptions'], keep: boolean) {
  if (!options) return options;
  return options.map((o) => {
    const questionoptionid = keep && o.questionoptionid ? o.questionoptionid : crypto.randomUUID();
    return {
      ...o,
      questionoptionid,
      ...(o.questionassociate ? { questionassociate: { ...o.questionassociate, questionoptionid } } : {}),
    };
  });
}

/** The columns a create or an update writes from the body. */
function contentOf(body: QuestionBody, keepOptionIds = false) {
  return {
    questionidentifier: body.questionidentifier,
    templatetypeid: body.templatetypeid,
    questionheading: json(body.questionheading),
    questionoptions: json(withOptionIds(body.questionoptions, keepOptionIds)),
    questiontext: body.questiontext ?? null,
    questiondistractors: json(body.questiondistractors),
    questionfile: json(body.questionfile),
    questioncorrectvalue: body.questioncorrectvalue ?? null,
    // A client that does not know the feedback (it sends no key) leaves it as it is; `null` clears it.
    ...(body.questionfeedback === undefined ? {} : { questionfeedback: json(body.questionfeedback) }),
  };
}

const live = (db: Knex, questionid: string) => db('questions').where({ questionid, isdeleted: false });

async function requireLive(db: Knex, questionid: string) {
  const row = await live(db, questionid).first();
  if (!row) throw httpError(400, INVALID);
  return row as Record<string, unknown> & { questiontags: unknown };
}

async function identifierTaken(trx: Knex, questionidentifier: string, except?: string): Promise<boolean> {
  const q = trx('questions').where({ questionidentifier, isdeleted: false });
  if (except) q.whereNot({ questionid: except });
  return !!(await q.first('questionid'));
}

const tagsOf = (row: { questiontags: unknown }): string[] =>
  Array.isArray(row.questiontags) ? row.questiontags.filter((t): t is string => typeof t === 'string') : [];

/** Ids the demo seed gives its questions and their options; a request's question gets new ones. */
export interface QuestionIds {
  questionid?: string;
  keepOptionIds?: boolean;
}

export async function createQuestion(
  db: Knex,
  body: QuestionBody,
  by: string | null,
  ids: QuestionIds = {},
): Promise<true> {
  await writeTransaction(db, EXISTS, async (trx) => {
    if (await identifierTaken(trx, body.questionidentifier)) throw httpError(400, EXISTS);
    const stamp = now();
    await trx('questions').insert({
      questionid: ids.questionid ?? crypto.randomUUID(),
      ...contentOf(body, ids.keepOptionIds),
      questiontags: json([...new Set(body.questiontags ?? [])]),
      questionstatus: true,
      isdeleted: false,
      lastupdated: stamp,
      created_by: by,
      updated_by: by,
    });
  });
  return true;
}

/** The editor's view of one question, with its real tags (the original always answered `[]`). */
export async function getQuestion(db: Knex, questionid: string) {
  const q = await requireLive(db, questionid);
  return {
    isdeleted: q.isdeleted,
    questionid: q.questionid,
    questionidentifier: q.questionidentifier,
    questionoptions: q.questionoptions,
    questionstatus: q.questionstatus,
    templatetypeid: q.templatetypeid,
    questiondistractors: q.questiondistractors,
    questionfile: q.questionfile,
    questionheading: q.questionheading,
    questiontext: q.questiontext,
    questiontags: tagsOf(q),
    questioncorrectvalue: q.questioncorrectvalue,
    questionfeedback: q.questionfeedback ?? null,
  };
}

/** Replaces the content; the tags (their own routes) and the status stay. */
export async function updateQuestion(db: Knex, questionid: string, body: QuestionBody, by: string | null) {
  await writeTransaction(db, EXISTS, async (trx) => {
    await requireLive(trx, questionid);
    if (await identifierTaken(trx, body.questionidentifier, questionid)) throw httpError(400, EXISTS);
    const stamp = now();
    await trx('questions')
      .where({ questionid })
      .update({ ...contentOf(body), lastupdated: stamp, updated_at: stamp, updated_by: by });
  });
  const q = await requireLive(db, questionid);
  return {
    isdeleted: q.isdeleted,
    questionid: q.questionid,
    questionidentifier: q.questionidentifier,
    questionstatus: q.questionstatus,
    questiontags: tagsOf(q),
    templatetypeid: q.templatetypeid,
  };
}

export async function renameQuestion(
  db: Knex,
  questionid: string,
  questionidentifier: string,
  by: string | null,
): Promise<true> {
  await writeTransaction(db, EXISTS, async (trx) => {
    await requireLive(trx, questionid);
    if (await identifierTaken(trx, questionidentifier, questionid)) throw httpError(400, EXISTS);
    const stamp = now();
    await trx('questions')
      .where({ questionid })
      .update({ questionidentifier, lastupdated: stamp, updated_at: stamp, updated_by: by });
  });
  return true;
}

export async function setQuestionStatus(
  db: Knex,
  questionid: string,
  questionstatus: boolean,
  caller?: Caller,
): Promise<true> {
  if (!questionstatus && caller) await requireUsedWithin(db, caller, { questionid });
  const n = await live(db, questionid).update({ questionstatus, lastupdated: now() });
  if (!n) throw httpError(400, INVALID);
  return true;
}

export async function deleteQuestion(db: Knex, questionid: string, by: string | null, caller?: Caller): Promise<true> {
  if (caller) await requireUsedWithin(db, caller, { questionid });
  const stamp = now();
  const n = await live(db, questionid).update({
    isdeleted: true,
    lastupdated: stamp,
    deleted_at: stamp,
    deleted_by: by,
  });
  if (!n) throw httpError(400, INVALID);
  return true;
}

/** Adds (once) or removes one tag; the tag list is read and written in one transaction. */
export async function changeTag(
  db: Knex,
  questionid: string,
  tagname: string,
  add: boolean,
  by: string | null,
): Promise<true> {
  await db.transaction(async (trx) => {
    const q = await requireLive(trx, questionid);
    const before = tagsOf(q);
    const after = add ? [...new Set([...before, tagname])] : before.filter((t) => t !== tagname);
    if (after.length === before.length && after.every((t, i) => t === before[i])) return;
    const stamp = now();
    await trx('questions')
      .where({ questionid })
      .update({ questiontags: json(after), lastupdated: stamp, updated_at: stamp, updated_by: by });
  });
  return true;
}

type Term = (q: Knex.QueryBuilder) => void;
const NOTHING: Term = (q) => { q.whereRaw('1 = 0'); };

/**
 * One filter entry as a condition. Text keys match when they contain the value (the tags as their JSON
 * text, as the original's LIKE did); `questionstatus` takes "true"/"false"; `templatetypeid` matches
 * template ids exactly (a contains-match would find template 12 for "1"). A comma list or an array means
 * all of its parts (`any`: one of them).
 */
function termOf(key: string, value: string | string[] | null | undefined, any: boolean): Term | undefined {
  const parts = filterValues(value);
  if (!parts.length) return undefined;
  // A question has one status and one template: any of several
  // values is one `IN`, all of them holds only when they are one.
  const exactly = (column: string, read: (part: string) => boolean | number | undefined): Term => {
    const values = parts.map(read);
    const valid = [...new Set(values.filter((v): v is boolean | number => v !== undefined))];
    if (any) return valid.length ? (q) => { q.whereIn(column, valid as never[]); } : NOTHING;
    return valid.length === 1 && values.every((v) => v !== undefined) ? (q) => { q.where(column, valid[0]); } : NOTHING;
  };
  const contains =
    (sql: string, column: string): Term =>
    (q) => {
      whereEach(q, parts, any, (w, p) => {
        w.whereRaw(sql, [column, containsPattern(p)]);
      });
    };
  switch (key) {
    case 'questionstatus':
      return exactly('questionstatus', (p) =>
        p.toLowerCase() === 'true' ? true : p.toLowerCase() === 'false' ? false : undefined,
      );
    case 'templatetypeid':
      return exactly('templatetypeid', (p) => (/^\d{1,9}$/.test(p) ? Number(p) : undefined));
    case 'questiontags':
      return contains("lower(CAST(?? AS TEXT)) like ? escape '\\'", 'questiontags');
    default:
      return contains("lower(??) like ? escape '\\'", key);
  }
}

/** `POST /question` (filters AND-combined) and `POST /question/search` (OR-combined), newest change first. */
export async function listQuestions(db: Knex, body: Paging, mode: 'and' | 'or') {
  const terms = (body.filter ?? []).map((f) => termOf(f.key, f.value, mode === 'or')).filter((t): t is Term => !!t);
  const base = db('questions').where({ isdeleted: false });
  if (terms.length) {
    base.where((w) => {
      for (const t of terms) {
        if (mode === 'or') w.orWhere((o) => t(o));
        else w.where((o) => t(o));
      }
    });
  }
  return pageRows(base, body, [{ column: 'lastupdated', order: 'desc' }, { column: 'questionid' }]);
}
