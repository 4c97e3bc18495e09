import { readRows, type Knex } from '@lms/db';

/** The original derives this feed from learner rows: one entry per school name that has learners. */
export async function schoolsFromLearners(db: Knex) {
  return readRows(
    db('students')
      .where({ isdeleted: false })
      .whereNotNull('schoolname')
      .groupBy('schoolname')
      .orderBy('schoolname')
      .select('schoolname')
      .min({ schooltype: 'schooltype', city: 'city', country: 'country', state: 'state' }),
  );
}
