import { noInput, perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope } from '../../http/scope';
import type { CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  allRoles, bindBody, bindRoles, createRole, deleteRole, getRole, listRoles, permissionTree, permissionsByTitle, roleBody, roleListBody,
  roleParams, updateRole,
} from './store';


export const rolesRoutes: CentralRoute[] = [
  route('GET', '/roles/permissions', perms('view_role'), scope.global, noInput, ({ req }) => permissionsByTitle(depsOf(req).db), { summary: 'flat permission list' }),
  route('GET', '/roles/:roleid', perms('view_role'), scope.global, { params: roleParams }, ({ req, params }) => getRole(depsOf(req).db, params.roleid), { summary: 'get one role by id' }),
  route('GET', '/roles/node/permissions', perms('view_role'), scope.global, noInput, ({ req }) => permissionTree(depsOf(req).db), { summary: 'permission tree grouped by title' }),
  route('POST', '/roles', perms('view_role'), scope.global, { body: roleListBody }, ({ req, body }) => listRoles(depsOf(req).db, body), { summary: 'paged role list' }),
  route('POST', '/roles/create', perms('create_role'), scope.wholeOrganisation, { body: roleBody }, ({ req, body, caller }) => createRole(depsOf(req).db, body, actorOf(caller)), { summary: 'create role' }),
  route('POST', '/roles/user-bind-role', perms('update_user'), scope.staffOfCaller, { body: bindBody }, ({ req, body }) => bindRoles(depsOf(req).db, body), { summary: 'bind roles to a staff user' }),
  route('PUT', '/roles/:roleid', perms('update_role'), scope.wholeOrganisation, { params: roleParams, body: roleBody }, ({ req, params, body, caller }) => updateRole(depsOf(req).db, params.roleid, body, actorOf(caller)), { summary: 'update role' }),
  route('GET', '/roles', perms('view_role'), scope.global, noInput, ({ req }) => allRoles(depsOf(req).db), { summary: 'all roles (unpaged)' }),
  route('DELETE', '/roles/:roleid', perms('delete_role'), scope.wholeOrganisation, { params: roleParams }, ({ req, params }) => deleteRole(depsOf(req).db, params.roleid), { summary: 'delete role (row removed)' }),
];
