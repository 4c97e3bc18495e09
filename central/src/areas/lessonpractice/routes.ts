import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonpracticeRoutes: CentralRoute[] = [
  route('GET', '/lesson/practice/:lessonid', perms('view_lessonpractice'), noInput, pending, { summary: 'practices of a lesson' }),
  route('GET', '/lesson/practice/:lessonid/:lessonpracticeid', perms('view_lessonpractice'), noInput, pending, { summary: 'one practice of a lesson' }),
  route('POST', '/lesson/practice/:lessonid', perms('create_lessonpractice'), noInput, pending, { summary: 'add a practice to a lesson' }),
  route('PUT', '/lesson/practice/activate/:lessonpracticeid', perms('update_lessonpractice'), noInput, pending, { summary: 'set lesson practice status active' }),
  route('PUT', '/lesson/practice/deactivate/:lessonpracticeid', perms('update_lessonpractice'), noInput, pending, { summary: 'set lesson practice status inactive' }),
  route('PUT', '/lesson/practice/order/:lessonpracticeid/:lessonpracticeorder', perms('update_lessonpractice'), noInput, pending, { summary: 'set display order of lesson practice' }),
  route('PUT', '/lesson/practice/:lessonpracticeid', perms('update_lessonpractice'), noInput, pending, { summary: 'update lesson practice' }),
  route('DELETE', '/lesson/practice/:lessonpracticeid', perms('delete_lessonpractice'), noInput, pending, { summary: 'delete lesson practice (row removed)' }),
];
