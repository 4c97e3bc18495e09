import { anyUser, perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { scopeOf } from '../../http/scope';
import { actorOf, depsOf } from '../../http/context';
import {
  allCountries, countriesFor, countryBody, countryListBody, countryParams, countryQuery, createCountry, deleteCountry, getCountry, listCountries, updateCountry,
} from './store';

export const countryRoutes: CentralRoute[] = [
  route('GET', '/country/all', anyUser(), { query: countryQuery }, ({ req, query, caller }) => countriesFor(depsOf(req).db, query, scopeOf(caller)), { summary: 'unpaged country list (query country), within the caller\'s scope' }),
  route('GET', '/country/:countryid', perms('view_country'), { params: countryParams }, ({ req, params, caller }) => getCountry(depsOf(req).db, params.countryid, scopeOf(caller)), { summary: 'get one country by id' }),
  route('GET', '/country', roles('apikey', 'superadmin', 'admin', 'teacher'), {}, ({ req }) => allCountries(depsOf(req).db), { summary: 'all countries (report filter feed)' }),
  route('POST', '/country', perms('view_country'), { body: countryListBody }, ({ req, body, caller }) => listCountries(depsOf(req).db, body, scopeOf(caller)), { summary: 'paged list of country (pageindex/pagesize/filter)' }),
  route('POST', '/country/create', perms('create_country'), { body: countryBody }, ({ req, body, caller }) => createCountry(depsOf(req).db, body, actorOf(caller)), { summary: 'create country' }),
  route('PUT', '/country/:countryid', perms('update_country'), { params: countryParams, body: countryBody }, ({ req, params, body, caller }) => updateCountry(depsOf(req).db, params.countryid, body, actorOf(caller), scopeOf(caller)), { summary: 'update country' }),
  route('DELETE', '/country/:countryid', perms('delete_country'), { params: countryParams }, ({ req, params, caller }) => deleteCountry(depsOf(req).db, params.countryid, actorOf(caller), scopeOf(caller)), { summary: 'soft-delete country (isdeleted flag)' }),
];
