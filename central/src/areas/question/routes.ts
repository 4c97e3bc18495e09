import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const questionRoutes: CentralRoute[] = [
  route('POST', '/question/create', perms('create_question'), noInput, pending, { summary: 'create question' }),
  route('DELETE', '/question/:questionid', perms('delete_question'), noInput, pending, { summary: 'soft-delete question (isdeleted flag)' }),
  route('GET', '/question/:questionid', perms('view_question'), noInput, pending, { summary: 'get one question by id' }),
  route('PUT', '/question/:questionid', perms('update_question'), noInput, pending, { summary: 'update question' }),
  route('POST', '/question', perms('view_question'), noInput, pending, { summary: 'paged list of question (pageindex/pagesize/filter)' }),
  route('POST', '/question/search', perms('view_question'), noInput, pending, { summary: 'paged question list, filters OR-combined' }),
  route('DELETE', '/question/tag/:questionid/:tag', perms('update_question'), noInput, pending, { summary: 'remove a tag from a question' }),
  route('GET', '/question/tag/:questionid/:tag', perms('update_question'), noInput, pending, { summary: 'add a tag to a question (GET with side effect)' }),
  route('PUT', '/question/activate/:questionid', perms('update_question'), noInput, pending, { summary: 'set question status active' }),
  route('PUT', '/question/:questionid/questionidentifier/:questionidentifier', perms('update_question'), noInput, pending, { summary: 'set the identifier of a question' }),
  route('PUT', '/question/deactivate/:questionid', perms('update_question'), noInput, pending, { summary: 'set question status inactive' }),
];
