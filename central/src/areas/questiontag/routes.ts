import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  createQuestiontag, deleteQuestiontag, getQuestiontag, listQuestiontags, questiontagBody, questiontagListBody, questiontagParams, updateQuestiontag,
} from './store';

export const questiontagRoutes: CentralRoute[] = [
  route('POST', '/questiontag/create', perms('create_questiontag'), scope.global, { body: questiontagBody }, ({ req, body, caller }) => createQuestiontag(depsOf(req).db, body, actorOf(caller)), { summary: 'create question tag' }),
  route('DELETE', '/questiontag/:questiontagid', perms('delete_questiontag'), scope.global, { params: questiontagParams }, ({ req, params, caller }) => deleteQuestiontag(depsOf(req).db, params.questiontagid, actorOf(caller)), { summary: 'soft-delete question tag (isdeleted flag)' }),
  route('GET', '/questiontag/:questiontagid', perms('view_questiontag'), scope.global, { params: questiontagParams }, ({ req, params }) => getQuestiontag(depsOf(req).db, params.questiontagid), { summary: 'get one question tag by id' }),
  route('PUT', '/questiontag/:questiontagid', perms('update_questiontag'), scope.global, { params: questiontagParams, body: questiontagBody }, ({ req, params, body, caller }) => updateQuestiontag(depsOf(req).db, params.questiontagid, body, actorOf(caller)), { summary: 'update question tag' }),
  route('POST', '/questiontag', perms('view_questiontag'), scope.global, { body: questiontagListBody }, ({ req, body }) => listQuestiontags(depsOf(req).db, body), { summary: 'paged list of question tag (pageindex/pagesize/filter)' }),
];
