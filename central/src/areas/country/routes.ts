import { anyUser, perms, roles, route } from '@lms/shared';
import type { CentralRoute } from '../../http/types';
import { scope } from '../../http/scope';
import { actorOf, depsOf } from '../../http/context';
import {
  allCountries, countriesFor, countryBody, countryListBody, countryParams, countryQuery, createCountry, deleteCountry, getCountry, listCountries, updateCountry,
} from './store';

export const countryRoutes: CentralRoute[] = [
  route('GET', '/country/all', anyUser(), scope.countriesOfCaller, { query: countryQuery }, ({ req, scope, query, caller }) => countriesFor(depsOf(req).db, query, scope), { summary: 'unpaged country list (query country), within the caller\'s scope' }),
  route('GET', '/country/:countryid', perms('view_country'), scope.countriesOfCaller, { params: countryParams }, ({ req, scope, params }) => getCountry(depsOf(req).db, params.countryid, scope), { summary: 'get one country by id' }),
  route('GET', '/country', roles('apikey', 'superadmin', 'admin', 'teacher'), scope.countriesOfCaller, {}, ({ req, scope }) => allCountries(depsOf(req).db, scope), { summary: 'all countries (report filter feed)' }),
  route('POST', '/country', perms('view_country'), scope.countriesOfCaller, { body: countryListBody }, ({ req, scope, body }) => listCountries(depsOf(req).db, body, scope), { summary: 'paged list of country (pageindex/pagesize/filter)' }),
  route('POST', '/country/create', perms('create_country'), scope.wholeOrganisation, { body: countryBody }, ({ req, body, caller }) => createCountry(depsOf(req).db, body, actorOf(caller)), { summary: 'create country' }),
  route('PUT', '/country/:countryid', perms('update_country'), scope.countriesOfCaller, { params: countryParams, body: countryBody }, ({ req, scope, params, body, caller }) => updateCountry(depsOf(req).db, params.countryid, body, actorOf(caller), scope), { summary: 'update country' }),
  route('DELETE', '/country/:countryid', perms('delete_country'), scope.countriesOfCaller, { params: countryParams }, ({ req, scope, params, caller }) => deleteCountry(depsOf(req).db, params.countryid, actorOf(caller), scope), { summary: 'soft-delete country (isdeleted flag)' }),
];
