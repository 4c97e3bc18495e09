import { noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { configOf, depsOf } from '../../http/context';
import { createTeachers, createTeachersBody, createTeachersQuery } from './store';

export const teacherRoutes: CentralRoute[] = [
  route('POST', '/teacher', perms('view_teacher'), noInput, pending, { summary: 'paged teacher list' }),
  route('POST', '/teacher/create', roles('apikey', 'superadmin', 'admin'), { query: createTeachersQuery, body: createTeachersBody }, ({ req, caller, query, body }) => createTeachers(depsOf(req).db, configOf(req), body, query.cloud === 'true', caller.kind === 'staff' ? caller.lmsuserid : null), { summary: 'bulk-create teachers (school users)' }),
  route('DELETE', '/teacher/:schooluserid', perms('delete_teacher'), noInput, pending, { summary: 'delete a teacher school-user row (row removed)' }),
];
