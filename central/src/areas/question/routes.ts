import { perms, route } from '@lms/shared';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  changeTag, createQuestion, deleteQuestion, getQuestion, identifierParams, listQuestions, questionBody, questionListBody, questionParams, renameQuestion,
  setQuestionStatus, tagParams, updateQuestion,
} from './store';

// Activate, deactivate and rename take no body: the admin UI sends its HTTP options object as one.
export const questionRoutes: CentralRoute[] = [
  route('POST', '/question/create', perms('create_question'), scope.global, { body: questionBody }, ({ req, body, caller }) => createQuestion(depsOf(req).db, body, actorOf(caller)), { summary: 'create question' }),
  route('DELETE', '/question/:questionid', perms('delete_question'), scope.global, { params: questionParams }, ({ req, params, caller }) => deleteQuestion(depsOf(req).db, params.questionid, actorOf(caller), caller), { summary: 'soft-delete question (isdeleted flag)' }),
  route('GET', '/question/:questionid', perms('view_question'), scope.global, { params: questionParams }, ({ req, params }) => getQuestion(depsOf(req).db, params.questionid), { summary: 'get one question by id' }),
  route('PUT', '/question/:questionid', perms('update_question'), scope.global, { params: questionParams, body: questionBody }, ({ req, params, body, caller }) => updateQuestion(depsOf(req).db, params.questionid, body, actorOf(caller)), { summary: 'update question' }),
  route('POST', '/question', perms('view_question'), scope.global, { body: questionListBody }, ({ req, body }) => listQuestions(depsOf(req).db, body, 'and'), { summary: 'paged list of question (pageindex/pagesize/filter)' }),
  route('POST', '/question/search', perms('view_question'), scope.global, { body: questionListBody }, ({ req, body }) => listQuestions(depsOf(req).db, body, 'or'), { summary: 'paged question list, filters OR-combined' }),
  route('DELETE', '/question/tag/:questionid/:tag', perms('update_question'), scope.global, { params: tagParams }, ({ req, params, caller }) => changeTag(depsOf(req).db, params.questionid, params.tag, false, actorOf(caller)), { summary: 'remove a tag from a question' }),
  route('GET', '/question/tag/:questionid/:tag', perms('update_question'), scope.global, { params: tagParams }, ({ req, params, caller }) => changeTag(depsOf(req).db, params.questionid, params.tag, true, actorOf(caller)), { summary: 'add a tag to a question (GET with side effect)' }),
  route('PUT', '/question/activate/:questionid', perms('update_question'), scope.global, { params: questionParams }, ({ req, params }) => setQuestionStatus(depsOf(req).db, params.questionid, true), { summary: 'set question status active' }),
  route('PUT', '/question/:questionid/questionidentifier/:questionidentifier', perms('update_question'), scope.global, { params: identifierParams }, ({ req, params, caller }) => renameQuestion(depsOf(req).db, params.questionid, params.questionidentifier, actorOf(caller)), { summary: 'set the identifier of a question' }),
  route('PUT', '/question/deactivate/:questionid', perms('update_question'), scope.global, { params: questionParams }, ({ req, params, caller }) => setQuestionStatus(depsOf(req).db, params.questionid, false, caller), { summary: 'set question status inactive' }),
];
