import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { lessonItems, quizKind } from '../../content/lesson-items';

const quiz = lessonItems(quizKind);
const input = quiz.inputs;

export const lessonquizRoutes: CentralRoute[] = [
  route('GET', '/lesson/quiz/:lessonid', perms('view_lessonquiz'), scope.curriculaOfCaller, input.list,
    quiz.list, { summary: 'quizzes of a lesson' }),
  route('POST', '/lesson/quiz/:lessonid', perms('create_lessonquiz'), scope.curriculaOfCaller, input.create,
    quiz.create, { summary: 'add a quiz to a lesson' }),
  route('GET', '/lesson/quiz/:lessonid/:lessonquizid', perms('view_lessonquiz'), scope.curriculaOfCaller, input.one,
    quiz.one, { summary: 'one quiz of a lesson' }),
  route('PUT', '/lesson/quiz/activate/:lessonquizid', perms('update_lessonquiz'), scope.curriculaOfCaller, input.id,
    quiz.status(true), { summary: 'set lesson quiz status active' }),
  route('PUT', '/lesson/quiz/deactivate/:lessonquizid', perms('update_lessonquiz'), scope.curriculaOfCaller, input.id,
    quiz.status(false), { summary: 'set lesson quiz status inactive' }),
  route('PUT', '/lesson/quiz/order/:lessonquizid/:lessonquizorder', perms('update_lessonquiz'), scope.curriculaOfCaller,
    input.order, quiz.order, { summary: 'set display order of lesson quiz' }),
  route('PUT', '/lesson/quiz/:lessonquizid', perms('update_lessonquiz'), scope.curriculaOfCaller, input.update,
    quiz.update, { summary: 'update lesson quiz' }),
  route('DELETE', '/lesson/quiz/:lessonquizid', perms('delete_lessonquiz'), scope.curriculaOfCaller, input.id,
    quiz.remove, { summary: 'delete lesson quiz (row removed)' }),
];
