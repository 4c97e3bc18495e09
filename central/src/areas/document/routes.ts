import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const documentRoutes: CentralRoute[] = [
  route('POST', '/document/upload', perms('create_document'), noInput, pending, { summary: 'multipart upload of media document(s) to object store' }),
  route('DELETE', '/document/:documentid', perms('delete_document'), noInput, pending, { summary: 'soft-delete document (isdeleted flag)' }),
  route('POST', '/document', perms('view_document'), noInput, pending, { summary: 'paged list of document (pageindex/pagesize/filter)' }),
  route('DELETE', '/document/tag/:documentid/:tag', perms('edit_document_tag'), noInput, pending, { summary: 'remove a tag from a document' }),
  route('GET', '/document/tag/:documentid/:tag', perms('view_document'), noInput, pending, { summary: 'add a tag to a document (GET with side effect)' }),
  route('GET', '/document/presign/:filename', perms('view_document'), noInput, pending, { summary: 'presigned object-store upload URL for a file name' }),
];
