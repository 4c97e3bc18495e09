import { anyUser, perms, roles, route } from '@lms/shared';
import type { Caller, CentralRoute } from '../../http/types';
import { actorOf, depsOf } from '../../http/context';
import {
  allCountries, countriesFor, countryBody, countryListBody, countryParams, countryQuery, createCountry, deleteCountry, getCountry, listCountries, updateCountry,
} from './store';

/** The `countries` claim of a staff token: the countries its holder works in (none: all). */
const tokenCountries = (c: Caller): string[] | undefined =>
  c.kind === 'staff' && Array.isArray(c.claims.countries) ? c.claims.countries.filter((x): x is string => typeof x === 'string') : undefined;

export const countryRoutes: CentralRoute[] = [
  route('GET', '/country/all', anyUser(), { query: countryQuery }, ({ req, query, caller }) => countriesFor(depsOf(req).db, query, tokenCountries(caller)), { summary: 'unpaged country list (query country), scoped to token countries' }),
  route('GET', '/country/:countryid', perms('view_country'), { params: countryParams }, ({ req, params }) => getCountry(depsOf(req).db, params.countryid), { summary: 'get one country by id' }),
  route('GET', '/country', roles('apikey', 'superadmin', 'admin', 'teacher'), {}, ({ req }) => allCountries(depsOf(req).db), { summary: 'all countries (report filter feed)' }),
  route('POST', '/country', perms('view_country'), { body: countryListBody }, ({ req, body }) => listCountries(depsOf(req).db, body), { summary: 'paged list of country (pageindex/pagesize/filter)' }),
  route('POST', '/country/create', perms('create_country'), { body: countryBody }, ({ req, body, caller }) => createCountry(depsOf(req).db, body, actorOf(caller)), { summary: 'create country' }),
  route('PUT', '/country/:countryid', perms('update_country'), { params: countryParams, body: countryBody }, ({ req, params, body, caller }) => updateCountry(depsOf(req).db, params.countryid, body, actorOf(caller)), { summary: 'update country' }),
  route('DELETE', '/country/:countryid', perms('delete_country'), { params: countryParams }, ({ req, params, caller }) => deleteCountry(depsOf(req).db, params.countryid, actorOf(caller)), { summary: 'soft-delete country (isdeleted flag)' }),
];
