import { anyUser, noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const feedbackRoutes: CentralRoute[] = [
  route('POST', '/feedback/create', anyUser(), noInput, pending, { summary: 'create feedback' }),
  route('POST', '/feedback', perms('view_feedback'), noInput, pending, { summary: 'paged list of feedback (pageindex/pagesize/filter)' }),
  route('GET', '/feedback/:feedbackid', perms('view_feedback'), noInput, pending, { summary: 'get one feedback by id' }),
];
