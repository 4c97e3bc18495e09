import { readRows, type Knex } from '@lms/db';

/** Every country that is not deleted, for the report filters. */
export async function allCountries(db: Knex) {
  return readRows(db('countries').where({ isdeleted: false }).orderBy('countryname').select());
}
