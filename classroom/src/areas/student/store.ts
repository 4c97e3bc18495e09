import { whereContains, type Knex } from '@lms/db';
import { usersInScope } from '../common';

/**
 * At most 20 learners whose username contains the text. The existing server asks for no order and its table answers
 * in primary-key order, so the 20 are the first by learner id here too (the same 20 learners on both).
 */
export async function searchStudents(
  db: Knex, q: { userid?: string; schoolname?: string }, school: string | undefined,
) {
  const query = db('students').join('schoolusers', 'schoolusers.schooluserid', 'students.schooluserid')
    .where('schoolusers.isdeleted', false)
    .select('students.*', 'schoolusers.schoolusername as _schoolusername')
    .orderBy('students.studentid')
    .limit(20);
  whereContains(query, 'schoolusers.schoolusername', q.userid);
  if (q.schoolname) query.whereRaw('lower(students.schoolname) = ?', [q.schoolname.toLowerCase()]);
  if (school !== undefined) query.whereRaw('lower(students.schoolname) = ?', [school.toLowerCase()]);
  const rows = await query;
  return rows.map(({ _schoolusername, ...s }) => ({ ...s, schooluser: { schoolusername: _schoolusername } }));
}

export async function setProfileImage(db: Knex, studentid: string, filename: string): Promise<void> {
  await db('students').where({ studentid }).update({ profileimage: filename });
}

/** The latest sign-in of each listed user (users never signed in are left out). */
export async function lastLogins(db: Knex, userids: string[], school: string | undefined) {
  if (!userids.length) return [];
  const q = db('rpiuseraccess').whereIn('userid', userids);
  if (school !== undefined) q.whereIn('userid', usersInScope(db, school));
  const rows: Array<Record<string, unknown>> = await q.groupBy('userid').select('userid')
    .max({ logintime: 'logintime' });
  return rows.map((r) => ({
    logintime: r.logintime instanceof Date ? r.logintime.toISOString() : r.logintime,
    userid: r.userid,
  }));
}
