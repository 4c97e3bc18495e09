import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const subjectRoutes: CentralRoute[] = [
  route('POST', '/subject/create', perms('create_subject'), noInput, pending, { summary: 'create subject' }),
  route('POST', '/subject', perms('view_subject'), noInput, pending, { summary: 'paged list of subject (pageindex/pagesize/filter)' }),
  route('DELETE', '/subject/:subjectid', perms('delete_subject'), noInput, pending, { summary: 'soft-delete subject (isdeleted flag)' }),
  route('GET', '/subject/:subjectid', perms('view_subject'), noInput, pending, { summary: 'get one subject by id' }),
  route('PUT', '/subject/:subjectid', perms('update_subject'), noInput, pending, { summary: 'update subject' }),
];
