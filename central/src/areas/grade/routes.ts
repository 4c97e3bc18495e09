import { anyUser, noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { curriculumParams, gradesOfCurriculum } from './store';

export const gradeRoutes: CentralRoute[] = [
  route('GET', '/grade/all', anyUser(), noInput, pending, { summary: 'unpaged grade list (query filters)' }),
  route('POST', '/grade/create', perms('create_grade'), noInput, pending, { summary: 'create grade' }),
  route('DELETE', '/grade/:gradeid', perms('delete_grade'), noInput, pending, { summary: 'soft-delete grade (isdeleted flag)' }),
  route('PUT', '/grade/deactivate/:gradeid', perms('update_grade'), noInput, pending, { summary: 'set grade status inactive' }),
  route('PUT', '/grade/activate/:gradeid', perms('update_grade'), noInput, pending, { summary: 'set grade status active' }),
  route('GET', '/grade/:gradeid', perms('view_grade'), noInput, pending, { summary: 'get one grade by id' }),
  route('GET', '/grade/curriculum/:curriculumid', roles('apikey', 'superadmin', 'admin', 'teacher'), { params: curriculumParams }, ({ req, params }) => gradesOfCurriculum(depsOf(req).db, params.curriculumid), { summary: 'grades of one curriculum (report filter feed)' }),
  route('PUT', '/grade/:gradeid', perms('update_grade'), noInput, pending, { summary: 'update grade' }),
  route('POST', '/grade', perms('view_grade'), noInput, pending, { summary: 'paged list of grade (pageindex/pagesize/filter)' }),
];
