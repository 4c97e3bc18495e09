import { anyUser, perms, route } from '@lms/shared';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  allLessons, createLesson, deleteLesson, getLesson, lessonAllQuery, lessonBody, lessonListBody, lessonParams, listLessons, setLessonStatus, updateLesson, updateRewardPoints,
} from './store';

export const lessonRoutes: CentralRoute[] = [
  route('GET', '/lesson/all', anyUser(), scope.curriculaOfCaller, { query: lessonAllQuery }, ({ req, scope, query }) => allLessons(depsOf(req).db, query, scopedCurricula(scope)), { summary: 'unpaged lesson list (query filters)' }),
  route('POST', '/lesson/create', perms('create_lesson'), scope.curriculaOfCaller, { body: lessonBody }, ({ req, body, caller }) => createLesson(depsOf(req).db, body, actorOf(caller)), { summary: 'create lesson' }),
  route('DELETE', '/lesson/:lessonid', perms('delete_lesson'), scope.curriculaOfCaller, { params: lessonParams }, ({ req, params, caller }) => deleteLesson(depsOf(req).db, params.lessonid, actorOf(caller)), { summary: 'soft-delete lesson (isdeleted flag)' }),
  route('PUT', '/lesson/deactivate/:lessonid', perms('update_lesson'), scope.curriculaOfCaller, { params: lessonParams }, ({ req, params }) => setLessonStatus(depsOf(req).db, params.lessonid, false), { summary: 'set lesson status inactive' }),
  route('PUT', '/lesson/activate/:lessonid', perms('update_lesson'), scope.curriculaOfCaller, { params: lessonParams }, ({ req, params }) => setLessonStatus(depsOf(req).db, params.lessonid, true), { summary: 'set lesson status active' }),
  route('GET', '/lesson/:lessonid', perms('view_lesson'), scope.curriculaOfCaller, { params: lessonParams }, ({ req, params }) => getLesson(depsOf(req).db, params.lessonid), { summary: 'get one lesson by id' }),
  route('PUT', '/lesson/:lessonid', perms('update_lesson'), scope.curriculaOfCaller, { params: lessonParams, body: lessonBody }, ({ req, params, body, caller }) => updateLesson(depsOf(req).db, params.lessonid, body, actorOf(caller)), { summary: 'update lesson' }),
  route('POST', '/lesson', perms('view_lesson'), scope.curriculaOfCaller, { body: lessonListBody }, ({ req, scope, body }) => listLessons(depsOf(req).db, body, scopedCurricula(scope)), { summary: 'paged list of lesson (pageindex/pagesize/filter)' }),
  route('POST', '/lesson/update_reward_points', perms('update_lesson'), scope.wholeOrganisation, {}, ({ req, caller }) => updateRewardPoints(depsOf(req).db, actorOf(caller)), { status: 201, summary: 'recompute lesson reward points (answers 201)' }),
];
