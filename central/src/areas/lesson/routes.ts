import { anyUser, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  allLessons,
  createLesson,
  deleteLesson,
  getLesson,
  lessonAllQuery,
  lessonBody,
  lessonListBody,
  lessonParams,
  listLessons,
  setLessonStatus,
  updateLesson,
  updateRewardPoints,
} from './store';

export const lessonRoutes: CentralRoute[] = [
  route('GET', '/lesson/all', anyUser(), scope.curriculaOfCaller, { query: lessonAllQuery },
    ({ db, scope, query }) => allLessons(db, query, scopedCurricula(scope)),
    { summary: 'unpaged lesson list (query filters)' }),
  route('POST', '/lesson/create', perms('create_lesson'), scope.curriculaOfCaller, { body: lessonBody },
    ({ db, body, caller }) => createLesson(db, body, actorOf(caller)), { summary: 'create lesson' }),
  route('DELETE', '/lesson/:lessonid', perms('delete_lesson'), scope.curriculaOfCaller, { params: lessonParams },
    ({ db, params, caller }) => deleteLesson(db, params.lessonid, actorOf(caller)),
    { summary: 'soft-delete lesson (isdeleted flag)' }),
  route('PUT', '/lesson/deactivate/:lessonid', perms('update_lesson'), scope.curriculaOfCaller,
    { params: lessonParams }, ({ db, params }) => setLessonStatus(db, params.lessonid, false),
    { summary: 'set lesson status inactive' }),
  route('PUT', '/lesson/activate/:lessonid', perms('update_lesson'), scope.curriculaOfCaller, { params: lessonParams },
    ({ db, params }) => setLessonStatus(db, params.lessonid, true), { summary: 'set lesson status active' }),
  route('GET', '/lesson/:lessonid', perms('view_lesson'), scope.curriculaOfCaller, { params: lessonParams },
    ({ db, params }) => getLesson(db, params.lessonid), { summary: 'get one lesson by id' }),
  route('PUT', '/lesson/:lessonid', perms('update_lesson'), scope.curriculaOfCaller,
    { params: lessonParams, body: lessonBody },
    ({ db, params, body, caller }) => updateLesson(db, params.lessonid, body, actorOf(caller)),
    { summary: 'update lesson' }),
  route('POST', '/lesson', perms('view_lesson'), scope.curriculaOfCaller, { body: lessonListBody },
    ({ db, scope, body }) => listLessons(db, body, scopedCurricula(scope)),
    { summary: 'paged list of lesson (pageindex/pagesize/filter)' }),
  route('POST', '/lesson/update_reward_points', perms('update_lesson'), scope.wholeOrganisation, {},
    ({ db, caller }) => updateRewardPoints(db, actorOf(caller)),
    { status: 201, summary: 'recompute lesson reward points (answers 201)' }),
];
