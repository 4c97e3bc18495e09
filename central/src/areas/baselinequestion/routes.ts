import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  addBaselineQuestion,
  baselineQuestionBody,
  baselineQuestionParams,
  cloneBaselineQuestions,
  cloneBody,
  deleteBaselineQuestion,
  listBaselineQuestions,
  listParams,
  orderParams,
  setBaselineQuestionOrder,
  setBaselineQuestionStatus,
} from './store';

export const baselinequestionRoutes: CentralRoute[] = [
  route('POST', '/baselinequestion/create', perms('create_baseline-endline'), scope.curriculaOfCaller,
    { body: baselineQuestionBody }, ({ db, body, caller }) => addBaselineQuestion(db, body, actorOf(caller)),
    { summary: 'create baseline question' }),
  route('POST', '/baselinequestion/clone', perms('create_baseline-endline'), scope.curriculaOfCaller,
    { body: cloneBody }, ({ db, body, caller }) => cloneBaselineQuestions(db, body, actorOf(caller)),
    { summary: 'clone baseline questions into another assessment' }),
  route('PUT', '/baselinequestion/activate/:baselinequestionid', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineQuestionParams },
    ({ db, params, caller }) => setBaselineQuestionStatus(db, params.baselinequestionid, true, actorOf(caller)),
    { summary: 'set baseline question status active' }),
  route('PUT', '/baselinequestion/deactivate/:baselinequestionid', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: baselineQuestionParams },
    ({ db, params, caller }) => setBaselineQuestionStatus(db, params.baselinequestionid, false, actorOf(caller)),
    { summary: 'set baseline question status inactive' }),
  route('PUT', '/baselinequestion/order/:baselinequestionid/:baselinequestionorder', perms('update_baseline-endline'),
    scope.curriculaOfCaller, { params: orderParams },
    ({ db, params, caller }) =>
      setBaselineQuestionOrder(db, params.baselinequestionid, params.baselinequestionorder, actorOf(caller)),
    { summary: 'set display order of baseline question' }),
  route('DELETE', '/baselinequestion/:baselinequestionid', perms('delete_baseline-endline'), scope.curriculaOfCaller,
    { params: baselineQuestionParams },
    ({ db, params, caller }) => deleteBaselineQuestion(db, params.baselinequestionid, actorOf(caller)),
    { summary: 'soft-delete baseline question (isdeleted flag)' }),
  route('GET', '/baselinequestion/getall/:curriculumbaselineid', perms('view_baseline-endline'),
    scope.curriculaOfCaller, { params: listParams },
    ({ db, params }) => listBaselineQuestions(db, params.curriculumbaselineid),
    { summary: 'questions of one baseline/endline assessment' }),
];
