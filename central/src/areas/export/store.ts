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

/** The questions of a lesson's practices or quizzes, in the order a learner meets them. */
async function lessonQuestions(db: Knex, lessonid: string, parent: string, parentId: string, link: string, prefix: string): Promise<Row[]> {
  return (await db('questions')
    .join(link, `${link}.questionid`, 'questions.questionid')
    .join(parent, `${parent}.${parentId}`, `${link}.${parentId}`)
    .where(`${parent}.lessonid`, lessonid)
    .orderBy([`${parent}.${prefix}order`, `${link}.${prefix}questionorder`, `${link}.${prefix}questionid`])
    .select(QUESTION_MEDIA)) as Row[];
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
  const live = (table: string, status: string) => (q: Knex.QueryBuilder) => q.where(`${table}.isdeleted`, false).where(`${table}.${status}`, true);

  const grades = (await db('grades').where('curriculumid', curriculumid).modify(live('grades', 'gradestatus')).orderBy(['gradeorder', 'gradeid'])) as Row[];
  for (const grade of grades) {
    const levels = (await db('levels').where('gradeid', grade.gradeid as string).modify(live('levels', 'levelstatus')).orderBy(['levelorder', 'levelid'])) as Row[];
    for (const level of levels) {
      const lessons = (await db('lessons').where('levelid', level.levelid as string).modify(live('lessons', 'lessonstatus')).orderBy(['lessonorder', 'lessonid'])) as Row[];
      for (const lesson of lessons) {
        const lessonid = lesson.lessonid as string;
        const documents = (await db('lessonlearnings')
          .join('documents', 'documents.documentid', 'lessonlearnings.documentid')
          .where('lessonlearnings.lessonid', lessonid)
          .orderBy(['lessonlearnings.lessonlearningorder', 'lessonlearnings.lessonlearningid'])
          .select('documents.documentname')) as Row[];
        for (const d of documents) if (typeof d.documentname === 'string' && d.documentname) files.push(d.documentname);
        const practice = await lessonQuestions(db, lessonid, 'lessonpractices', 'lessonpracticeid', 'lessonpracticequestions', 'lessonpractice');
        const quiz = await lessonQuestions(db, lessonid, 'lessonquizzes', 'lessonquizid', 'lessonquizquestions', 'lessonquiz');
        for (const q of [...practice, ...quiz]) files.push(...questionFiles(q));
      }
      const levelQuiz = (await db('questions')
        .join('levelquizquestions', 'levelquizquestions.questionid', 'questions.questionid')
        .where('levelquizquestions.levelid', level.levelid as string)
        .orderBy(['levelquizquestions.levelquizquestionorder', 'levelquizquestions.levelquizquestionid'])
        .select(QUESTION_MEDIA)) as Row[];
      for (const q of levelQuiz) files.push(...questionFiles(q));
    }
  }
  return [...new Set(files)];
}
