import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { questionLinks, quizQuestionKind } from '../../content/question-links';

const link = questionLinks(quizQuestionKind);
const input = link.inputs;

export const lessonquizquestionRoutes: CentralRoute[] = [
  route('GET', '/lesson/quiz/question/:lessonquizid', perms('edit_quiz_question'), scope.curriculaOfCaller, input.list,
    link.list, { summary: 'questions linked to a lesson quiz' }),
  route('POST', '/lesson/quiz/question/:lessonquizid/:questionid/:lessonquizquestionorder', perms('edit_quiz_question'),
    scope.curriculaOfCaller, input.create, link.create, { summary: 'link a question to a lesson quiz at an order' }),
  route('PUT', '/lesson/quiz/question/activate/:lessonquizquestionid', perms('edit_quiz_question'),
    scope.curriculaOfCaller, input.id, link.status(true), { summary: 'set quiz-question link status active' }),
  route('PUT', '/lesson/quiz/question/deactivate/:lessonquizquestionid', perms('edit_quiz_question'),
    scope.curriculaOfCaller, input.id, link.status(false), { summary: 'set quiz-question link status inactive' }),
  route('PUT', '/lesson/quiz/question/order/:lessonquizquestionid/:lessonquizquestionorder',
    perms('edit_quiz_question'),
    scope.curriculaOfCaller, input.order, link.order, { summary: 'set display order of quiz-question link' }),
  route('DELETE', '/lesson/quiz/question/:lessonquizquestionid', perms('edit_quiz_question'), scope.curriculaOfCaller,
    input.id, link.remove, { summary: 'delete quiz-question link (row removed)' }),
];
