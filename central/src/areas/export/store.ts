import type { Knex } from '@lms/db';

type Row = Record<string, unknown>;

const obj = (v: unknown): Row | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Row) : undefined);
const fileName = (v: unknown): string | undefined => {
  const name = obj(v)?.filename;
  return typeof name === 'string' && name ? name : undefined;
};

/** The media a question shows: its own file, its heading's file, and each option's (and associated option's) file. */
function questionFiles(q: Row): string[] {
  const out: string[] = [];
  const push = (name: string | undefined) => { if (name) out.push(name); };
  push(fileName(q.questionfile));
  push(fileName(obj(q.questionheading)?.headingfile));
  if (Array.isArray(q.questionoptions)) {
    for (const option of q.questionoptions) {
      push(fileName(obj(option)?.questionoptionfile));
      push(fileName(obj(obj(option)?.questionassociate)?.questionassociatefile));
    }
  }
  return out;
}

const QUESTION_MEDIA = ['questions.questionfile', 'questions.questionheading', 'questions.questionoptions'];

/** Ids per query: well under SQLite's and PostgreSQL's limits on bound parameters. */
const IDS_PER_QUERY = 500;

/**
 * The rows of `query(ids)` for all `ids`, grouped by the `key` column, each group in the query's
 * order (the ids are asked for in chunks; a chunk holds every row of its ids).
 */
async function byParent(
  ids: string[],
  key: string,
  query: (ids: string[]) => Knex.QueryBuilder,
): Promise<Map<string, Row[]>> {
  const groups = new Map<string, Row[]>();
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    for (const row of (await query(ids.slice(i, i + IDS_PER_QUERY))) as Row[]) {
      const parent = row[key] as string;
      let group = groups.get(parent);
      if (!group) groups.set(parent, (group = []));
      group.push(row);
    }
  }
  return groups;
}

/** The questions of lessons' practices or quizzes, per lesson, in the order a learner meets them. */
function lessonQuestions(
  db: Knex,
  lessonids: string[],
  parent: string,
  parentId: string,
  link: string,
  prefix: string,
): Promise<Map<string, Row[]>> {
  return byParent(lessonids, 'lessonid', (ids) =>
    db('questions')
      .join(link, `${link}.questionid`, 'questions.questionid')
      .join(parent, `${parent}.${parentId}`, `${link}.${parentId}`)
      .whereIn(`${parent}.lessonid`, ids)
      .orderBy([`${parent}.${prefix}order`, `${link}.${prefix}questionorder`, `${link}.${prefix}questionid`])
      .select([`${parent}.lessonid`, ...QUESTION_MEDIA]),
  );
}

export async function curriculumExists(db: Knex, curriculumid: string): Promise<boolean> {
  return !!(await db('curriculums').where({ curriculumid, isdeleted: false }).first('curriculumid'));
}

/**
 * Every media file name the curriculum's live tree uses (what a device must have on its card), unique, in
 * the order a learner meets them: grade, level, lesson; within a lesson its learning documents, practice
 * and quiz questions; then the level quiz.
 */
export async function curriculumDocuments(db: Knex, curriculumid: string): Promise<string[]> {
  const files: string[] = [];
  const live = (table: string, status: string) => (q: Knex.QueryBuilder) =>
    q.where(`${table}.isdeleted`, false).where(`${table}.${status}`, true);
  const idsOf = (groups: Iterable<Row[]>, key: string) =>
    [...groups].flatMap((rows) => rows.map((r) => r[key] as string));

  // One query per kind of row for the whole tree, not per parent: a curriculum has hundreds of lessons.
  const grades = (await db('grades')
    .where('curriculumid', curriculumid)
    .modify(live('grades', 'gradestatus'))
    .orderBy(['gradeorder', 'gradeid'])
    .select('gradeid')) as Row[];
  const levels = await byParent(
    grades.map((g) => g.gradeid as string),
    'gradeid',
    (ids) =>
      db('levels')
        .whereIn('gradeid', ids)
        .modify(live('levels', 'levelstatus'))
        .orderBy(['levelorder', 'levelid'])
        .select('levelid', 'gradeid'),
  );
  const levelids = idsOf(levels.values(), 'levelid');
  const lessons = await byParent(levelids, 'levelid', (ids) =>
    db('lessons')
      .whereIn('levelid', ids)
      .modify(live('lessons', 'lessonstatus'))
      .orderBy(['lessonorder', 'lessonid'])
      .select('lessonid', 'levelid'),
  );
  const lessonids = idsOf(lessons.values(), 'lessonid');
  const documents = await byParent(lessonids, 'lessonid', (ids) =>
    db('lessonlearnings')
      .join('documents', 'documents.documentid', 'lessonlearnings.documentid')
      .whereIn('lessonlearnings.lessonid', ids)
      .orderBy(['lessonlearnings.lessonlearningorder', 'lessonlearnings.lessonlearningid'])
      .select('lessonlearnings.lessonid', 'documents.documentname'),
  );
  const practice = await lessonQuestions(
    db,
    lessonids,
    'lessonpractices',
    'lessonpracticeid',
    'lessonpracticequestions',
    'lessonpractice',
  );
  const quiz = await lessonQuestions(
    db,
    lessonids,
    'lessonquizzes',
    'lessonquizid',
    'lessonquizquestions',
    'lessonquiz',
  );
  const levelQuiz = await byParent(levelids, 'levelid', (ids) =>
    db('questions')
      .join('levelquizquestions', 'levelquizquestions.questionid', 'questions.questionid')
      .whereIn('levelquizquestions.levelid', ids)
      .orderBy(['levelquizquestions.levelquizquestionorder', 'levelquizquestions.levelquizquestionid'])
      .select(['levelquizquestions.levelid', ...QUESTION_MEDIA]));

  for (const grade of grades) {
    for (const level of levels.get(grade.gradeid as string) ?? []) {
      for (const lesson of lessons.get(level.levelid as string) ?? []) {
        const lessonid = lesson.lessonid as string;
        for (const d of documents.get(lessonid) ?? [])
          if (typeof d.documentname === 'string' && d.documentname) files.push(d.documentname);
        for (const q of [...(practice.get(lessonid) ?? []), ...(quiz.get(lessonid) ?? [])])
          files.push(...questionFiles(q));
      }
      for (const q of levelQuiz.get(level.levelid as string) ?? []) files.push(...questionFiles(q));
    }
  }
  return [...new Set(files)];
}
