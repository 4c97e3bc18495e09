import { anyUser, httpError } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { idParams, learnerOf } from '../common';
import {
  LINKS,
  baselineWithQuestions,
  lessonWithQuestions,
  levelAnswers,
  levelWithQuestions,
  linkedQuestions,
} from './store';

const levelParams = idParams('levelid', 'Invalid level id');

export const questionRoutes: ClassroomRoute[] = [
  route('GET', '/question/lesson/:lessonid', anyUser(), { params: idParams('lessonid', 'Invalid lesson id') },
    async ({ db, caller, params }) => {
    const out = await lessonWithQuestions(db, params.lessonid, (await learnerOf(db, caller))?.studentid);
    if (!out) throw httpError(404, `lesson ${params.lessonid} not found`);
    return out;
  },
    { summary: "A lesson's questions, its learning path and the caller's learning progress" }),
  route('GET', '/question/level/:levelid', anyUser(), { params: levelParams }, async ({ db, params }) => {
    const out = await levelWithQuestions(db, params.levelid);
    if (!out) throw httpError(404, `level ${params.levelid} not found`);
    return out;
  }, { summary: 'A level with its level-quiz questions' }),
  route('GET', '/question/practice/:lessonpracticeid', anyUser(),
    { params: idParams('lessonpracticeid', 'Invalid lesson practice id') },
    ({ db, params }) => linkedQuestions(db, LINKS.practice, [params.lessonpracticeid]),
    { summary: "A practice's questions" }),
  route('GET', '/question/quiz/:lessonquizid', anyUser(),
    { params: idParams('lessonquizid', 'Invalid lesson quiz id') },
    ({ db, params }) => linkedQuestions(db, LINKS.quiz, [params.lessonquizid]),
    { summary: "A lesson quiz's questions" }),
  route('GET', '/question/baseline/:curriculumbaselineid', anyUser(),
    { params: idParams('curriculumbaselineid', 'Invalid curriculum baseline id') },
    async ({ db, params }) => {
    const out = await baselineWithQuestions(db, params.curriculumbaselineid);
    if (!out) throw httpError(404, `baseline ${params.curriculumbaselineid} not found`);
    return out;
  },
    { summary: 'A baseline/endline with its questions' }),
  route('GET', '/question/level/:levelid/answers', anyUser(), { params: levelParams },
    async ({ db, caller, params }) => {
    const out = await levelAnswers(db, params.levelid, (await learnerOf(db, caller))?.studentid);
    if (!out) throw httpError(404, 'No level-quiz result is found');
    return out;
  },
    { summary: "The level quiz with the caller's latest answers" }),
];
