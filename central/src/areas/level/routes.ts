import { anyUser, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope, scopedCurricula } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  allLevels,
  createLevel,
  deleteLevel,
  getLevel,
  levelAllQuery,
  levelBody,
  levelListBody,
  levelParams,
  listLevels,
  setLevelStatus,
  updateLevel,
  updateQuizPoints,
} from './store';

export const levelRoutes: CentralRoute[] = [
  route('GET', '/level/all', anyUser(), scope.curriculaOfCaller, { query: levelAllQuery },
    ({ db, scope, query }) => allLevels(db, query, scopedCurricula(scope)),
    { summary: 'unpaged level list (query filters)' }),
  route('POST', '/level/create', perms('create_level'), scope.curriculaOfCaller, { body: levelBody },
    ({ db, body, caller }) => createLevel(db, body, actorOf(caller)), { summary: 'create level' }),
  route('DELETE', '/level/:levelid', perms('delete_level'), scope.curriculaOfCaller, { params: levelParams },
    ({ db, params, caller }) => deleteLevel(db, params.levelid, actorOf(caller)),
    { summary: 'soft-delete level (isdeleted flag)' }),
  route('PUT', '/level/deactivate/:levelid', perms('update_level'), scope.curriculaOfCaller, { params: levelParams },
    ({ db, params }) => setLevelStatus(db, params.levelid, false), { summary: 'set level status inactive' }),
  route('PUT', '/level/activate/:levelid', perms('update_level'), scope.curriculaOfCaller, { params: levelParams },
    ({ db, params }) => setLevelStatus(db, params.levelid, true), { summary: 'set level status active' }),
  route('GET', '/level/:levelid', perms('view_level'), scope.curriculaOfCaller, { params: levelParams },
    ({ db, params }) => getLevel(db, params.levelid), { summary: 'get one level by id' }),
  route('PUT', '/level/:levelid', perms('update_level'), scope.curriculaOfCaller,
    { params: levelParams, body: levelBody },
    ({ db, params, body, caller }) => updateLevel(db, params.levelid, body, actorOf(caller)),
    { summary: 'update level' }),
  route('POST', '/level', perms('view_level'), scope.curriculaOfCaller, { body: levelListBody },
    ({ db, scope, body }) => listLevels(db, body, scopedCurricula(scope)),
    { summary: 'paged list of level (pageindex/pagesize/filter)' }),
  route('POST', '/level/update_quiz_points', perms('update_level'), scope.wholeOrganisation, {},
    ({ db, caller }) => updateQuizPoints(db, actorOf(caller)),
    { status: 201, summary: 'recompute level quiz points (answers 201)' }),
];
