import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const importRoutes: CentralRoute[] = [
  route('PUT', '/import/:schoolname/teachers', perms('create_import', 'update_import'), noInput, pending, { summary: 'multipart import of teachers for a school' }),
];
