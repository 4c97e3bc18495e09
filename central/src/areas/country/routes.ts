import { anyUser, noInput, perms, roles, route } from '@lms/shared';
import { pending } from '../../http/pending';
import type { CentralRoute } from '../../http/types';
import { depsOf } from '../../http/context';
import { allCountries } from './store';

export const countryRoutes: CentralRoute[] = [
  route('GET', '/country/all', anyUser(), noInput, pending, { summary: 'unpaged country list (query country), scoped to token countries' }),
  route('GET', '/country/:countryid', perms('view_country'), noInput, pending, { summary: 'get one country by id' }),
  route('GET', '/country', roles('apikey', 'superadmin', 'admin', 'teacher'), noInput, ({ req }) => allCountries(depsOf(req).db), { summary: 'all countries (report filter feed)' }),
  route('POST', '/country', perms('view_country'), noInput, pending, { summary: 'paged list of country (pageindex/pagesize/filter)' }),
  route('POST', '/country/create', perms('create_country'), noInput, pending, { summary: 'create country' }),
  route('PUT', '/country/:countryid', perms('update_country'), noInput, pending, { summary: 'update country' }),
  route('DELETE', '/country/:countryid', perms('delete_country'), noInput, pending, { summary: 'soft-delete country (isdeleted flag)' }),
];
