import { perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scope } from '../../http/scope';
import {
  allStandards, allStandardsQuery, copySchoollessStandards, createStandard, deleteStandard, getStandard, listStandards, removeUnusedStandards, schoolParams,
  standardBody, standardListBody, standardParams, standardsOfSchool, updateStandard,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a class outside them is
// refused as if it did not exist ('Invalid standard id').
export const standardRoutes: CentralRoute[] = [
  route('GET', '/standard/all', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.schoolsOfCaller, { query: allStandardsQuery }, ({ req, scope, query }) => allStandards(depsOf(req).db, scope, query), { summary: 'unpaged class list (report filter feed; query standardname, schoolname)' }),
  route('POST', '/standard/create', perms('create_standard'), scope.schoolsOfCaller, { body: standardBody }, ({ req, scope, caller, body }) => createStandard(depsOf(req).db, scope, body, actorOf(caller)), { summary: 'create class (standard)' }),
  route('DELETE', '/standard/:standardid', perms('delete_standard'), scope.schoolsOfCaller, { params: standardParams }, ({ req, scope, caller, params }) => deleteStandard(depsOf(req).db, scope, params.standardid, actorOf(caller)), { summary: 'soft-delete class (standard) (isdeleted flag)' }),
  route('GET', '/standard/:standardid', perms('view_standard'), scope.schoolsOfCaller, { params: standardParams }, ({ req, scope, params }) => getStandard(depsOf(req).db, scope, params.standardid), { summary: 'get one class (standard) by id' }),
  route('PUT', '/standard/:standardid', perms('update_standard'), scope.schoolsOfCaller, { params: standardParams, body: standardBody }, ({ req, scope, caller, params, body }) => updateStandard(depsOf(req).db, scope, params.standardid, body, actorOf(caller)), { summary: 'update class (standard)' }),
  route('POST', '/standard', perms('view_standard'), scope.schoolsOfCaller, { body: standardListBody }, ({ req, scope, body }) => listStandards(depsOf(req).db, scope, body), { summary: 'paged list of class (standard) (pageindex/pagesize/filter)' }),
  route('POST', '/standard/migrate-standardid', roles('superadmin'), scope.wholeOrganisation, {}, ({ req, caller }) => copySchoollessStandards(depsOf(req).db, actorOf(caller)), { summary: 'data migration: class ids' }),
  route('POST', '/standard/remove-standardid', roles('superadmin'), scope.wholeOrganisation, {}, ({ req }) => removeUnusedStandards(depsOf(req).db), { summary: 'data migration: remove obsolete class rows' }),
  route('GET', '/standard/school/:schoolid', perms('view_standard'), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, params }) => standardsOfSchool(depsOf(req).db, scope, params.schoolid), { summary: 'classes of a school' }),
];
