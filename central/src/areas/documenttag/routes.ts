import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { tagStore } from '../../content/tags';

const tags = tagStore('document');

export const documenttagRoutes: CentralRoute[] = [
  route('POST', '/documenttag/create', perms('create_documenttag'), scope.global, { body: tags.body },
    ({ db, body, caller }) => tags.create(db, body, actorOf(caller)), { summary: 'create document tag' }),
  route('DELETE', '/documenttag/:documenttagid', perms('delete_documenttag'), scope.global, { params: tags.params },
    ({ db, params, caller }) => tags.remove(db, params.documenttagid, actorOf(caller)),
    { summary: 'soft-delete document tag (isdeleted flag)' }),
  route('GET', '/documenttag/:documenttagid', perms('view_documenttag'), scope.global, { params: tags.params },
    ({ db, params }) => tags.get(db, params.documenttagid), { summary: 'get one document tag by id' }),
  route('PUT', '/documenttag/:documenttagid', perms('update_documenttag'), scope.global,
    { params: tags.params, body: tags.body },
    ({ db, params, body, caller }) => tags.update(db, params.documenttagid, body, actorOf(caller)),
    { summary: 'update document tag' }),
  route('POST', '/documenttag', perms('view_documenttag'), scope.global, { body: tags.listBody },
    ({ db, body }) => tags.list(db, body), { summary: 'paged list of document tag (pageindex/pagesize/filter)' }),
];
