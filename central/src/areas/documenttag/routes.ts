import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const documenttagRoutes: CentralRoute[] = [
  route('POST', '/documenttag/create', perms('create_documenttag'), noInput, pending, { summary: 'create document tag' }),
  route('DELETE', '/documenttag/:documenttagid', perms('delete_documenttag'), noInput, pending, { summary: 'soft-delete document tag (isdeleted flag)' }),
  route('GET', '/documenttag/:documenttagid', perms('view_documenttag'), noInput, pending, { summary: 'get one document tag by id' }),
  route('PUT', '/documenttag/:documenttagid', perms('update_documenttag'), noInput, pending, { summary: 'update document tag' }),
  route('POST', '/documenttag', perms('view_documenttag'), noInput, pending, { summary: 'paged list of document tag (pageindex/pagesize/filter)' }),
];
