import crypto from 'node:crypto';
import type { Knex } from '@lms/db';

export interface TeacherLine {
  teacherusername: string;
  teacheruserpassword: string;
}

/** Usernames of the list that already exist (school user names are unique across schools). */
export async function existingUsernames(db: Knex, names: string[]): Promise<string[]> {
  const rows = (await db('schoolusers').whereIn('schoolusername', names).select('schoolusername')) as Array<{
    schoolusername: string;
  }>;
  return rows.map((r) => r.schoolusername);
}

/**
 * Inserts the teachers (role 3) of a school in one transaction; the hashes are computed by the caller.
 * `beforeCommit` runs inside the transaction with the new rows: when it throws, nothing is written.
 */
export async function insertTeachers(
  db: Knex,
  schoolname: string,
  teachers: Array<{ schoolusername: string; schooluserpasswordhash: string }>,
  createdBy: string | null,
  beforeCommit?: (rows: Array<Record<string, unknown>>) => Promise<void>,
): Promise<void> {
  const now = new Date().toISOString();
  const rows = teachers.map((t) => ({
    schooluserid: crypto.randomUUID(),
    schoolusername: t.schoolusername,
    schooluserpasswordhash: t.schooluserpasswordhash,
    schooluserrole: 3,
    schooluserstatus: true,
    schoolname,
    isdisabled: false,
    isdeleted: false,
    created_at: now,
    created_by: createdBy,
    updated_at: now,
    updated_by: createdBy,
  }));
  await db.transaction(async (trx) => {
    for (let i = 0; i < rows.length; i += 200) await trx('schoolusers').insert(rows.slice(i, i + 200));
    if (beforeCommit) await beforeCommit(rows);
  });
}
