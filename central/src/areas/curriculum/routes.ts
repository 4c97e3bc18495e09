import { perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { scope, scopedCurricula } from '../../http/scope';
import {
  allCurricula,
  allCurriculaQuery,
  countryParams,
  createCurriculum,
  curriculaOfCountry,
  curriculumBody,
  curriculumListBody,
  curriculumMap,
  curriculumParams,
  curriculumTree,
  deleteCurriculum,
  getCurriculum,
  listCurricula,
  setCurriculumStatus,
  updateCurriculum,
} from './store';

// A staff account narrowed to some countries works on the curricula offered there (scope.curriculaOfCaller);
// activate/deactivate take no body (the admin UI sends its HTTP options object as one).
export const curriculumRoutes: CentralRoute[] = [
  route('GET', '/curriculum/all', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.curriculaOfCaller,
    { query: allCurriculaQuery }, ({ db, scope, query }) => allCurricula(db, query, scopedCurricula(scope)),
    { summary: 'unpaged curriculum list for filters (query filters)' }),
  route('POST', '/curriculum/create', perms('create_curriculum'), scope.curriculaOfCaller, { body: curriculumBody },
    ({ db, scope, body, caller }) => createCurriculum(db, body, caller, scope), { summary: 'create curriculum' }),
  route('DELETE', '/curriculum/:curriculumid', perms('delete_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams },
    ({ db, scope, params, caller }) =>
      deleteCurriculum(db, params.curriculumid, actorOf(caller), scopedCurricula(scope)),
    { summary: 'soft-delete curriculum (isdeleted flag)' }),
  route('PUT', '/curriculum/deactivate/:curriculumid', perms('update_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams },
    ({ db, scope, params }) => setCurriculumStatus(db, params.curriculumid, false, scopedCurricula(scope)),
    { summary: 'set curriculum status inactive' }),
  route('PUT', '/curriculum/activate/:curriculumid', perms('update_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams },
    ({ db, scope, params }) => setCurriculumStatus(db, params.curriculumid, true, scopedCurricula(scope)),
    { summary: 'set curriculum status active' }),
  route('GET', '/curriculum/map', perms('view_curriculum', 'view_lesson'), scope.curriculaOfCaller, {},
    ({ db, scope }) => curriculumMap(db, scopedCurricula(scope)),
    { summary: 'curriculum map (curricula with nested grades/levels/lessons)' }),
  route('GET', '/curriculum/tree', perms('view_curriculum'), scope.curriculaOfCaller, {},
    ({ db, scope }) => curriculumTree(db, scopedCurricula(scope)), { summary: 'tree of all curricula' }),
  route('GET', '/curriculum/tree/:curriculumid', perms('view_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams },
    ({ db, scope, params }) => curriculumTree(db, scopedCurricula(scope), params.curriculumid),
    { summary: 'tree of one curriculum' }),
  route('GET', '/curriculum/:curriculumid', perms('view_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams },
    ({ db, scope, params }) => getCurriculum(db, params.curriculumid, scopedCurricula(scope)),
    { summary: 'get one curriculum by id' }),
  route('PUT', '/curriculum/:curriculumid', perms('update_curriculum'), scope.curriculaOfCaller,
    { params: curriculumParams, body: curriculumBody },
    ({ db, scope, params, body, caller }) => updateCurriculum(db, params.curriculumid, body, caller, scope),
    { summary: 'update curriculum' }),
  route('POST', '/curriculum', perms('view_curriculum'), scope.curriculaOfCaller, { body: curriculumListBody },
    ({ db, scope, body }) => listCurricula(db, body, scopedCurricula(scope)),
    { summary: 'paged list of curriculum (pageindex/pagesize/filter)' }),
  route('GET', '/curriculum/country/:countryid', roles('apikey', 'superadmin', 'admin', 'teacher'),
    scope.curriculaOfCaller, { params: countryParams },
    ({ db, scope, params }) => curriculaOfCountry(db, params.countryid, scopedCurricula(scope)),
    { summary: 'curricula available in a country' }),
];
