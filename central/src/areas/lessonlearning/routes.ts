import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonlearningRoutes: CentralRoute[] = [
  route('GET', '/lesson/learning/:lessonid', perms('view_lessonlearning'), noInput, pending, { summary: 'learning items of a lesson' }),
  route('GET', '/lesson/learning/:lessonid/:lessonlearningid', perms('view_lessonlearning'), noInput, pending, { summary: 'one learning item of a lesson' }),
  route('POST', '/lesson/learning/:lessonid', perms('create_lessonlearning'), noInput, pending, { summary: 'add a learning item to a lesson' }),
  route('PUT', '/lesson/learning/activate/:lessonlearningid', perms('update_lessonlearning'), noInput, pending, { summary: 'set lesson learning item status active' }),
  route('PUT', '/lesson/learning/deactivate/:lessonlearningid', perms('update_lessonlearning'), noInput, pending, { summary: 'set lesson learning item status inactive' }),
  route('PUT', '/lesson/learning/order/:lessonlearningid/:lessonlearningorder', perms('update_lessonlearning'), noInput, pending, { summary: 'set display order of lesson learning item' }),
  route('PUT', '/lesson/learning/:lessonlearningid', perms('update_lessonlearning'), noInput, pending, { summary: 'update lesson learning item' }),
  route('DELETE', '/lesson/learning/:lessonlearningid', perms('delete_lessonlearning'), noInput, pending, { summary: 'delete lesson learning item (row removed)' }),
];
