import type { Knex } from '@lms/db';
import { fileObject, withLessonHeading } from '../common';
import { PROGRESS } from '../result/progress';

/** The kinds of a `learningpath` entry, as the existing server numbers them. */
export const LEARNING_PATH = { learning: 1, practice: 2, quiz: 3 } as const;

/** The question fields the app renders, gathered in one object inside the question. */
export function withQuestionObject(q: Record<string, unknown>) {
  return {
    ...q,
    questionobject: {
      questionoptions: q.questionoptions ?? null,
      questionfile: q.questionfile ?? null,
      questiontext: q.questiontext ?? null,
      questiondistractors: q.questiondistractors ?? null,
      questionheading: q.questionheading ?? null,
      questioncorrectvalue: q.questioncorrectvalue ?? null,
      questionfeedback: q.questionfeedback ?? null,
    },
  };
}

interface LinkSpec { table: string; parent: string; status: string; order: string }

export const LINKS = {
  practice: {
    table: 'lessonpracticequestions',
    parent: 'lessonpracticeid',
    status: 'lessonpracticequestionstatus',
    order: 'lessonpracticequestionorder',
  },
  quiz: {
    table: 'lessonquizquestions',
    parent: 'lessonquizid',
    status: 'lessonquizquestionstatus',
    order: 'lessonquizquestionorder',
  },
  level: {
    table: 'levelquizquestions',
    parent: 'levelid',
    status: 'levelquizquestionstatus',
    order: 'levelquizquestionorder',
  },
  baseline: {
    table: 'baselinequestion',
    parent: 'curriculumbaselineid',
    status: 'baselinequestionstatus',
    order: 'baselinequestionorder',
  },
} satisfies Record<string, LinkSpec>;

/** The link rows that are served: active ones (for a baseline, not deleted ones). */
function servedLinks(db: Knex, spec: LinkSpec, parentIds: string[]) {
  const q = db(spec.table).whereIn(`${spec.table}.${spec.parent}`, parentIds);
  // A baseline question's status flag defaults to false in the original schema, so only deletion hides it.
  return spec.table === 'baselinequestion'
    ? q.andWhere(`${spec.table}.isdeleted`, false)
    : q.andWhere(`${spec.table}.${spec.status}`, true);
}

/** Link rows of one or more parents, each with its question nested (and the question's questionobject inside it). */
export async function linkedQuestions(db: Knex, spec: LinkSpec, parentIds: string[]) {
  if (!parentIds.length) return [];
  const links = await servedLinks(db, spec, parentIds).orderBy(spec.order);
  const ids = [...new Set(links.map((l) => l.questionid).filter(Boolean))];
  const questions = ids.length ? await db('questions').whereIn('questionid', ids).andWhere('isdeleted', false) : [];
  const byId = new Map(questions.map((x) => [x.questionid, withQuestionObject(x)]));
  return links.filter((l) => byId.has(l.questionid)).map((l) => ({ ...l, question: byId.get(l.questionid) }));
}

/** Which of the parents have at least one question that `linkedQuestions` would serve. */
export async function parentsWithQuestions(db: Knex, spec: LinkSpec, parentIds: string[]): Promise<Set<string>> {
  if (!parentIds.length) return new Set();
  const rows = await servedLinks(db, spec, parentIds)
    .join('questions', 'questions.questionid', `${spec.table}.questionid`)
    .andWhere('questions.isdeleted', false)
    .distinct(`${spec.table}.${spec.parent} as parentid`);
  return new Set(rows.map((r: { parentid: string }) => r.parentid));
}

export async function levelWithQuestions(db: Knex, levelid: string) {
  const level = await db('levels').where({ levelid, isdeleted: false }).first();
  if (!level) return null;
  const levelquizquestions = await linkedQuestions(db, LINKS.level, [levelid]);
  return {
    ...level,
    levelquizquestions,
    // The existing server names each level-quiz question by its order, and describes it so too.
    learningpath: levelquizquestions.map((q) => ({
      ...q,
      learningpathtype: LEARNING_PATH.quiz,
      learningpathname: q.levelquizquestionorder,
      learningpathid: q.levelquizquestionid,
      learningpathorder: q.levelquizquestionorder,
      learningpathdescription: q.levelquizquestionorder,
    })),
  };
}

/**
 * A lesson with every learning, practice and quiz and their questions, and the same items again as one
 * `learningpath` (learnings, then practices, then quizzes, each in its order) with the caller's learning
 * progress in the lesson (`lessonlearningprogress`; empty for a caller without a learner record).
 */
