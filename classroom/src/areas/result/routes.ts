import { z } from 'zod';
import { anyUser } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomCtx, ClassroomRoute } from '../../http/types';
import { idParams, instant, requireLearner } from '../common';
import { KINDS, saveResult, type Answer, type ResultKind } from './store';

const id = z.string().uuid();

// Answer items keep what we know and drop the rest: newer builds of the learner app send more per answer
// (the chosen `answer`), and refusing them would leave their results queued on the tablet for good.
function submissionBody<T extends z.ZodRawShape>(item: T, minAnswers: number) {
  return z.object({
    result: z.array(z.object({ iscorrect: z.boolean(), questionid: id, ...item })).min(minAnswers).max(500),
    starttime: instant.optional(),
    endtime: instant.optional(),
  }).strict();
}

// The learner app's practice screen sends only the questions answered right, so a practice with every answer
// wrong arrives as `result: []`. That is a failed attempt (0 %), taken the same way on the quiz route: refusing
// it would leave the app's queue retrying it for a day.
const practiceBody = submissionBody(
  { lessonpracticeid: id, lessonpracticequestionid: id, tries: z.number().int().min(0).max(1000) },
  0,
);
const quizBody = submissionBody({ lessonquizid: id, lessonquizquestionid: id }, 0);
const levelBody = submissionBody({ levelid: id, levelquizquestionid: id }, 1);
const baselineBody = submissionBody({ curriculumbaselineid: id, baselinequestionid: id }, 1);

function handler(kind: ResultKind, param: string) {
  type Submission = { result: Array<Record<string, unknown>>; starttime?: Date; endtime?: Date };
  type Input = Pick<ClassroomCtx, 'db' | 'caller'> & { params: Record<string, string>; body: Submission };
  return async ({ db, caller, params, body }: Input) => {
    const learner = await requireLearner(db, caller);
    const now = new Date();
    const answers: Answer[] = body.result.map((r) => ({
      iscorrect: r.iscorrect as boolean,
      tries: typeof r.tries === 'number' ? r.tries : undefined,
      linkid: r[kind.link.id] as string,
      parentid: r[kind.link.parent] as string,
    }));
    await saveResult(db, kind, {
      studentid: learner.studentid,
      referenceid: params[param],
      // Without a starttime an attempt cannot be recognised when replayed; each such request is a new attempt.
      starttime: body.starttime ?? now,
      endtime: body.endtime ?? now,
      answers,
    });
    return true;
  };
}

export const resultRoutes: ClassroomRoute[] = [
  route('POST', '/result/lesson/practice/:lessonpracticeid', anyUser(),
    { params: idParams('lessonpracticeid', 'Invalid lesson practice id'), body: practiceBody },
    handler(KINDS.practice, 'lessonpracticeid'),
    { summary: 'Saves a practice attempt (idempotent on studentid, practice and starttime)' }),
  route('POST', '/result/lesson/quiz/:lessonquizid', anyUser(),
    { params: idParams('lessonquizid', 'Invalid lesson quiz id'), body: quizBody }, handler(KINDS.quiz, 'lessonquizid'),
    { summary: 'Saves a lesson-quiz attempt (idempotent on studentid, quiz and starttime)' }),
  route('POST', '/result/level/quiz/:levelid', anyUser(),
    { params: idParams('levelid', 'Invalid level id'), body: levelBody }, handler(KINDS.levelquiz, 'levelid'),
    { summary: 'Saves a level-quiz attempt (idempotent on studentid, level and starttime)' }),
  route('POST', '/result/baseline/question/:curriculumbaselineid', anyUser(),
    { params: idParams('curriculumbaselineid', 'Invalid curriculum baseline id'), body: baselineBody },
    handler(KINDS.baseline, 'curriculumbaselineid'),
    { summary: 'Saves a baseline/endline attempt (idempotent on studentid, baseline and starttime)' }),
];
