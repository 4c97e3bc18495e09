import { anyUser, perms, roles } from '@lms/shared';
import { route } from '../../http/route';
import type { CentralRoute } from '../../http/types';
import { scope } from '../../http/scope';
import { actorOf } from '../../http/context';
import {
  allCountries,
  countriesFor,
  countryBody,
  countryListBody,
  countryParams,
  countryQuery,
  createCountry,
  deleteCountry,
  getCountry,
  listCountries,
  updateCountry,
} from './store';

export const countryRoutes: CentralRoute[] = [
  route('GET', '/country/all', anyUser(), scope.countriesOfCaller, { query: countryQuery },
    ({ db, scope, query }) => countriesFor(db, query, scope),
    { summary: 'unpaged country list (query country), within the caller\'s scope' }),
  route('GET', '/country/:countryid', perms('view_country'), scope.countriesOfCaller, { params: countryParams },
    ({ db, scope, params }) => getCountry(db, params.countryid, scope), { summary: 'get one country by id' }),
  route('GET', '/country', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.countriesOfCaller, {},
    ({ db, scope }) => allCountries(db, scope), { summary: 'all countries (report filter feed)' }),
  route('POST', '/country', perms('view_country'), scope.countriesOfCaller, { body: countryListBody },
    ({ db, scope, body }) => listCountries(db, body, scope),
    { summary: 'paged list of country (pageindex/pagesize/filter)' }),
  route('POST', '/country/create', perms('create_country'), scope.wholeOrganisation, { body: countryBody },
    ({ db, body, caller }) => createCountry(db, body, actorOf(caller)), { summary: 'create country' }),
  route('PUT', '/country/:countryid', perms('update_country'), scope.countriesOfCaller,
    { params: countryParams, body: countryBody },
    ({ db, scope, params, body, caller }) => updateCountry(db, params.countryid, body, actorOf(caller), scope),
    { summary: 'update country' }),
  route('DELETE', '/country/:countryid', perms('delete_country'), scope.countriesOfCaller, { params: countryParams },
    ({ db, scope, params, caller }) => deleteCountry(db, params.countryid, actorOf(caller), scope),
    { summary: 'soft-delete country (isdeleted flag)' }),
];
