import { anyUser, noInput, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const syncRoutes: CentralRoute[] = [
  route('GET', '/sync/report-data', roles('apikey'), noInput, pending, { summary: 'ZIP of report data for server-to-server pull (API key only)' }),
  route('GET', '/sync', anyUser(), noInput, pending, { summary: 'curriculum sync ZIP (syncfile.ini)' }),
  route('GET', '/sync/content', anyUser(), noInput, pending, { summary: 'download curriculum content ZIP (syncfile.ini, content v2)' }),
  route('POST', '/sync/cloud', roles('admin', 'superadmin'), noInput, pending, { summary: 'build curriculum ZIP and PUT it to classroom /import/master' }),
  route('POST', '/sync/cloud/:schoolname/students', roles('admin', 'superadmin'), noInput, pending, { summary: 'push school roster ZIP to classroom /import/students' }),
];
