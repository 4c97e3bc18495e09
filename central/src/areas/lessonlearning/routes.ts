import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { learningKind, lessonItems } from '../../content/lesson-items';

const learning = lessonItems(learningKind);
const input = learning.inputs;

export const lessonlearningRoutes: CentralRoute[] = [
  route('GET', '/lesson/learning/:lessonid', perms('view_lessonlearning'), scope.curriculaOfCaller, input.list,
    learning.list, { summary: 'learning items of a lesson' }),
  route('GET', '/lesson/learning/:lessonid/:lessonlearningid', perms('view_lessonlearning'), scope.curriculaOfCaller,
    input.one, learning.one, { summary: 'one learning item of a lesson' }),
  route('POST', '/lesson/learning/:lessonid', perms('create_lessonlearning'), scope.curriculaOfCaller, input.create,
    learning.create, { summary: 'add a learning item to a lesson' }),
  route('PUT', '/lesson/learning/activate/:lessonlearningid', perms('update_lessonlearning'), scope.curriculaOfCaller,
    input.id, learning.status(true), { summary: 'set lesson learning item status active' }),
  route('PUT', '/lesson/learning/deactivate/:lessonlearningid', perms('update_lessonlearning'), scope.curriculaOfCaller,
    input.id, learning.status(false), { summary: 'set lesson learning item status inactive' }),
  route('PUT', '/lesson/learning/order/:lessonlearningid/:lessonlearningorder', perms('update_lessonlearning'),
    scope.curriculaOfCaller, input.order, learning.order, { summary: 'set display order of lesson learning item' }),
  route('PUT', '/lesson/learning/:lessonlearningid', perms('update_lessonlearning'), scope.curriculaOfCaller,
    input.update, learning.update, { summary: 'update lesson learning item' }),
  route('DELETE', '/lesson/learning/:lessonlearningid', perms('delete_lessonlearning'), scope.curriculaOfCaller,
    input.id, learning.remove, { summary: 'delete lesson learning item (row removed)' }),
];
