import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  createQuestiontag,
  deleteQuestiontag,
  getQuestiontag,
  listQuestiontags,
  questiontagBody,
  questiontagListBody,
  questiontagParams,
  updateQuestiontag,
} from './store';

export const questiontagRoutes: CentralRoute[] = [
  route('POST', '/questiontag/create', perms('create_questiontag'), scope.global, { body: questiontagBody },
    ({ db, body, caller }) => createQuestiontag(db, body, actorOf(caller)), { summary: 'create question tag' }),
  route('DELETE', '/questiontag/:questiontagid', perms('delete_questiontag'), scope.global,
    { params: questiontagParams },
    ({ db, params, caller }) => deleteQuestiontag(db, params.questiontagid, actorOf(caller)),
    { summary: 'soft-delete question tag (isdeleted flag)' }),
  route('GET', '/questiontag/:questiontagid', perms('view_questiontag'), scope.global, { params: questiontagParams },
    ({ db, params }) => getQuestiontag(db, params.questiontagid), { summary: 'get one question tag by id' }),
  route('PUT', '/questiontag/:questiontagid', perms('update_questiontag'), scope.global,
    { params: questiontagParams, body: questiontagBody },
    ({ db, params, body, caller }) => updateQuestiontag(db, params.questiontagid, body, actorOf(caller)),
    { summary: 'update question tag' }),
  route('POST', '/questiontag', perms('view_questiontag'), scope.global, { body: questiontagListBody },
    ({ db, body }) => listQuestiontags(db, body),
    { summary: 'paged list of question tag (pageindex/pagesize/filter)' }),
];
