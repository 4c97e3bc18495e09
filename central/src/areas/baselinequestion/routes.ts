import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const baselinequestionRoutes: CentralRoute[] = [
  route('POST', '/baselinequestion/create', perms('create_baseline-endline'), noInput, pending, { summary: 'create baseline question' }),
  route('POST', '/baselinequestion/clone', perms('create_baseline-endline'), noInput, pending, { summary: 'clone baseline questions into another assessment' }),
  route('PUT', '/baselinequestion/activate/:baselinequestionid', perms('update_baseline-endline'), noInput, pending, { summary: 'set baseline question status active' }),
  route('PUT', '/baselinequestion/deactivate/:baselinequestionid', perms('update_baseline-endline'), noInput, pending, { summary: 'set baseline question status inactive' }),
  route('PUT', '/baselinequestion/order/:baselinequestionid/:baselinequestionorder', perms('update_baseline-endline'), noInput, pending, { summary: 'set display order of baseline question' }),
  route('DELETE', '/baselinequestion/:baselinequestionid', perms('delete_baseline-endline'), noInput, pending, { summary: 'soft-delete baseline question (isdeleted flag)' }),
  route('GET', '/baselinequestion/getall/:curriculumbaselineid', perms('view_baseline-endline'), noInput, pending, { summary: 'questions of one baseline/endline assessment' }),
];
