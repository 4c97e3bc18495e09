import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonplanRoutes: CentralRoute[] = [
  route('GET', '/lesson/plan/:lessonid', perms('view_lessonlearning'), noInput, pending, { summary: 'lesson plans of a lesson' }),
  route('GET', '/lesson/plan/:lessonid/:lessonplanid', perms('view_lessonlearning'), noInput, pending, { summary: 'one lesson plan of a lesson' }),
  route('POST', '/lesson/plan/:lessonid', perms('create_lessonlearning'), noInput, pending, { summary: 'add a lesson plan to a lesson' }),
  route('PUT', '/lesson/plan/activate/:lessonlearningid', perms('update_lessonlearning'), noInput, pending, { summary: 'set lesson plan status active' }),
  route('PUT', '/lesson/plan/deactivate/:lessonlearningid', perms('update_lessonlearning'), noInput, pending, { summary: 'set lesson plan status inactive' }),
  route('PUT', '/lesson/plan/order/:lessonlearningid/:lessonlearningorder', perms('update_lessonlearning'), noInput, pending, { summary: 'set display order of lesson plan' }),
  route('PUT', '/lesson/plan/:lessonplanid', perms('update_lessonlearning'), noInput, pending, { summary: 'update lesson plan' }),
  route('DELETE', '/lesson/plan/:lessonplanid', perms('delete_lessonlearning'), noInput, pending, { summary: 'delete lesson plan (row removed)' }),
];
