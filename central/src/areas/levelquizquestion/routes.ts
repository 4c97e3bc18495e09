import { anyUser, noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const levelquizquestionRoutes: CentralRoute[] = [
  route('GET', '/level/quiz/question/:levelid', perms('view_level_quiz'), noInput, pending, { summary: 'questions linked to a level quiz' }),
  route('POST', '/level/quiz/question/:levelid/:questionid/:levelquizquestionorder', perms('create_level_quiz_question'), noInput, pending, { summary: 'link a question to a level quiz at an order' }),
  route('PUT', '/level/quiz/question/activate/:levelquizquestionid', perms('deactivate_level_quiz_question'), noInput, pending, { summary: 'set level-quiz-question link status active' }),
  route('PUT', '/level/quiz/question/deactivate/:levelquizquestionid', perms('deactivate_level_quiz_question'), noInput, pending, { summary: 'set level-quiz-question link status inactive' }),
  route('PUT', '/level/quiz/question/order/:levelquizquestionid/:levelquizquestionorder', perms('reorder_level_quiz_question'), noInput, pending, { summary: 'set display order of level-quiz-question link' }),
  route('DELETE', '/level/quiz/question/:levelquizquestionid', perms('delete_level_quiz_question'), noInput, pending, { summary: 'delete level-quiz-question link (row removed)' }),
  route('PUT', '/level/quiz/question/setlesson/:levelquizquestionid', anyUser(), noInput, pending, { summary: 'attach a lesson to a level-quiz-question link' }),
];
