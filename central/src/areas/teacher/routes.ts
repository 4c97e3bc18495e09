import { noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const teacherRoutes: CentralRoute[] = [
  route('POST', '/teacher', perms('view_teacher'), noInput, pending, { summary: 'paged teacher list' }),
  route('POST', '/teacher/create', roles('apikey', 'superadmin', 'admin'), noInput, pending, { summary: 'bulk-create teachers (school users)' }),
  route('DELETE', '/teacher/:schooluserid', perms('delete_teacher'), noInput, pending, { summary: 'delete a teacher school-user row (row removed)' }),
];
