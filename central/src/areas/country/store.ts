import crypto from 'node:crypto';
import { readRows, whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';

/** Every country that is not deleted, for the report filters. */
/** The report filter feed: the caller's live countries, by name. */
export async function allCountries(db: Knex, scope: Scope) {
  return readRows(liveCountries(db, scope).orderBy('countryname').select());
}

export const countryParams = z.object({ countryid: z.string().uuid({ error: 'must be a valid GUID' }) });
export const countryQuery = z.looseObject({ country: z.string().optional() });
export const countryListBody = pagingBody(['countryname']);
export const countryBody = strictBody({
  countryname: z
    .string({ error: 'is required' })
    .min(1, { error: 'is not allowed to be empty' })
    // What the column holds (the original's validator allowed 300 and the database refused the rest).
    .max(45, { error: 'length must be less than or equal to 45 characters long' })
    .refine((v) => v.trim().length > 0, { error: 'not allowed' }),
  expectedusage: z
    .number({ error: 'must be a number' })
    .min(0, { error: 'must be greater than or equal to 0' })
    .optional(),
});
type CountryBody = z.infer<typeof countryBody>;

/** Live countries the caller may see: a staff token naming countries (or schools) sees only those (of those). */
const liveCountries = (db: Knex, scope: Scope | undefined) => {
  const q = db('countries').where({ isdeleted: false });
  return scope ? applyScope(q, scope, { countryid: 'countryid' }) : q;
};

/** The country picker: the caller's live countries whose name contains `country`, by name. */
export async function countriesFor(db: Knex, q: z.infer<typeof countryQuery>, scope: Scope) {
  const query = liveCountries(db, scope).orderBy('countryname');
  const part = q.country?.trim();
  if (part) whereContains(query, 'countryname', part);
  return readRows(query.select());
}

/** A live country within the caller's scope, or null. */
export async function getCountry(db: Knex, countryid: string, scope?: Scope) {
  return (await liveCountries(db, scope).where({ countryid }).first()) ?? null;
}

export async function listCountries(db: Knex, body: Paging, scope: Scope) {
  const base = liveCountries(db, scope);
  applyFilters(base, body, (k) => k);
  return pageRows(base, body, 'countryname');
}

/** Names are unique among all rows, deleted ones included (the table's constraint). */
async function nameTaken(db: Knex, countryname: string, except?: string): Promise<boolean> {
  const q = db('countries').where({ countryname });
  if (except) q.whereNot({ countryid: except });
  return !!(await q.first('countryid'));
}

/** `countryid`: given by the demo seed, whose rows have fixed ids; a request's country gets a new one. */
export async function createCountry(
  db: Knex,
  body: CountryBody,
  by: string | null,
  countryid: string = crypto.randomUUID(),
) {
  if (await nameTaken(db, body.countryname)) throw httpError(400, 'Country already exists');
  await db('countries').insert({
    countryid,
    countryname: body.countryname,
    expectedusage: body.expectedusage ?? 0,
    isdeleted: false,
    created_by: by,
    updated_by: by,
  });
  return getCountry(db, countryid);
}

export async function updateCountry(db: Knex, countryid: string, body: CountryBody, by: string | null, scope: Scope) {
  if (!(await getCountry(db, countryid, scope))) throw httpError(400, 'Invalid country id');
  if (await nameTaken(db, body.countryname, countryid)) throw httpError(400, 'Country already exists');
  await db('countries')
    .where({ countryid })
    .update({
      countryname: body.countryname,
      expectedusage: body.expectedusage ?? 0,
      updated_at: new Date().toISOString(),
      updated_by: by,
    });
  return getCountry(db, countryid);
}

export async function deleteCountry(db: Knex, countryid: string, by: string | null, scope: Scope): Promise<true> {
  if (!(await getCountry(db, countryid, scope))) throw httpError(400, 'Invalid country id');
  if (await db('schools').where({ countryid, isdeleted: false }).first('schoolid'))
    throw httpError(400, 'Country is assigned. Country cannot be deleted');
  await db('countries')
    .where({ countryid })
    .update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  return true;
}
