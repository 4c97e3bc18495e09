import { anyUser, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { levelQuizQuestionKind, questionLinks, setLesson, setLessonInput } from '../../content/question-links';

const link = questionLinks(levelQuizQuestionKind);
const input = link.inputs;

export const levelquizquestionRoutes: CentralRoute[] = [
  route('GET', '/level/quiz/question/:levelid', perms('view_level_quiz'), scope.curriculaOfCaller, input.list,
    link.list, { summary: 'questions linked to a level quiz' }),
  route('POST', '/level/quiz/question/:levelid/:questionid/:levelquizquestionorder',
    perms('create_level_quiz_question'),
    scope.curriculaOfCaller, input.create, link.create, { summary: 'link a question to a level quiz at an order' }),
  route('PUT', '/level/quiz/question/activate/:levelquizquestionid', perms('deactivate_level_quiz_question'),
    scope.curriculaOfCaller, input.id, link.status(true), { summary: 'set level-quiz-question link status active' }),
  route('PUT', '/level/quiz/question/deactivate/:levelquizquestionid', perms('deactivate_level_quiz_question'),
    scope.curriculaOfCaller, input.id, link.status(false), { summary: 'set level-quiz-question link status inactive' }),
  route('PUT', '/level/quiz/question/order/:levelquizquestionid/:levelquizquestionorder',
    perms('reorder_level_quiz_question'),
    scope.curriculaOfCaller, input.order, link.order, { summary: 'set display order of level-quiz-question link' }),
  route('DELETE', '/level/quiz/question/:levelquizquestionid', perms('delete_level_quiz_question'),
    scope.curriculaOfCaller, input.id, link.remove, { summary: 'delete level-quiz-question link (row removed)' }),
  route('PUT', '/level/quiz/question/setlesson/:levelquizquestionid', anyUser(), scope.curriculaOfCaller,
    setLessonInput, setLesson, { summary: 'attach a lesson to a level-quiz-question link' }),
];
