import { anyUser, noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonRoutes: CentralRoute[] = [
  route('GET', '/lesson/all', anyUser(), noInput, pending, { summary: 'unpaged lesson list (query filters)' }),
  route('POST', '/lesson/create', perms('create_lesson'), noInput, pending, { summary: 'create lesson' }),
  route('DELETE', '/lesson/:lessonid', perms('delete_lesson'), noInput, pending, { summary: 'soft-delete lesson (isdeleted flag)' }),
  route('PUT', '/lesson/deactivate/:lessonid', perms('update_lesson'), noInput, pending, { summary: 'set lesson status inactive' }),
  route('PUT', '/lesson/activate/:lessonid', perms('update_lesson'), noInput, pending, { summary: 'set lesson status active' }),
  route('GET', '/lesson/:lessonid', perms('view_lesson'), noInput, pending, { summary: 'get one lesson by id' }),
  route('PUT', '/lesson/:lessonid', perms('update_lesson'), noInput, pending, { summary: 'update lesson' }),
  route('POST', '/lesson', perms('view_lesson'), noInput, pending, { summary: 'paged list of lesson (pageindex/pagesize/filter)' }),
  route('POST', '/lesson/update_reward_points', perms('update_lesson'), noInput, pending, { summary: 'recompute lesson reward points (answers 201)' }),
];
