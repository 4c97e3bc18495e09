import { perms } from '@lms/shared';
import { route } from '../../http/route';
import { scope, scopedStaff } from '../../http/scope';
import type { CentralCtx, CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import {
  createUser,
  createUserBody,
  disableUser,
  getUser,
  listUsers,
  updateUser,
  updateUserBody,
  userListBody,
  userParams,
} from './store';

async function deleteUser({ db, res, params, caller }: CentralCtx<{ params: typeof userParams }>) {
  // The original answers 200 with an error body here, and the admin UI shows that message.
  if (caller.kind === 'staff' && caller.lmsuserid === params.lmsuserid) {
    res.status(200).json({ error: true, errormessage: 'Can not delete current user!', data: false });
    return undefined;
  }
  return disableUser(db, params.lmsuserid, actorOf(caller) ?? '');
}

// Staff accounts are narrowed like their callers (scope.staffOfCaller): a staff account narrowed to some
// schools or countries sees, edits, deletes and creates only accounts narrowed within its own.
export const userRoutes: CentralRoute[] = [
  route('POST', '/user/create', perms('create_user'), scope.staffOfCaller, { body: createUserBody },
    ({ db, body, caller }) => createUser(db, body, actorOf(caller)),
    { summary: 'create staff user and bind lmsuserroles' }),
  route('PUT', '/user/:lmsuserid', perms('update_user'), scope.staffOfCaller,
    { params: userParams, body: updateUserBody },
    ({ db, params, body, caller }) => updateUser(db, params.lmsuserid, body, actorOf(caller)),
    { summary: 'update staff user' }),
  route('DELETE', '/user/:lmsuserid', perms('delete_user'), scope.staffOfCaller, { params: userParams },
    deleteUser, { summary: 'disable staff user and unbind roles' }),
  route('POST', '/user', perms('view_user'), scope.staffOfCaller, { body: userListBody },
    ({ db, scope, body }) => listUsers(db, body, scopedStaff(scope)),
    { summary: 'paged list of staff user (pageindex/pagesize/filter)' }),
  route('GET', '/user/:lmsuserid', perms('view_user'), scope.staffOfCaller, { params: userParams },
    ({ db, params }) => getUser(db, params.lmsuserid), { summary: 'get one staff user by id' }),
];
