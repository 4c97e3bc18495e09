import { anyUser, httpError, perms } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { scope } from '../../http/scope';
import { FEEDBACK_BODY_LIMIT } from '../../http/uploads';
import {
  FEEDBACK_MESSAGES,
  createFeedback,
  feedbackBody,
  feedbackListBody,
  feedbackParams,
  getFeedback,
  listFeedback,
} from './store';

export const feedbackRoutes: CentralRoute[] = [
  route('POST', '/feedback/create', anyUser(), scope.schoolsOfCaller, { body: feedbackBody },
    ({ objects, db, body, caller }) => {
    // Feedback is a teacher's (a school user signed in on central): its pictures and row carry that account.
    if (caller.kind !== 'school') throw httpError(400, FEEDBACK_MESSAGES.notTeacher);
    return createFeedback(db, objects, body, caller.schooluserid);
  },
    { bodyLimit: FEEDBACK_BODY_LIMIT, summary: 'create feedback' }),
  route('POST', '/feedback', perms('view_feedback'), scope.schoolsOfCaller, { body: feedbackListBody },
    ({ db, scope, body }) => listFeedback(db, body, scope),
    { summary: 'paged list of feedback (pageindex/pagesize/filter)' }),
  route('GET', '/feedback/:feedbackid', perms('view_feedback'), scope.schoolsOfCaller, { params: feedbackParams },
    ({ db, scope, params }) => getFeedback(db, params.feedbackid, scope), { summary: 'get one feedback by id' }),
];
