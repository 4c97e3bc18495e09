import { perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scopedCurriculumIds } from '../../http/scope';
import {
  allCurricula, allCurriculaQuery, countryParams, createCurriculum, curriculaOfCountry, curriculumBody, curriculumListBody, curriculumMap, curriculumParams,
  curriculumTree, deleteCurriculum, getCurriculum, listCurricula, setCurriculumStatus, updateCurriculum,
} from './store';

// A staff account narrowed to some countries works on the curricula offered there (scopedCurriculumIds);
// activate/deactivate take no body (the admin UI sends its HTTP options object as one).
export const curriculumRoutes: CentralRoute[] = [
  route('GET', '/curriculum/all', roles('apikey', 'superadmin', 'admin', 'teacher'), { query: allCurriculaQuery }, ({ req, query }) => allCurricula(depsOf(req).db, query), { summary: 'unpaged curriculum list for filters (query filters)' }),
  route('POST', '/curriculum/create', perms('create_curriculum'), { body: curriculumBody }, ({ req, body, caller }) => createCurriculum(depsOf(req).db, body, caller), { summary: 'create curriculum' }),
  route('DELETE', '/curriculum/:curriculumid', perms('delete_curriculum'), { params: curriculumParams }, ({ req, params, caller }) => deleteCurriculum(depsOf(req).db, params.curriculumid, actorOf(caller), scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'soft-delete curriculum (isdeleted flag)' }),
  route('PUT', '/curriculum/deactivate/:curriculumid', perms('update_curriculum'), { params: curriculumParams }, ({ req, params, caller }) => setCurriculumStatus(depsOf(req).db, params.curriculumid, false, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'set curriculum status inactive' }),
  route('PUT', '/curriculum/activate/:curriculumid', perms('update_curriculum'), { params: curriculumParams }, ({ req, params, caller }) => setCurriculumStatus(depsOf(req).db, params.curriculumid, true, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'set curriculum status active' }),
  route('GET', '/curriculum/map', perms('view_curriculum', 'view_lesson'), {}, ({ req, caller }) => curriculumMap(depsOf(req).db, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'curriculum map (curricula with nested grades/levels/lessons)' }),
  route('GET', '/curriculum/tree', perms('view_curriculum'), {}, ({ req, caller }) => curriculumTree(depsOf(req).db, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'tree of all curricula' }),
  route('GET', '/curriculum/tree/:curriculumid', perms('view_curriculum'), { params: curriculumParams }, ({ req, params, caller }) => curriculumTree(depsOf(req).db, scopedCurriculumIds(depsOf(req).db, caller), params.curriculumid), { summary: 'tree of one curriculum' }),
  route('GET', '/curriculum/:curriculumid', perms('view_curriculum'), { params: curriculumParams }, ({ req, params, caller }) => getCurriculum(depsOf(req).db, params.curriculumid, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'get one curriculum by id' }),
  route('PUT', '/curriculum/:curriculumid', perms('update_curriculum'), { params: curriculumParams, body: curriculumBody }, ({ req, params, body, caller }) => updateCurriculum(depsOf(req).db, params.curriculumid, body, caller, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'update curriculum' }),
  route('POST', '/curriculum', perms('view_curriculum'), { body: curriculumListBody }, ({ req, body, caller }) => listCurricula(depsOf(req).db, body, scopedCurriculumIds(depsOf(req).db, caller)), { summary: 'paged list of curriculum (pageindex/pagesize/filter)' }),
  route('GET', '/curriculum/country/:countryid', roles('apikey', 'superadmin', 'admin', 'teacher'), { params: countryParams }, ({ req, params }) => curriculaOfCountry(depsOf(req).db, params.countryid), { summary: 'curricula available in a country' }),
];
