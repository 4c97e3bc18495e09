import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const questiontagRoutes: CentralRoute[] = [
  route('POST', '/questiontag/create', perms('create_questiontag'), noInput, pending, { summary: 'create question tag' }),
  route('DELETE', '/questiontag/:questiontagid', perms('delete_questiontag'), noInput, pending, { summary: 'soft-delete question tag (isdeleted flag)' }),
  route('GET', '/questiontag/:questiontagid', perms('view_questiontag'), noInput, pending, { summary: 'get one question tag by id' }),
  route('PUT', '/questiontag/:questiontagid', perms('update_questiontag'), noInput, pending, { summary: 'update question tag' }),
  route('POST', '/questiontag', perms('view_questiontag'), noInput, pending, { summary: 'paged list of question tag (pageindex/pagesize/filter)' }),
];
