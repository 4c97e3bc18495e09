import { anyUser, noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const levelRoutes: CentralRoute[] = [
  route('GET', '/level/all', anyUser(), noInput, pending, { summary: 'unpaged level list (query filters)' }),
  route('POST', '/level/create', perms('create_level'), noInput, pending, { summary: 'create level' }),
  route('DELETE', '/level/:levelid', perms('delete_level'), noInput, pending, { summary: 'soft-delete level (isdeleted flag)' }),
  route('PUT', '/level/deactivate/:levelid', perms('update_level'), noInput, pending, { summary: 'set level status inactive' }),
  route('PUT', '/level/activate/:levelid', perms('update_level'), noInput, pending, { summary: 'set level status active' }),
  route('GET', '/level/:levelid', perms('view_level'), noInput, pending, { summary: 'get one level by id' }),
  route('PUT', '/level/:levelid', perms('update_level'), noInput, pending, { summary: 'update level' }),
  route('POST', '/level', perms('view_level'), noInput, pending, { summary: 'paged list of level (pageindex/pagesize/filter)' }),
  route('POST', '/level/update_quiz_points', perms('update_level'), noInput, pending, { summary: 'recompute level quiz points (answers 201)' }),
];
