import { perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { scope } from '../../http/scope';
import {
  allStandards,
  allStandardsQuery,
  copySchoollessStandards,
  createStandard,
  deleteStandard,
  getStandard,
  listStandards,
  removeUnusedStandards,
  schoolParams,
  standardBody,
  standardListBody,
  standardParams,
  standardsOfSchool,
  updateStandard,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a class outside them is
// refused as if it did not exist ('Invalid standard id').
export const standardRoutes: CentralRoute[] = [
  route('GET', '/standard/all', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.schoolsOfCaller,
    { query: allStandardsQuery }, ({ db, scope, query }) => allStandards(db, scope, query),
    { summary: 'unpaged class list (report filter feed; query standardname, schoolname)' }),
  route('POST', '/standard/create', perms('create_standard'), scope.schoolsOfCaller, { body: standardBody },
    ({ db, scope, caller, body }) => createStandard(db, scope, body, actorOf(caller)),
    { summary: 'create class (standard)' }),
  route('DELETE', '/standard/:standardid', perms('delete_standard'), scope.schoolsOfCaller, { params: standardParams },
    ({ db, scope, caller, params }) => deleteStandard(db, scope, params.standardid, actorOf(caller)),
    { summary: 'soft-delete class (standard) (isdeleted flag)' }),
  route('GET', '/standard/:standardid', perms('view_standard'), scope.schoolsOfCaller, { params: standardParams },
    ({ db, scope, params }) => getStandard(db, scope, params.standardid),
    { summary: 'get one class (standard) by id' }),
  route('PUT', '/standard/:standardid', perms('update_standard'), scope.schoolsOfCaller,
    { params: standardParams, body: standardBody },
    ({ db, scope, caller, params, body }) => updateStandard(db, scope, params.standardid, body, actorOf(caller)),
    { summary: 'update class (standard)' }),
  route('POST', '/standard', perms('view_standard'), scope.schoolsOfCaller, { body: standardListBody },
    ({ db, scope, body }) => listStandards(db, scope, body),
    { summary: 'paged list of class (standard) (pageindex/pagesize/filter)' }),
  route('POST', '/standard/migrate-standardid', roles('superadmin'), scope.wholeOrganisation, {},
    ({ db, caller }) => copySchoollessStandards(db, actorOf(caller)), { summary: 'data migration: class ids' }),
  route('POST', '/standard/remove-standardid', roles('superadmin'), scope.wholeOrganisation, {},
    ({ db }) => removeUnusedStandards(db), { summary: 'data migration: remove obsolete class rows' }),
  route('GET', '/standard/school/:schoolid', perms('view_standard'), scope.schoolsOfCaller, { params: schoolParams },
    ({ db, scope, params }) => standardsOfSchool(db, scope, params.schoolid), { summary: 'classes of a school' }),
];
