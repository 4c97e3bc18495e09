import crypto from 'node:crypto';
import { isUniqueViolation, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { round2 } from '../common';
import { ACTIVE, PROGRESS, recordActive, refreshAggregates } from './progress';

export interface ResultKind {
  progresstype: number;
  activetype: number;
  /** The content a submission is about, and the column holding its point value (none for a baseline). */
  content: { table: string; id: string; points?: string; invalid: string };
  /** The link rows between that content and its questions; an answer refers to one of them. */
  link: { table: string; id: string; parent: string };
}

export const KINDS = {
  practice: {
    progresstype: PROGRESS.practice,
    activetype: ACTIVE.practice,
    content: {
      table: 'lessonpractices',
      id: 'lessonpracticeid',
      points: 'points',
      invalid: 'Invalid lesson practice id',
    },
    link: { table: 'lessonpracticequestions', id: 'lessonpracticequestionid', parent: 'lessonpracticeid' },
  },
  quiz: {
    progresstype: PROGRESS.quiz,
    activetype: ACTIVE.quiz,
    content: { table: 'lessonquizzes', id: 'lessonquizid', points: 'points', invalid: 'Invalid lesson quiz id' },
    link: { table: 'lessonquizquestions', id: 'lessonquizquestionid', parent: 'lessonquizid' },
  },
  levelquiz: {
    progresstype: PROGRESS.levelquiz,
    activetype: ACTIVE.levelquiz,
    content: { table: 'levels', id: 'levelid', points: 'quiz_points', invalid: 'Invalid level id' },
    link: { table: 'levelquizquestions', id: 'levelquizquestionid', parent: 'levelid' },
  },
  baseline: {
    progresstype: PROGRESS.baseline,
    activetype: ACTIVE.baseline,
    content: { table: 'curriculumbaseline', id: 'curriculumbaselineid', invalid: 'Invalid curriculum baseline id' },
    link: { table: 'baselinequestion', id: 'baselinequestionid', parent: 'curriculumbaselineid' },
  },
} satisfies Record<string, ResultKind>;

export interface Answer {
  iscorrect: boolean;
  tries?: number;
  /** The link-row id (lessonpracticequestionid, lessonquizquestionid, levelquizquestionid or baselinequestionid). */
  linkid: string;
  parentid: string;
}

export interface Submission {
  studentid: string;
  referenceid: string;
  starttime: Date;
  endtime: Date;
  answers: Answer[];
}

/** Scores of a quiz-like attempt: 1 for [80, 91), 2 for [91, 96), 3 from 96; practices earn none. */
export function scoresOf(kind: ResultKind, percentage: number): number {
  if (kind.progresstype === PROGRESS.practice) return 0;
  if (percentage >= 96) return 3;
  if (percentage >= 91) return 2;
  if (percentage >= 80) return 1;
  return 0;
}

/** A quiz, level quiz or baseline: the answers right of the answers given (the app sends every question answered). */
function quizScore(answers: Answer[]): { correct: number; percentage: number } {
  const correct = answers.filter((a) => a.iscorrect).length;
  return { correct, percentage: answers.length ? round2((correct * 100) / answers.length) : 0 };
}

/**
 * A practice: the app sends only the questions answered right, so the attempt is scored against the practice's
 * active questions: distinct right answers among them over their number, at most 100 %. A practice without an
 * active question cannot be failed.
 */
async function practiceScore(db: Knex, s: Submission): Promise<{ correct: number; percentage: number }> {
  const active = new Set<string>(
    (await db('lessonpracticequestions')
      .join('questions', 'questions.questionid', 'lessonpracticequestions.questionid')
      .where({
        'lessonpracticequestions.lessonpracticeid': s.referenceid,
        'lessonpracticequestions.lessonpracticequestionstatus': true,
        'questions.isdeleted': false,
      })
      .pluck('lessonpracticequestions.lessonpracticequestionid')) as string[],
  );
  const correct = new Set(s.answers.filter((a) => a.iscorrect && active.has(a.linkid)).map((a) => a.linkid)).size;
  return { correct, percentage: active.size ? round2(Math.min(100, (correct * 100) / active.size)) : 100 };
}

const findStored = (db: Knex, s: Submission) =>
  db('studentprogress')
    .where({ studentid: s.studentid, studentprogressreferenceid: s.referenceid, starttime: s.starttime.toISOString() })
    .first();

/**
 * Saves one attempt. The triple (studentid, reference, starttime) identifies it: a replay finds the stored row and
 * writes nothing, and a concurrent duplicate that loses the race on the unique key is answered the same way.
 */
export async function saveResult(
  db: Knex,
  kind: ResultKind,
  s: Submission,
): Promise<{ row: Record<string, unknown>; replay: boolean }> {
  const content = await db(kind.content.table).where(kind.content.id, s.referenceid).first();
  if (!content) throw httpError(400, kind.content.invalid);
  for (const a of s.answers) {
    if (a.parentid !== s.referenceid)
      throw httpError(400, `"${kind.link.parent}" of every answer must be ${s.referenceid}`);
  }
  const linkIds = [...new Set(s.answers.map((a) => a.linkid))];
  if (linkIds.length) {
    const links = await db(kind.link.table)
      .where(kind.link.parent, s.referenceid)
      .whereIn(kind.link.id, linkIds)
      .select(kind.link.id);
    if (links.length !== linkIds.length) throw httpError(400, `Invalid ${kind.link.id}`);
  }

  const stored = await findStored(db, s);
  if (stored) return { row: stored, replay: true };

  // Once passed, a practice, quiz or level quiz takes no further attempt (as the original classroom server):
  // the learner's day of activity is noted, and no failing row follows the pass into every log export.
  if (kind.progresstype !== PROGRESS.baseline) {
    const passed = await db('studentprogress')
      .where({
        studentid: s.studentid,
        studentprogressreferenceid: s.referenceid,
        progresstype: kind.progresstype,
        ispass: true,
      })
      .first();
    if (passed) {
      await db.transaction((trx) => recordActive(trx, s.studentid, s.referenceid, kind.activetype));
      return { row: passed, replay: true };
    }
  }

  const full = kind.content.points ? Number(content[kind.content.points] ?? 0) : 0;
  const { correct, percentage } =
    kind.progresstype === PROGRESS.practice ? await practiceScore(db, s) : quizScore(s.answers);
  const ispass = percentage >= 80;
  const row = {
    studentprogressid: crypto.randomUUID(),
    studentid: s.studentid,
    ispass,
    studentprogressreferenceid: s.referenceid,
    starttime: s.starttime.toISOString(),
    endtime: s.endtime.toISOString(),
    progresstype: kind.progresstype,
    resultpercentage: percentage,
    // A practice earns its points for being done, right or wrong (the original's rule); a quiz only when passed.
    points: kind.progresstype === PROGRESS.practice || ispass ? full : 0,
    fullpoints: full,
    marks: correct,
    scores: scoresOf(kind, percentage),
  };
  try {
    await db.transaction(async (trx) => {
      await trx('studentprogress').insert(row);
      if (s.answers.length)
        await trx('studentprogressquestions').insert(
          s.answers.map((a) => ({
            studentprogressquestionid: crypto.randomUUID(),
            studentprogressid: row.studentprogressid,
            tries: a.tries ?? 0,
            iscorrect: a.iscorrect,
            referencequestionid: a.linkid,
          })),
        );
      await recordActive(trx, s.studentid, s.referenceid, kind.activetype);
      if (kind.progresstype === PROGRESS.practice || kind.progresstype === PROGRESS.quiz) {
        const lesson = await trx('lessons').where('lessonid', content.lessonid).first('lessonid', 'levelid');
        if (lesson) await refreshAggregates(trx, s.studentid, lesson.levelid, lesson.lessonid);
      } else if (kind.progresstype === PROGRESS.levelquiz) {
        await refreshAggregates(trx, s.studentid, s.referenceid);
      }
    });
  } catch (err) {
    if (isUniqueViolation(err)) {
      const winner = await findStored(db, s);
      if (winner) return { row: winner, replay: true };
    }
    throw err;
  }
  return { row: (await findStored(db, s)) ?? row, replay: false };
}
