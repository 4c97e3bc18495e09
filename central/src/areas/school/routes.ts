import { anyUser, noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { schoolsFromLearners } from './store';

export const schoolRoutes: CentralRoute[] = [
  route('GET', '/school/all', anyUser(), noInput, pending, { summary: 'unpaged school list (query countryid, school), scoped to token schools' }),
  route('GET', '/school', roles('apikey', 'superadmin', 'admin', 'teacher'), noInput, ({ req }) => schoolsFromLearners(depsOf(req).db), { summary: 'all schools (report filter feed)' }),
  route('GET', '/school/country/:countryid', roles('apikey', 'superadmin', 'admin'), noInput, pending, { summary: 'schools of a country' }),
  route('GET', '/school/country/:countryid/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin'), noInput, pending, { summary: 'schools of a country that use a curriculum' }),
  route('GET', '/school/curriculumid', anyUser(), noInput, pending, { summary: 'schools using a curriculum (query curriculumid)' }),
  route('POST', '/school/create', perms('create_school'), noInput, pending, { summary: 'create school' }),
  route('DELETE', '/school/:schoolid', perms('delete_school'), noInput, pending, { summary: 'soft-delete school (isdeleted flag)' }),
  route('GET', '/school/:schoolid', perms('view_school'), noInput, pending, { summary: 'get one school by id' }),
  route('PUT', '/school/update/:schoolid', perms('update_school'), noInput, pending, { summary: 'update school' }),
  route('POST', '/school', perms('view_school'), noInput, pending, { summary: 'paged list of school (pageindex/pagesize/filter)' }),
  route('GET', '/school/:schoolid/curriculums', perms('view_school'), noInput, pending, { summary: 'curricula assigned to a school' }),
];
