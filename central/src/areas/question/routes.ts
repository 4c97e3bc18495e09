import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  changeTag,
  createQuestion,
  deleteQuestion,
  getQuestion,
  identifierParams,
  listQuestions,
  questionBody,
  questionListBody,
  questionParams,
  renameQuestion,
  setQuestionStatus,
  tagParams,
  updateQuestion,
} from './store';

// Activate, deactivate and rename take no body: the admin UI sends its HTTP options object as one.
export const questionRoutes: CentralRoute[] = [
  route('POST', '/question/create', perms('create_question'), scope.global, { body: questionBody },
    ({ db, body, caller }) => createQuestion(db, body, actorOf(caller)), { summary: 'create question' }),
  route('DELETE', '/question/:questionid', perms('delete_question'), scope.global, { params: questionParams },
    ({ db, params, caller }) => deleteQuestion(db, params.questionid, actorOf(caller), caller),
    { summary: 'soft-delete question (isdeleted flag)' }),
  route('GET', '/question/:questionid', perms('view_question'), scope.global, { params: questionParams },
    ({ db, params }) => getQuestion(db, params.questionid), { summary: 'get one question by id' }),
  route('PUT', '/question/:questionid', perms('update_question'), scope.global,
    { params: questionParams, body: questionBody },
    ({ db, params, body, caller }) => updateQuestion(db, params.questionid, body, actorOf(caller)),
    { summary: 'update question' }),
  route('POST', '/question', perms('view_question'), scope.global, { body: questionListBody },
    ({ db, body }) => listQuestions(db, body, 'and'),
    { summary: 'paged list of question (pageindex/pagesize/filter)' }),
  route('POST', '/question/search', perms('view_question'), scope.global, { body: questionListBody },
    ({ db, body }) => listQuestions(db, body, 'or'), { summary: 'paged question list, filters OR-combined' }),
  route('DELETE', '/question/tag/:questionid/:tag', perms('update_question'), scope.global, { params: tagParams },
    ({ db, params, caller }) => changeTag(db, params.questionid, params.tag, false, actorOf(caller)),
    { summary: 'remove a tag from a question' }),
  route('GET', '/question/tag/:questionid/:tag', perms('update_question'), scope.global, { params: tagParams },
    ({ db, params, caller }) => changeTag(db, params.questionid, params.tag, true, actorOf(caller)),
    { summary: 'add a tag to a question (GET with side effect)' }),
  route('PUT', '/question/activate/:questionid', perms('update_question'), scope.global, { params: questionParams },
    ({ db, params }) => setQuestionStatus(db, params.questionid, true), { summary: 'set question status active' }),
  route('PUT', '/question/:questionid/questionidentifier/:questionidentifier', perms('update_question'), scope.global,
    { params: identifierParams },
    ({ db, params, caller }) => renameQuestion(db, params.questionid, params.questionidentifier, actorOf(caller)),
    { summary: 'set the identifier of a question' }),
  route('PUT', '/question/deactivate/:questionid', perms('update_question'), scope.global, { params: questionParams },
    ({ db, params, caller }) => setQuestionStatus(db, params.questionid, false, caller),
    { summary: 'set question status inactive' }),
];
