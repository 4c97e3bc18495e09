import { anyUser, noInput, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { logImportSwitch } from '../../http/switches';

export const logRoutes: CentralRoute[] = [
  route('PUT', '/log/import', anyUser(), noInput, pending, { before: [logImportSwitch], summary: 'ingest classroom activity-log ZIP (multipart importfile)' }),
];
