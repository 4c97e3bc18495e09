import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const lessonquizquestionRoutes: CentralRoute[] = [
  route('GET', '/lesson/quiz/question/:lessonquizid', perms('edit_quiz_question'), noInput, pending, { summary: 'questions linked to a lesson quiz' }),
  route('POST', '/lesson/quiz/question/:lessonquizid/:questionid/:lessonquizquestionorder', perms('edit_quiz_question'), noInput, pending, { summary: 'link a question to a lesson quiz at an order' }),
  route('PUT', '/lesson/quiz/question/activate/:lessonquizquestionid', perms('edit_quiz_question'), noInput, pending, { summary: 'set quiz-question link status active' }),
  route('PUT', '/lesson/quiz/question/deactivate/:lessonquizquestionid', perms('edit_quiz_question'), noInput, pending, { summary: 'set quiz-question link status inactive' }),
  route('PUT', '/lesson/quiz/question/order/:lessonquizquestionid/:lessonquizquestionorder', perms('edit_quiz_question'), noInput, pending, { summary: 'set display order of quiz-question link' }),
  route('DELETE', '/lesson/quiz/question/:lessonquizquestionid', perms('edit_quiz_question'), noInput, pending, { summary: 'delete quiz-question link (row removed)' }),
];
