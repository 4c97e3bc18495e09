import { anyUser, noInput, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';

export const schoolcontributeRoutes: CentralRoute[] = [
  route('POST', '/school-contribute/create', anyUser(), noInput, pending, { summary: 'create a school fee-contribution record' }),
  route('POST', '/school-contribute/getallschoolcontribute/:schoolid', anyUser(), noInput, pending, { summary: 'paged contribution records of one school' }),
  route('PUT', '/school-contribute/updateschoolname/:schoolid', anyUser(), noInput, pending, { summary: 'update contribution record (by school)' }),
  route('PUT', '/school-contribute/updateschooldashboard/:schoolcontributeid', anyUser(), noInput, pending, { summary: 'update one contribution record (expected/actual)' }),
  route('DELETE', '/school-contribute/deleteschoolcontribute/:schoolid', anyUser(), noInput, pending, { summary: 'soft-delete contribution records of a school' }),
  route('DELETE', '/school-contribute/deleteschoolcontributeid/:schoolcontributeid', anyUser(), noInput, pending, { summary: 'soft-delete one contribution record' }),
  route('GET', '/school-contribute/getschooldashboard/schoolcontributeid/:schoolcontributeid', anyUser(), noInput, pending, { summary: 'get one contribution record' }),
  route('GET', '/school-contribute/getschooldashboardid/:schoolid', anyUser(), noInput, pending, { summary: 'contribution dashboard of one school' }),
  route('GET', '/school-contribute/getallschooldashboard', anyUser(), noInput, pending, { summary: 'contribution dashboard of all schools' }),
  route('GET', '/school-contribute/getschoolcontribute/:schoolid', anyUser(), noInput, pending, { summary: 'contribution summary of one school' }),
  route('GET', '/school-contribute/getallschoolcontribute', anyUser(), noInput, pending, { summary: 'all contribution rows (raw array, no envelope)' }),
  route('GET', '/school-contribute/all', anyUser(), noInput, pending, { summary: 'contribution dashboard filtered by query countryid/schoolname/date' }),
  route('POST', '/school-contribute/report/download', anyUser(), noInput, pending, { summary: 'CSV download of contribution report (query date)' }),
];
