import { whereContains, type Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { revokeAll } from '../../auth/tokens';
import type { BatchProblems } from '../../http/batch';
import { applyScope, type Scope } from '../../http/scope';

// ---- Usernames ------------------------------------------------------------------------------------------

/** Usernames already taken (compared lower-cased, as the unique index does), and any named twice in `names`. */
export async function takenUsernames(db: Knex, names: string[]): Promise<string[]> {
  const lower = names.map((n) => n.toLowerCase());
  if (!lower.length) return [];
  const dupes = lower.filter((n, i) => lower.indexOf(n) !== i);
  const rows: Array<{ name: string }> = [];
  // Bounded statements: SQLite takes at most 32,766 bound values.
  for (let i = 0; i < lower.length; i += 500) {
    const part = lower.slice(i, i + 500);
    rows.push(
      ...(await db('schoolusers')
        .whereRaw(`lower(schoolusername) in (${part.map(() => '?').join(',')})`, part)
        .select(db.raw('lower(schoolusername) as name'))),
    );
  }
  return [...new Set([...rows.map((r) => r.name), ...dupes])];
}

/** One problem per row whose username is taken, and the contract's one line naming them all. */
export function noteTakenUsernames(
  problems: BatchProblems,
  rows: Array<[index: number, username: string]>,
  taken: string[],
  prefix = 'Students already exists, ',
): void {
  if (!taken.length) return;
  const set = new Set(taken);
  for (const [i, name] of rows)
    if (set.has(name.toLowerCase())) problems.add(i, 'schoolusername', `${prefix}${name.toLowerCase()}`, null);
  problems.note(`${prefix}${taken.join(',')}`);
}

// ---- GET /student/all ---------------------------------------------------------------------------------

export const allStudentsQuery = z.looseObject({
  userid: z.string().optional(),
  standard: z.string().optional(),
  schoolname: z.string().optional(),
  teacher: z.string().optional(),
});

/**
 * Learner rows with identity fields, within the caller's scope; without a school or class at most 50, oldest first.
 * Learners created together (a bulk create stamps them all alike) come in primary-key order, the order the existing
 * system's table gives them in, so that the 50 of a capped list are the same learners as there.
 */
export async function allStudents(db: Knex, scope: Scope, q: z.infer<typeof allStudentsQuery>) {
  const query = db('students as s').join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .where('s.isdeleted', false)
    .orderBy([{ column: 's.created_at' }, { column: 's.studentid' }]);
  if (q.userid?.trim()) whereContains(query, 'u.schoolusername', q.userid.trim());
  if (q.standard) query.where('s.standard', q.standard);
  if (q.schoolname) query.where('s.schoolname', q.schoolname);
  if (q.teacher !== 'true') query.where((w) => w.where('s.is_teacher_acc', false).orWhereNull('s.is_teacher_acc'));
  if (!q.schoolname && !q.standard) query.limit(50);
  applyScope(query, scope, { schoolname: 's.schoolname' });
  const rows = await query.select('s.*', 'u.schoolusername');
  return rows.map(({ schoolusername, ...row }: Record<string, unknown>) => ({
    ...row,
    schooluser: { schoolusername },
  }));
}

// ---- DELETE /student/:schooluserid ----------------------------------------------------------------------

/**
 * Soft-deletes a learner and its school user together. The rows stay: the username remains taken and
 * the learner's progress stays in the reports. Its sign-ins end.
 */
export async function deleteStudent(db: Knex, scope: Scope, schooluserid: string, by: string | null): Promise<true> {
  await db.transaction(async (trx) => {
    const learner = await applyScope(trx('students as s').where('s.schooluserid', schooluserid), scope, {
      schoolname: 's.schoolname',
    }).first('s.studentid', 's.isdeleted');
    if (!learner) throw httpError(400, 'Invalid school user id');
    if (learner.isdeleted) throw httpError(400, 'Student already deleted or not found');
    const stamp = { isdeleted: true, deleted_at: new Date().toISOString(), deleted_by: by };
    await trx('students').where({ studentid: learner.studentid }).update(stamp);
    await trx('schoolusers').where({ schooluserid }).update(stamp);
    await revokeAll(trx, schooluserid);
  });
  return true;
}

// ---- Data migrations ----------------------------------------------------------------------------------

/** Learners whose `standard` still holds a class NAME get the id of that class in their school. */
export async function migrateStudentStandardIds(db: Knex): Promise<string> {
  await db.transaction(async (trx) => {
    const classes = await trx('standards')
      .where({ isdeleted: false })
      .select('standardid', 'standardname', 'schoolname');
    const ids = new Set(classes.map((c: { standardid: string }) => c.standardid));
    const byName = new Map(
      classes.map((c: { standardid: string; standardname: string; schoolname: string | null }) => [
        `${c.schoolname}\u0000${c.standardname}`,
        c.standardid,
      ]),
    );
    const learners = await trx('students').whereNotNull('standard').select('studentid', 'standard', 'schoolname');
    for (const l of learners) {
      if (ids.has(l.standard)) continue;
      const id = byName.get(`${l.schoolname}\u0000${l.standard}`);
      if (id) await trx('students').where({ studentid: l.studentid }).update({ standard: id });
    }
  });
  return 'Migrated successfully!';
}

/** Learners without a `curriculumids` list get one made of their single `curriculumid`. */
export async function migrateSubjectCurriculum(db: Knex): Promise<string> {
  await db.transaction(async (trx) => {
    const learners = await trx('students').select('studentid', 'curriculumid', 'curriculumids');
    for (const l of learners) {
      if (Array.isArray(l.curriculumids) && l.curriculumids.length) continue;
      await trx('students')
        .where({ studentid: l.studentid })
        .update({ curriculumids: JSON.stringify(l.curriculumid ? [l.curriculumid] : []) });
    }
  });
  return 'Migrated successfully!';
}

// ---- Roster push to the classroom server ------------------------------------------------------------

/**
 * Sends a roster ZIP as multipart `importfile` to `{RPI_CLOUD}<path>` with the raw SERVER_SYNC_KEY.
 * A failure is a 500 (the caller's transaction then rolls back, so nothing is half-created).
 */
export async function pushRoster(
  config: { rpiCloud: string; serverSyncKey: string },
  path: string,
  zip: Buffer,
): Promise<void> {
  const form = new FormData();
  form.append('importfile', new Blob([zip], { type: 'application/zip' }), 'importfile.zip');
  let status = 0;
  try {
    const res = await fetch(`${config.rpiCloud}${path}`, {
      method: 'PUT',
      headers: { Authorization: config.serverSyncKey },
      body: form,
    });
    status = res.status;
  } catch {
    status = 0;
  }
  if (status < 200 || status >= 300)
    throw httpError(500, `Classroom server refused the roster (${status || 'unreachable'})`);
}
