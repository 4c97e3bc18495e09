import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonquizRoutes: CentralRoute[] = [
  route('GET', '/lesson/quiz/:lessonid', perms('view_lessonquiz'), noInput, pending, { summary: 'quizzes of a lesson' }),
  route('POST', '/lesson/quiz/:lessonid', perms('create_lessonquiz'), noInput, pending, { summary: 'add a quiz to a lesson' }),
  route('GET', '/lesson/quiz/:lessonid/:lessonquizid', perms('view_lessonquiz'), noInput, pending, { summary: 'one quiz of a lesson' }),
  route('PUT', '/lesson/quiz/activate/:lessonquizid', perms('update_lessonquiz'), noInput, pending, { summary: 'set lesson quiz status active' }),
  route('PUT', '/lesson/quiz/deactivate/:lessonquizid', perms('update_lessonquiz'), noInput, pending, { summary: 'set lesson quiz status inactive' }),
  route('PUT', '/lesson/quiz/order/:lessonquizid/:lessonquizorder', perms('update_lessonquiz'), noInput, pending, { summary: 'set display order of lesson quiz' }),
  route('PUT', '/lesson/quiz/:lessonquizid', perms('update_lessonquiz'), noInput, pending, { summary: 'update lesson quiz' }),
  route('DELETE', '/lesson/quiz/:lessonquizid', perms('delete_lessonquiz'), noInput, pending, { summary: 'delete lesson quiz (row removed)' }),
];
