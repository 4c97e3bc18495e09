import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const userRoutes: CentralRoute[] = [
  route('POST', '/user/create', perms('create_user'), noInput, pending, { summary: 'create staff user and bind lmsuserroles' }),
  route('PUT', '/user/:lmsuserid', perms('update_user'), noInput, pending, { summary: 'update staff user' }),
  route('DELETE', '/user/:lmsuserid', perms('delete_user'), noInput, pending, { summary: 'disable staff user and unbind roles' }),
  route('POST', '/user', perms('view_user'), noInput, pending, { summary: 'paged list of staff user (pageindex/pagesize/filter)' }),
  route('GET', '/user/:lmsuserid', perms('view_user'), noInput, pending, { summary: 'get one staff user by id' }),
];
