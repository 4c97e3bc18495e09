import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonpracticequestionRoutes: CentralRoute[] = [
  route('GET', '/lesson/practice/question/:lessonpracticeid', perms('edit_practice_question'), noInput, pending, { summary: 'questions linked to a practice' }),
  route('POST', '/lesson/practice/question/:lessonpracticeid/:questionid/:lessonpracticequestionorder', perms('edit_practice_question'), noInput, pending, { summary: 'link a question to a practice at an order' }),
  route('PUT', '/lesson/practice/question/activate/:lessonpracticequestionid', perms('edit_practice_question'), noInput, pending, { summary: 'set practice-question link status active' }),
  route('PUT', '/lesson/practice/question/deactivate/:lessonpracticequestionid', perms('edit_practice_question'), noInput, pending, { summary: 'set practice-question link status inactive' }),
  route('PUT', '/lesson/practice/question/order/:lessonpracticequestionid/:lessonpracticequestionorder', perms('edit_practice_question'), noInput, pending, { summary: 'set display order of practice-question link' }),
  route('DELETE', '/lesson/practice/question/:lessonpracticequestionid', perms('edit_practice_question'), noInput, pending, { summary: 'delete practice-question link (row removed)' }),
];
