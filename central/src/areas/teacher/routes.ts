import { perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { actorOf } from '../../http/context';
import { scope } from '../../http/scope';
import {
  createTeachers,
  createTeachersBody,
  createTeachersQuery,
  deleteTeacher,
  listTeachers,
  teacherListBody,
  teacherParams,
} from './store';

// Every route answers only within the caller's schools/countries; a teacher elsewhere is refused as an
// unknown one is ('Invalid teacher user id').
export const teacherRoutes: CentralRoute[] = [
  route('POST', '/teacher', perms('view_teacher'), scope.schoolsOfCaller, { body: teacherListBody },
    ({ db, scope, body }) => listTeachers(db, scope, body), { summary: 'paged teacher list' }),
  route('POST', '/teacher/create', roles('apikey', 'superadmin', 'admin'), scope.schoolsOfCaller,
    { query: createTeachersQuery, body: createTeachersBody },
    ({ config, db, scope, caller, query, body }) =>
      createTeachers(db, scope, config, body, query.cloud === 'true', actorOf(caller)),
    { summary: 'bulk-create teachers (school users)' }),
  route('DELETE', '/teacher/:schooluserid', perms('delete_teacher'), scope.schoolsOfCaller, { params: teacherParams },
    ({ db, scope, caller, params }) => deleteTeacher(db, scope, params.schooluserid, actorOf(caller)),
    { summary: 'soft-delete a teacher school user (isdeleted flag)' }),
];