export async function lessonWithQuestions(db: Knex, lessonid: string, studentid: string | undefined) {
  const lesson = await db('lessons').where({ lessonid, isdeleted: false }).first();
  if (!lesson) return null;
  const [learningRows, practices, quizzes] = await Promise.all([
    db('lessonlearnings').where({ lessonid, lessonlearningstatus: true }).orderBy('lessonlearningorder'),
    db('lessonpractices').where({ lessonid, lessonpracticestatus: true }).orderBy('lessonpracticeorder'),
    db('lessonquizzes').where({ lessonid, lessonquizstatus: true }).orderBy('lessonquizorder'),
  ]);
  const docIds = [...new Set(learningRows.map((l) => l.documentid).filter(Boolean))];
  const docs = docIds.length
    ? await db('documents').whereIn('documentid', docIds).select('documentid', 'documentname')
    : [];
  const docName = new Map(docs.map((d) => [d.documentid, d.documentname as string]));
  const lessonlearnings = learningRows.map((l) => ({
    ...l,
    lessonlearningfileobject: fileObject(docName.get(l.documentid)),
  }));
  const pq = await linkedQuestions(db, LINKS.practice, practices.map((p) => p.lessonpracticeid));
  const qq = await linkedQuestions(db, LINKS.quiz, quizzes.map((q) => q.lessonquizid));
  const lessonpractices = practices.map((p) => ({
    ...p,
    lessonpracticequestions: pq.filter((x) => x.lessonpracticeid === p.lessonpracticeid),
  }));
  const lessonquizzes = quizzes.map((q) => ({
    ...q,
    lessonquizquestions: qq.filter((x) => x.lessonquizid === q.lessonquizid),
  }));
  const lessonlearningprogress = studentid && learningRows.length
    ? await db('studentlearningsprogress')
        .where({ studentid })
        .whereIn('lessonlearningid', db('lessonlearnings').where({ lessonid }).select('lessonlearningid'))
    : [];
  // A practice's or quiz's description in the path is its order on the existing server; kept as the app reads it.
  const learningpath = [
    ...lessonlearnings.map((l) => ({
      ...l,
      learningpathtype: LEARNING_PATH.learning,
      learningpathname: l.lessonlearningname,
      learningpathdescription: l.lessonlearningdescription,
      learningpathid: l.lessonlearningid,
      learningpathorder: l.lessonlearningorder,
    })),
    ...lessonpractices.map((p) => ({
      ...p,
      learningpathtype: LEARNING_PATH.practice,
      learningpathname: p.lessonpracticename,
      learningpathid: p.lessonpracticeid,
      learningpathorder: p.lessonpracticeorder,
      learningpathdescription: p.lessonpracticeorder,
    })),
    ...lessonquizzes.map((q) => ({
      ...q,
      learningpathtype: LEARNING_PATH.quiz,
      learningpathname: q.lessonquizname,
      learningpathid: q.lessonquizid,
      learningpathorder: q.lessonquizorder,
      learningpathdescription: q.lessonquizorder,
    })),
  ];
  return {
    ...withLessonHeading(lesson),
    lessonlearnings,
    lessonpractices,
    lessonquizzes,
    lessonlearningprogress,
    learningpath,
  };
}

export async function baselineWithQuestions(db: Knex, curriculumbaselineid: string) {
  const baseline = await db('curriculumbaseline').where({ curriculumbaselineid, isdeleted: false }).first();
  if (!baseline) return null;
  return { ...baseline, baselinequestion: await linkedQuestions(db, LINKS.baseline, [curriculumbaselineid]) };
}

/** The level quiz's questions with the caller's answers from the latest attempt; null when there is none. */
export async function levelAnswers(db: Knex, levelid: string, studentid: string | undefined) {
  if (!studentid) return null;
  const attempt = await db('studentprogress')
    .where({ studentid, studentprogressreferenceid: levelid, progresstype: PROGRESS.levelquiz })
    .orderBy('starttime', 'desc')
    .first();
  if (!attempt) return null;
  const answers = await db('studentprogressquestions').where('studentprogressid', attempt.studentprogressid);
  const byLink = new Map(answers.map((a) => [a.referencequestionid, a]));
  const questions = await linkedQuestions(db, LINKS.level, [levelid]);
  return {
    studentprogress: attempt,
    levelquizquestions: questions.map((q) => {
      const a = byLink.get(q.levelquizquestionid);
      return { ...q, answer: a ? { iscorrect: a.iscorrect, tries: a.tries } : null };
    }),
  };
}
