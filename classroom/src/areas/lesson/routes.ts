import { z } from 'zod';
import { anyUser, httpError } from '@lms/shared';
import { route } from '../../http/route';
import { SCHOOL_ROLE, type ClassroomRoute } from '../../http/types';
import { userOf } from '../../auth/guards';
import { idParams, instant, learnerOf, queryText, requireLearner } from '../common';
import {
  activitiesProgress,
  learning,
  learningProgressOf,
  learningProgressOfLesson,
  lessonSummary,
  lessonWithContent,
  lessonsOfLevel,
  lessonsProgress,
  levelSteps,
  plan,
  saveLearningProgress,
  searchLessons,
} from './store';

const levelParams = idParams('levelid', 'Invalid level id');
const lessonParams = idParams('lessonid', 'Invalid lesson id');
const learningParams = idParams('lessonlearningid', 'Invalid lesson learning id');
const progressBody = z.object({
  ended: z.boolean(),
  time: z.number().finite().min(0),
  content_length: z.number().finite().positive({ message: 'must be greater than 0' }),
  date: instant.optional(),
});

/** Teacher accounts: staff roles, and learner accounts flagged is_teacher_acc (a teacher using the learner app). */
async function isTeacherAccount(
  db: import('@lms/db').Knex,
  caller: import('../../http/types').Caller,
): Promise<boolean> {
  const user = userOf(caller);
  if (user.schooluserrole !== SCHOOL_ROLE.student) return true;
  const student = await db('students').where('schooluserid', user.schooluserid).first('is_teacher_acc');
  return student?.is_teacher_acc === true;
}

const studentidOf = async (db: import('@lms/db').Knex, caller: import('../../http/types').Caller) =>
  (await learnerOf(db, caller))?.studentid;

// The controller is mounted at /Lesson in the original; matching is case-insensitive, and the app calls /lesson.
export const lessonRoutes: ClassroomRoute[] = [
  route('GET', '/Lesson/all', anyUser(), { query: z.object({ levelid: queryText, lesson: queryText }) },
    ({ db, query }) => searchLessons(db, query), { summary: 'Active lessons by level and name' }),
  route('GET', '/Lesson/level/:levelid', anyUser(), { params: levelParams }, async ({ db, caller, params }) => {
    return lessonsOfLevel(db, params.levelid, await studentidOf(db, caller));
  }, { summary: "A level's lessons with the caller's progress" }),
  route('GET', '/Lesson/level/:levelid/steps', anyUser(), { params: levelParams }, async ({ db, caller, params }) => {
    const out = await levelSteps(db, params.levelid, await studentidOf(db, caller));
    if (!out) throw httpError(404, `level ${params.levelid} not found`);
    return out;
  }, { summary: "The state of each step of every lesson of a level for the caller (learner app)" }),
  route('GET', '/Lesson/progress/level/:levelid', anyUser(), { params: levelParams },
    async ({ db, caller, params }) => {
    return lessonsProgress(db, params.levelid, await studentidOf(db, caller));
  },
    { summary: "The caller's progress per lesson of a level, and the level quiz" }),
  route('GET', '/Lesson/:lessonid/progress', anyUser(), { params: lessonParams }, async ({ db, caller, params }) => {
    const out = await lessonSummary(db, params.lessonid, await studentidOf(db, caller));
    if (!out) throw httpError(404, `lesson ${params.lessonid} not found`);
    return out;
  }, { summary: "One lesson's content counts and the caller's points" }),
  route('GET', '/Lesson/:lessonid/activities/progress', anyUser(), { params: lessonParams },
    async ({ db, caller, params }) => {
    const out = await activitiesProgress(db, params.lessonid, await studentidOf(db, caller));
    if (!out) throw httpError(404, `lesson ${params.lessonid} not found`);
    return out;
  },
    { summary: "The state of each learning, practice and quiz of a lesson for the caller (learner app)" }),
  route('POST', '/lesson/learning/:lessonlearningid/progress', anyUser(),
    { params: learningParams, body: progressBody },
    async ({ db, caller, params, body }) => {
    const learner = await requireLearner(db, caller);
    const row = await db('lessonlearnings')
      .where('lessonlearningid', params.lessonlearningid)
      .first('lessonlearningid', 'lessonid', 'points');
    if (!row) throw httpError(400, 'Invalid lesson learning id');
    await saveLearningProgress(db, learner, row, body);
    return true;
  },
    { summary: 'Records how far the caller watched a learning' }),
  route('GET', '/lesson/:lessonid/learning/progress', anyUser(), { params: lessonParams },
    async ({ db, caller, params }) => {
    return learningProgressOfLesson(db, await studentidOf(db, caller), params.lessonid);
  },
    { summary: "The caller's learning progress in a lesson" }),
  route('GET', '/lesson/learning/:lessonlearningid/progress', anyUser(), { params: learningParams },
    async ({ db, caller, params }) => {
    return learningProgressOf(db, await studentidOf(db, caller), params.lessonlearningid);
  },
    { summary: "The caller's progress in one learning (or null)" }),
  route('GET', '/lesson/learning/:lessonlearningid', anyUser(), { params: learningParams },
    async ({ db, caller, params }) => {
    const out = await learning(db, params.lessonlearningid, await studentidOf(db, caller));
    if (!out) throw httpError(404, `lesson learning ${params.lessonlearningid} not found`);
    return out;
  },
    { summary: 'One learning with its file facts and the caller progress' }),
  route('GET', '/lesson/:lessonid/learning', anyUser(), { params: lessonParams }, async ({ db, caller, params }) => {
    const out = await lessonWithContent(db, params.lessonid, {
      withPlans: await isTeacherAccount(db, caller),
      answerableOnly: userOf(caller).schooluserrole === SCHOOL_ROLE.student,
    });
    if (!out) throw httpError(404, `lesson ${params.lessonid} not found`);
    return out;
  }, { summary: 'A lesson with its learnings, practices, quizzes (and plans for teachers)' }),
  route('GET', '/lesson/plan/:lessonplanid', anyUser(), { params: idParams('lessonplanid', 'Invalid lesson plan id') },
    async ({ db, caller, params }) => {
    if (!(await isTeacherAccount(db, caller))) throw httpError(403, 'Forbidden');
    const out = await plan(db, params.lessonplanid);
    if (!out) throw httpError(404, `lesson plan ${params.lessonplanid} not found`);
    return out;
  },
    { summary: 'One lesson plan with its file facts (teacher accounts)' }),
];
