import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { practiceQuestionKind, questionLinks } from '../../content/question-links';

const link = questionLinks(practiceQuestionKind);
const input = link.inputs;

export const lessonpracticequestionRoutes: CentralRoute[] = [
  route('GET', '/lesson/practice/question/:lessonpracticeid', perms('edit_practice_question'), scope.curriculaOfCaller,
    input.list, link.list, { summary: 'questions linked to a practice' }),
  route('POST', '/lesson/practice/question/:lessonpracticeid/:questionid/:lessonpracticequestionorder',
    perms('edit_practice_question'),
    scope.curriculaOfCaller, input.create, link.create, { summary: 'link a question to a practice at an order' }),
  route('PUT', '/lesson/practice/question/activate/:lessonpracticequestionid', perms('edit_practice_question'),
    scope.curriculaOfCaller, input.id, link.status(true), { summary: 'set practice-question link status active' }),
  route('PUT', '/lesson/practice/question/deactivate/:lessonpracticequestionid', perms('edit_practice_question'),
    scope.curriculaOfCaller, input.id, link.status(false), { summary: 'set practice-question link status inactive' }),
  route('PUT', '/lesson/practice/question/order/:lessonpracticequestionid/:lessonpracticequestionorder',
    perms('edit_practice_question'),
    scope.curriculaOfCaller, input.order, link.order, { summary: 'set display order of practice-question link' }),
  route('DELETE', '/lesson/practice/question/:lessonpracticequestionid', perms('edit_practice_question'),
    scope.curriculaOfCaller, input.id, link.remove, { summary: 'delete practice-question link (row removed)' }),
];
