import { anyUser, perms, route } from '@lms/shared';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  allLevels, createLevel, deleteLevel, getLevel, levelAllQuery, levelBody, levelListBody, levelParams, listLevels, setLevelStatus, updateLevel, updateQuizPoints,
} from './store';

export const levelRoutes: CentralRoute[] = [
  route('GET', '/level/all', anyUser(), scope.curriculaOfCaller, { query: levelAllQuery }, ({ req, scope, query }) => allLevels(depsOf(req).db, query, scopedCurricula(scope)), { summary: 'unpaged level list (query filters)' }),
  route('POST', '/level/create', perms('create_level'), scope.curriculaOfCaller, { body: levelBody }, ({ req, body, caller }) => createLevel(depsOf(req).db, body, actorOf(caller)), { summary: 'create level' }),
  route('DELETE', '/level/:levelid', perms('delete_level'), scope.curriculaOfCaller, { params: levelParams }, ({ req, params, caller }) => deleteLevel(depsOf(req).db, params.levelid, actorOf(caller)), { summary: 'soft-delete level (isdeleted flag)' }),
  route('PUT', '/level/deactivate/:levelid', perms('update_level'), scope.curriculaOfCaller, { params: levelParams }, ({ req, params }) => setLevelStatus(depsOf(req).db, params.levelid, false), { summary: 'set level status inactive' }),
  route('PUT', '/level/activate/:levelid', perms('update_level'), scope.curriculaOfCaller, { params: levelParams }, ({ req, params }) => setLevelStatus(depsOf(req).db, params.levelid, true), { summary: 'set level status active' }),
  route('GET', '/level/:levelid', perms('view_level'), scope.curriculaOfCaller, { params: levelParams }, ({ req, params }) => getLevel(depsOf(req).db, params.levelid), { summary: 'get one level by id' }),
  route('PUT', '/level/:levelid', perms('update_level'), scope.curriculaOfCaller, { params: levelParams, body: levelBody }, ({ req, params, body, caller }) => updateLevel(depsOf(req).db, params.levelid, body, actorOf(caller)), { summary: 'update level' }),
  route('POST', '/level', perms('view_level'), scope.curriculaOfCaller, { body: levelListBody }, ({ req, scope, body }) => listLevels(depsOf(req).db, body, scopedCurricula(scope)), { summary: 'paged list of level (pageindex/pagesize/filter)' }),
  route('POST', '/level/update_quiz_points', perms('update_level'), scope.wholeOrganisation, {}, ({ req, caller }) => updateQuizPoints(depsOf(req).db, actorOf(caller)), { status: 201, summary: 'recompute level quiz points (answers 201)' }),
];
