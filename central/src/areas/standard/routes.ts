import { perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scopeOf } from '../../http/scope';
import {
  allStandards, allStandardsQuery, copySchoollessStandards, createStandard, deleteStandard, getStandard, listStandards, removeUnusedStandards, schoolParams,
  standardBody, standardListBody, standardParams, standardsOfSchool, updateStandard,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a class outside them is
// refused as if it did not exist ('Invalid standard id').
export const standardRoutes: CentralRoute[] = [
  route('GET', '/standard/all', roles('apikey', 'superadmin', 'admin', 'teacher'), { query: allStandardsQuery }, ({ req, caller, query }) => allStandards(depsOf(req).db, scopeOf(caller), query), { summary: 'unpaged class list (report filter feed; query standardname, schoolname)' }),
  route('POST', '/standard/create', perms('create_standard'), { body: standardBody }, ({ req, caller, body }) => createStandard(depsOf(req).db, scopeOf(caller), body, actorOf(caller)), { summary: 'create class (standard)' }),
  route('DELETE', '/standard/:standardid', perms('delete_standard'), { params: standardParams }, ({ req, caller, params }) => deleteStandard(depsOf(req).db, scopeOf(caller), params.standardid, actorOf(caller)), { summary: 'soft-delete class (standard) (isdeleted flag)' }),
  route('GET', '/standard/:standardid', perms('view_standard'), { params: standardParams }, ({ req, caller, params }) => getStandard(depsOf(req).db, scopeOf(caller), params.standardid), { summary: 'get one class (standard) by id' }),
  route('PUT', '/standard/:standardid', perms('update_standard'), { params: standardParams, body: standardBody }, ({ req, caller, params, body }) => updateStandard(depsOf(req).db, scopeOf(caller), params.standardid, body, actorOf(caller)), { summary: 'update class (standard)' }),
  route('POST', '/standard', perms('view_standard'), { body: standardListBody }, ({ req, caller, body }) => listStandards(depsOf(req).db, scopeOf(caller), body), { summary: 'paged list of class (standard) (pageindex/pagesize/filter)' }),
  route('POST', '/standard/migrate-standardid', roles('superadmin'), {}, ({ req, caller }) => copySchoollessStandards(depsOf(req).db, actorOf(caller)), { summary: 'data migration: class ids' }),
  route('POST', '/standard/remove-standardid', roles('superadmin'), {}, ({ req }) => removeUnusedStandards(depsOf(req).db), { summary: 'data migration: remove obsolete class rows' }),
  route('GET', '/standard/school/:schoolid', perms('view_standard'), { params: schoolParams }, ({ req, caller, params }) => standardsOfSchool(depsOf(req).db, scopeOf(caller), params.schoolid), { summary: 'classes of a school' }),
];
