import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { lessonItems, practiceKind } from '../../content/lesson-items';

const practice = lessonItems(practiceKind);
const input = practice.inputs;

export const lessonpracticeRoutes: CentralRoute[] = [
  route('GET', '/lesson/practice/:lessonid', perms('view_lessonpractice'), scope.curriculaOfCaller, input.list,
    practice.list, { summary: 'practices of a lesson' }),
  route('GET', '/lesson/practice/:lessonid/:lessonpracticeid', perms('view_lessonpractice'), scope.curriculaOfCaller,
    input.one, practice.one, { summary: 'one practice of a lesson' }),
  route('POST', '/lesson/practice/:lessonid', perms('create_lessonpractice'), scope.curriculaOfCaller, input.create,
    practice.create, { summary: 'add a practice to a lesson' }),
  route('PUT', '/lesson/practice/activate/:lessonpracticeid', perms('update_lessonpractice'), scope.curriculaOfCaller,
    input.id, practice.status(true), { summary: 'set lesson practice status active' }),
  route('PUT', '/lesson/practice/deactivate/:lessonpracticeid', perms('update_lessonpractice'), scope.curriculaOfCaller,
    input.id, practice.status(false), { summary: 'set lesson practice status inactive' }),
  route('PUT', '/lesson/practice/order/:lessonpracticeid/:lessonpracticeorder', perms('update_lessonpractice'),
    scope.curriculaOfCaller, input.order, practice.order, { summary: 'set display order of lesson practice' }),
  route('PUT', '/lesson/practice/:lessonpracticeid', perms('update_lessonpractice'), scope.curriculaOfCaller,
    input.update, practice.update, { summary: 'update lesson practice' }),
  route('DELETE', '/lesson/practice/:lessonpracticeid', perms('delete_lessonpractice'), scope.curriculaOfCaller,
    input.id, practice.remove, { summary: 'delete lesson practice (row removed)' }),
];
