import { noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { allCurricula, allCurriculaQuery, countryParams, curriculaOfCountry } from './store';

export const curriculumRoutes: CentralRoute[] = [
  route('GET', '/curriculum/all', roles('apikey', 'superadmin', 'admin', 'teacher'), { query: allCurriculaQuery }, ({ req, query }) => allCurricula(depsOf(req).db, query), { summary: 'unpaged curriculum list for filters (query filters)' }),
  route('POST', '/curriculum/create', perms('create_curriculum'), noInput, pending, { summary: 'create curriculum' }),
  route('DELETE', '/curriculum/:curriculumid', perms('delete_curriculum'), noInput, pending, { summary: 'soft-delete curriculum (isdeleted flag)' }),
  route('PUT', '/curriculum/deactivate/:curriculumid', perms('update_curriculum'), noInput, pending, { summary: 'set curriculum status inactive' }),
  route('PUT', '/curriculum/activate/:curriculumid', perms('update_curriculum'), noInput, pending, { summary: 'set curriculum status active' }),
  route('GET', '/curriculum/map', perms('view_curriculum', 'view_lesson'), noInput, pending, { summary: 'curriculum map (curricula with nested grades/levels/lessons)' }),
  route('GET', '/curriculum/tree', perms('view_curriculum'), noInput, pending, { summary: 'tree of all curricula' }),
  route('GET', '/curriculum/tree/:curriculumid', perms('view_curriculum'), noInput, pending, { summary: 'tree of one curriculum' }),
  route('GET', '/curriculum/:curriculumid', perms('view_curriculum'), noInput, pending, { summary: 'get one curriculum by id' }),
  route('PUT', '/curriculum/:curriculumid', perms('update_curriculum'), noInput, pending, { summary: 'update curriculum' }),
  route('POST', '/curriculum', perms('view_curriculum'), noInput, pending, { summary: 'paged list of curriculum (pageindex/pagesize/filter)' }),
  route('GET', '/curriculum/country/:countryid', roles('apikey', 'superadmin', 'admin', 'teacher'), { params: countryParams }, ({ req, params }) => curriculaOfCountry(depsOf(req).db, params.countryid), { summary: 'curricula available in a country' }),
];
