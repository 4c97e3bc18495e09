import { noInput, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  allRoles,
  bindBody,
  bindRoles,
  createRole,
  deleteRole,
  getRole,
  listRoles,
  permissionTree,
  permissionsByTitle,
  roleBody,
  roleListBody,
  roleParams,
  updateRole,
} from './store';


export const rolesRoutes: CentralRoute[] = [
  route('GET', '/roles/permissions', perms('view_role'), scope.global, noInput,
    ({ db }) => permissionsByTitle(db), { summary: 'flat permission list' }),
  route('GET', '/roles/:roleid', perms('view_role'), scope.global, { params: roleParams },
    ({ db, params }) => getRole(db, params.roleid), { summary: 'get one role by id' }),
  route('GET', '/roles/node/permissions', perms('view_role'), scope.global, noInput,
    ({ db }) => permissionTree(db), { summary: 'permission tree grouped by title' }),
  route('POST', '/roles', perms('view_role'), scope.global, { body: roleListBody },
    ({ db, body }) => listRoles(db, body), { summary: 'paged role list' }),
  route('POST', '/roles/create', perms('create_role'), scope.wholeOrganisation, { body: roleBody },
    ({ db, body, caller }) => createRole(db, body, actorOf(caller)), { summary: 'create role' }),
  route('POST', '/roles/user-bind-role', perms('update_user'), scope.staffOfCaller, { body: bindBody },
    ({ db, body }) => bindRoles(db, body), { summary: 'bind roles to a staff user' }),
  route('PUT', '/roles/:roleid', perms('update_role'), scope.wholeOrganisation, { params: roleParams, body: roleBody },
    ({ db, params, body, caller }) => updateRole(db, params.roleid, body, actorOf(caller)), { summary: 'update role' }),
  route('GET', '/roles', perms('view_role'), scope.global, noInput,
    ({ db }) => allRoles(db), { summary: 'all roles (unpaged)' }),
  route('DELETE', '/roles/:roleid', perms('delete_role'), scope.wholeOrganisation, { params: roleParams },
    ({ db, params }) => deleteRole(db, params.roleid), { summary: 'delete role (row removed)' }),
];
