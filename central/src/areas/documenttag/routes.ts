import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import { tagStore } from '../../content/tags';

const tags = tagStore('document');

export const documenttagRoutes: CentralRoute[] = [
  route('POST', '/documenttag/create', perms('create_documenttag'), scope.global, { body: tags.body }, ({ req, body, caller }) => tags.create(depsOf(req).db, body, actorOf(caller)), { summary: 'create document tag' }),
  route('DELETE', '/documenttag/:documenttagid', perms('delete_documenttag'), scope.global, { params: tags.params }, ({ req, params, caller }) => tags.remove(depsOf(req).db, params.documenttagid, actorOf(caller)), { summary: 'soft-delete document tag (isdeleted flag)' }),
  route('GET', '/documenttag/:documenttagid', perms('view_documenttag'), scope.global, { params: tags.params }, ({ req, params }) => tags.get(depsOf(req).db, params.documenttagid), { summary: 'get one document tag by id' }),
  route('PUT', '/documenttag/:documenttagid', perms('update_documenttag'), scope.global, { params: tags.params, body: tags.body }, ({ req, params, body, caller }) => tags.update(depsOf(req).db, params.documenttagid, body, actorOf(caller)), { summary: 'update document tag' }),
  route('POST', '/documenttag', perms('view_documenttag'), scope.global, { body: tags.listBody }, ({ req, body }) => tags.list(depsOf(req).db, body), { summary: 'paged list of document tag (pageindex/pagesize/filter)' }),
];
