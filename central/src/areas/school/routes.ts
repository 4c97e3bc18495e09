import { anyUser, perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { scope } from '../../http/scope';
import {
  allSchoolsQuery,
  countryCurriculumParams,
  countryParams,
  createSchool,
  createSchoolBody,
  curriculumQuery,
  deleteSchool,
  getSchool,
  listSchools,
  schoolCurriculums,
  schoolListBody,
  schoolParams,
  schoolsFor,
  schoolsFromLearners,
  schoolsOfCountry,
  schoolsWithCurriculum,
  updateSchool,
  updateSchoolBody,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a school outside them is
// refused as if it did not exist ('Invalid school id').
export const schoolRoutes: CentralRoute[] = [
  route('GET', '/school/all', anyUser(), scope.schoolsOfCaller, { query: allSchoolsQuery },
    ({ db, scope, query }) => schoolsFor(db, scope, query),
    { summary: 'unpaged school list (query countryid, school), scoped to token schools' }),
  route('GET', '/school', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.schoolsOfCaller, {},
    ({ db, scope }) => schoolsFromLearners(db, scope), { summary: 'all schools (report filter feed)' }),
  route('GET', '/school/country/:countryid', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller,
    { params: countryParams }, ({ db, scope, params }) => schoolsOfCountry(db, scope, params.countryid),
    { summary: 'schools of a country' }),
  route('GET', '/school/country/:countryid/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin'),
    scope.schoolsOfCaller, { params: countryCurriculumParams },
    ({ db, scope, params }) => schoolsOfCountry(db, scope, params.countryid, params.curriculumid),
    { summary: 'schools of a country that use a curriculum' }),
  route('GET', '/school/curriculumid', anyUser(), scope.schoolsOfCaller, { query: curriculumQuery },
    ({ db, scope, query }) => schoolsWithCurriculum(db, scope, query.curriculumid),
    { summary: 'schools using a curriculum (query curriculumid)' }),
  route('POST', '/school/create', perms('create_school'), scope.schoolsOfCaller, { body: createSchoolBody },
    ({ db, scope, caller, body }) => createSchool(db, scope, body, actorOf(caller)), { summary: 'create school' }),
  route('DELETE', '/school/:schoolid', perms('delete_school'), scope.schoolsOfCaller, { params: schoolParams },
    ({ db, scope, caller, params }) => deleteSchool(db, scope, params.schoolid, actorOf(caller)),
    { summary: 'soft-delete school (isdeleted flag)' }),
  route('GET', '/school/:schoolid', perms('view_school'), scope.schoolsOfCaller, { params: schoolParams },
    ({ db, scope, params }) => getSchool(db, scope, params.schoolid), { summary: 'get one school by id' }),
  route('PUT', '/school/update/:schoolid', perms('update_school'), scope.schoolsOfCaller,
    { params: schoolParams, body: updateSchoolBody },
    ({ db, scope, caller, params, body }) => updateSchool(db, scope, params.schoolid, body, actorOf(caller)),
    { summary: 'update school' }),
  route('POST', '/school', perms('view_school'), scope.schoolsOfCaller, { body: schoolListBody },
    ({ db, scope, body }) => listSchools(db, scope, body),
    { summary: 'paged list of school (pageindex/pagesize/filter)' }),
  route('GET', '/school/:schoolid/curriculums', perms('view_school'), scope.schoolsOfCaller, { params: schoolParams },
    ({ db, scope, params }) => schoolCurriculums(db, scope, params.schoolid),
    { summary: 'curricula assigned to a school' }),
];
