import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const rolesRoutes: CentralRoute[] = [
  route('GET', '/roles/permissions', perms('view_role'), noInput, pending, { summary: 'flat permission list' }),
  route('GET', '/roles/:roleid', perms('view_role'), noInput, pending, { summary: 'get one role by id' }),
  route('GET', '/roles/node/permissions', perms('view_role'), noInput, pending, { summary: 'permission tree grouped by title' }),
  route('POST', '/roles', perms('view_role'), noInput, pending, { summary: 'paged role list' }),
  route('POST', '/roles/create', perms('create_role'), noInput, pending, { summary: 'create role' }),
  route('POST', '/roles/user-bind-role', perms('update_user'), noInput, pending, { summary: 'bind roles to a staff user' }),
  route('PUT', '/roles/:roleid', perms('update_role'), noInput, pending, { summary: 'update role' }),
  route('GET', '/roles', perms('view_role'), noInput, pending, { summary: 'all roles (unpaged)' }),
  route('DELETE', '/roles/:roleid', perms('delete_role'), noInput, pending, { summary: 'delete role (row removed)' }),
];
