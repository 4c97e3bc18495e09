import { anyUser, perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { scopeOf } from '../../http/scope';
import {
  allSchoolsQuery, countryCurriculumParams, countryParams, createSchool, createSchoolBody, curriculumQuery, deleteSchool, getSchool, listSchools, schoolCurriculums,
  schoolListBody, schoolParams, schoolsFor, schoolsFromLearners, schoolsOfCountry, schoolsWithCurriculum, updateSchool, updateSchoolBody,
} from './store';

// Every list and id route answers only within the caller's schools/countries; a school outside them is
// refused as if it did not exist ('Invalid school id').
export const schoolRoutes: CentralRoute[] = [
  route('GET', '/school/all', anyUser(), { query: allSchoolsQuery }, ({ req, caller, query }) => schoolsFor(depsOf(req).db, scopeOf(caller), query), { summary: 'unpaged school list (query countryid, school), scoped to token schools' }),
  route('GET', '/school', roles('apikey', 'superadmin', 'admin', 'teacher'), {}, ({ req, caller }) => schoolsFromLearners(depsOf(req).db, scopeOf(caller)), { summary: 'all schools (report filter feed)' }),
  route('GET', '/school/country/:countryid', roles('apikey', 'superadmin', 'admin'), { params: countryParams }, ({ req, caller, params }) => schoolsOfCountry(depsOf(req).db, scopeOf(caller), params.countryid), { summary: 'schools of a country' }),
  route('GET', '/school/country/:countryid/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin'), { params: countryCurriculumParams }, ({ req, caller, params }) => schoolsOfCountry(depsOf(req).db, scopeOf(caller), params.countryid, params.curriculumid), { summary: 'schools of a country that use a curriculum' }),
  route('GET', '/school/curriculumid', anyUser(), { query: curriculumQuery }, ({ req, caller, query }) => schoolsWithCurriculum(depsOf(req).db, scopeOf(caller), query.curriculumid), { summary: 'schools using a curriculum (query curriculumid)' }),
  route('POST', '/school/create', perms('create_school'), { body: createSchoolBody }, ({ req, caller, body }) => createSchool(depsOf(req).db, scopeOf(caller), body, actorOf(caller)), { summary: 'create school' }),
  route('DELETE', '/school/:schoolid', perms('delete_school'), { params: schoolParams }, ({ req, caller, params }) => deleteSchool(depsOf(req).db, scopeOf(caller), params.schoolid, actorOf(caller)), { summary: 'soft-delete school (isdeleted flag)' }),
  route('GET', '/school/:schoolid', perms('view_school'), { params: schoolParams }, ({ req, caller, params }) => getSchool(depsOf(req).db, scopeOf(caller), params.schoolid), { summary: 'get one school by id' }),
  route('PUT', '/school/update/:schoolid', perms('update_school'), { params: schoolParams, body: updateSchoolBody }, ({ req, caller, params, body }) => updateSchool(depsOf(req).db, scopeOf(caller), params.schoolid, body, actorOf(caller)), { summary: 'update school' }),
  route('POST', '/school', perms('view_school'), { body: schoolListBody }, ({ req, caller, body }) => listSchools(depsOf(req).db, scopeOf(caller), body), { summary: 'paged list of school (pageindex/pagesize/filter)' }),
  route('GET', '/school/:schoolid/curriculums', perms('view_school'), { params: schoolParams }, ({ req, caller, params }) => schoolCurriculums(depsOf(req).db, scopeOf(caller), params.schoolid), { summary: 'curricula assigned to a school' }),
];
