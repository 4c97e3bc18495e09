import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import { applyFilters, pageRows, pagingBody, type Paging } from '../../http/paging';

/** Every country that is not deleted, for the report filters. */
export async function allCountries(db: Knex) {
  return readRows(db('countries').where({ isdeleted: false }).orderBy('countryname').select());
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
  expectedusage: z.number({ error: 'must be a number' }).min(0, { error: 'must be greater than or equal to 0' }).optional(),
});
type CountryBody = z.infer<typeof countryBody>;

/**
 * The country picker: non-deleted countries whose name contains `country`, by name; a staff token
 * that names countries sees only those.
 */
export async function countriesFor(db: Knex, q: z.infer<typeof countryQuery>, tokenCountries: string[] | undefined) {
  const query = db('countries').where({ isdeleted: false }).orderBy('countryname');
  const part = q.country?.trim();
  if (part) query.where('countryname', 'like', `%${part}%`);
  if (tokenCountries?.length) query.whereIn('countryid', tokenCountries);
  return readRows(query.select());
}

/** A live country, or null. */
export async function getCountry(db: Knex, countryid: string) {
  return (await db('countries').where({ countryid, isdeleted: false }).first()) ?? null;
}

export async function listCountries(db: Knex, body: Paging) {
  const base = db('countries').where({ isdeleted: false });
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
export async function createCountry(db: Knex, body: CountryBody, by: string | null, countryid: string = crypto.randomUUID()) {
  if (await nameTaken(db, body.countryname)) throw httpError(400, 'Country already exists');
  await db('countries').insert({ countryid, countryname: body.countryname, expectedusage: body.expectedusage ?? 0, isdeleted: false, created_by: by, updated_by: by });
  return getCountry(db, countryid);
}

export async function updateCountry(db: Knex, countryid: string, body: CountryBody, by: string | null) {
  if (!(await db('countries').where({ countryid, isdeleted: false }).first('countryid'))) throw httpError(400, 'Invalid country id');
  if (await nameTaken(db, body.countryname, countryid)) throw httpError(400, 'Country already exists');
  await db('countries').where({ countryid }).update({ countryname: body.countryname, expectedusage: body.expectedusage ?? 0, updated_at: new Date().toISOString(), updated_by: by });
  return getCountry(db, countryid);
}

export async function deleteCountry(db: Knex, countryid: string, by: string | null): Promise<true> {
  if (!(await db('countries').where({ countryid, isdeleted: false }).first('countryid'))) throw httpError(400, 'Invalid country id');
  if (await db('schools').where({ countryid, isdeleted: false }).first('schoolid')) throw httpError(400, 'Country is assigned. Country cannot be deleted');
  await db('countries').where({ countryid }).update({ isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by });
  return true;
}
