import { noInput, perms, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const exportRoutes: CentralRoute[] = [
  route('GET', '/export/:schoolname/students', perms('view_download_student'), noInput, pending, { summary: 'ZIP of a school\'s student users' }),
  route('GET', '/export/:schoolname/teachers', perms('view_teacher'), noInput, pending, { summary: 'ZIP of a school\'s teacher users' }),
  route('GET', '/export/documents/:curriculumid', perms('view_document'), noInput, pending, { summary: 'media file names used by a curriculum (raw body, no envelope)' }),
];
