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
        const practice = (await db('questions')
          .join('lessonpracticequestions', 'lessonpracticequestions.questionid', 'questions.questionid')
          .join('lessonpractices', 'lessonpractices.lessonpracticeid', 'lessonpracticequestions.lessonpracticeid')
          .where('lessonpractices.lessonid', lessonid)
          .orderBy(['lessonpractices.lessonpracticeorder', 'lessonpracticequestions.lessonpracticequestionorder', 'lessonpracticequestions.lessonpracticequestionid'])
          .select('questions.questionfile', 'questions.questionheading', 'questions.questionoptions')) as Row[];
        const quiz = (await db('questions')
          .join('lessonquizquestions', 'lessonquizquestions.questionid', 'questions.questionid')
          .join('lessonquizzes', 'lessonquizzes.lessonquizid', 'lessonquizquestions.lessonquizid')
          .where('lessonquizzes.lessonid', lessonid)
          .orderBy(['lessonquizzes.lessonquizorder', 'lessonquizquestions.lessonquizquestionorder', 'lessonquizquestions.lessonquizquestionid'])
          .select('questions.questionfile', 'questions.questionheading', 'questions.questionoptions')) as Row[];
        for (const q of [...practice, ...quiz]) files.push(...questionFiles(q));
      }
      const levelQuiz = (await db('questions')
        .join('levelquizquestions', 'levelquizquestions.questionid', 'questions.questionid')
        .where('levelquizquestions.levelid', level.levelid as string)
        .orderBy(['levelquizquestions.levelquizquestionorder', 'levelquizquestions.levelquizquestionid'])
        .select('questions.questionfile', 'questions.questionheading', 'questions.questionoptions')) as Row[];
      for (const q of levelQuiz) files.push(...questionFiles(q));
    }
  }
  return [...new Set(files)];
}
