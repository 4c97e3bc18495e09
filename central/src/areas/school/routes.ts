import { anyUser, perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scope } from '../../http/scope';
import {
  allSchoolsQuery, countryCurriculumParams, countryParams, createSchool, createSchoolBody, curriculumQuery, deleteSchool, getSchool, listSchools, schoolCurriculums,
  schoolListBody, schoolParams, schoolsFor, schoolsFromLearners, schoolsOfCountry, schoolsWithCurriculum, updateSchool, updateSchoolBody,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a school outside them is
// refused as if it did not exist ('Invalid school id').
export const schoolRoutes: CentralRoute[] = [
  route('GET', '/school/all', anyUser(), scope.schoolsOfCaller, { query: allSchoolsQuery }, ({ req, scope, query }) => schoolsFor(depsOf(req).db, scope, query), { summary: 'unpaged school list (query countryid, school), scoped to token schools' }),
  route('GET', '/school', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.schoolsOfCaller, {}, ({ req, scope }) => schoolsFromLearners(depsOf(req).db, scope), { summary: 'all schools (report filter feed)' }),
  route('GET', '/school/country/:countryid', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller, { params: countryParams }, ({ req, scope, params }) => schoolsOfCountry(depsOf(req).db, scope, params.countryid), { summary: 'schools of a country' }),
  route('GET', '/school/country/:countryid/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller, { params: countryCurriculumParams }, ({ req, scope, params }) => schoolsOfCountry(depsOf(req).db, scope, params.countryid, params.curriculumid), { summary: 'schools of a country that use a curriculum' }),
  route('GET', '/school/curriculumid', anyUser(), scope.schoolsOfCaller, { query: curriculumQuery }, ({ req, scope, query }) => schoolsWithCurriculum(depsOf(req).db, scope, query.curriculumid), { summary: 'schools using a curriculum (query curriculumid)' }),
  route('POST', '/school/create', perms('create_school'), scope.schoolsOfCaller, { body: createSchoolBody }, ({ req, scope, caller, body }) => createSchool(depsOf(req).db, scope, body, actorOf(caller)), { summary: 'create school' }),
  route('DELETE', '/school/:schoolid', perms('delete_school'), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, caller, params }) => deleteSchool(depsOf(req).db, scope, params.schoolid, actorOf(caller)), { summary: 'soft-delete school (isdeleted flag)' }),
  route('GET', '/school/:schoolid', perms('view_school'), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, params }) => getSchool(depsOf(req).db, scope, params.schoolid), { summary: 'get one school by id' }),
  route('PUT', '/school/update/:schoolid', perms('update_school'), scope.schoolsOfCaller, { params: schoolParams, body: updateSchoolBody }, ({ req, scope, caller, params, body }) => updateSchool(depsOf(req).db, scope, params.schoolid, body, actorOf(caller)), { summary: 'update school' }),
  route('POST', '/school', perms('view_school'), scope.schoolsOfCaller, { body: schoolListBody }, ({ req, scope, body }) => listSchools(depsOf(req).db, scope, body), { summary: 'paged list of school (pageindex/pagesize/filter)' }),
  route('GET', '/school/:schoolid/curriculums', perms('view_school'), scope.schoolsOfCaller, { params: schoolParams }, ({ req, scope, params }) => schoolCurriculums(depsOf(req).db, scope, params.schoolid), { summary: 'curricula assigned to a school' }),
];
