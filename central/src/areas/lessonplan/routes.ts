import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { lessonItems, planKind } from '../../content/lesson-items';

const plan = lessonItems(planKind);
const input = plan.inputs;

// Plans are guarded by the learning permissions (the catalogue's gates). Activate, deactivate and order
// act on plans, the rows their paths name (the original changed learnings there).
export const lessonplanRoutes: CentralRoute[] = [
  route('GET', '/lesson/plan/:lessonid', perms('view_lessonlearning'), scope.curriculaOfCaller, input.list,
    plan.list, { summary: 'lesson plans of a lesson' }),
  route('GET', '/lesson/plan/:lessonid/:lessonplanid', perms('view_lessonlearning'), scope.curriculaOfCaller, input.one,
    plan.one, { summary: 'one lesson plan of a lesson' }),
  route('POST', '/lesson/plan/:lessonid', perms('create_lessonlearning'), scope.curriculaOfCaller, input.create,
    plan.create, { summary: 'add a lesson plan to a lesson' }),
  route('PUT', '/lesson/plan/activate/:lessonplanid', perms('update_lessonlearning'), scope.curriculaOfCaller, input.id,
    plan.status(true), { summary: 'set lesson plan status active' }),
  route('PUT', '/lesson/plan/deactivate/:lessonplanid', perms('update_lessonlearning'), scope.curriculaOfCaller,
    input.id, plan.status(false), { summary: 'set lesson plan status inactive' }),
  route('PUT', '/lesson/plan/order/:lessonplanid/:lessonplanorder', perms('update_lessonlearning'),
    scope.curriculaOfCaller, input.order, plan.order, { summary: 'set display order of lesson plan' }),
  route('PUT', '/lesson/plan/:lessonplanid', perms('update_lessonlearning'), scope.curriculaOfCaller, input.update,
    plan.update, { summary: 'update lesson plan' }),
  route('DELETE', '/lesson/plan/:lessonplanid', perms('delete_lessonlearning'), scope.curriculaOfCaller, input.id,
    plan.remove, { summary: 'delete lesson plan (row removed)' }),
];
