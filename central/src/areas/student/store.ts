import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { hashPassword } from '../../auth/passwords';
import { strictBody } from '../../auth/validation';

// ---- Dates dd-MM-yyyy ----------------------------------------------------------------------------

function parseDmy(v: string | null | undefined): Date | null {
  const m = /^(\d{2})-(\d{2})-(\d{4})$/.exec(v ?? '');
  if (!m) return null;
  const d = new Date(Date.UTC(Number(m[3]), Number(m[2]) - 1, Number(m[1])));
  return d.getUTCDate() === Number(m[1]) && d.getUTCMonth() === Number(m[2]) - 1 ? d : null;
}

function toDmy(iso: string | null | undefined): string {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}-${p(d.getUTCMonth() + 1)}-${d.getUTCFullYear()}`;
}

// ---- POST /student/create -------------------------------------------------------------------------

const WG = ['wg_seeing', 'wg_hearing', 'wg_walking', 'wg_remembering', 'wg_selfcare', 'wg_communicating'] as const;
const text = (min: number, max: number) => z.string().min(min, { error: `length must be at least ${min} characters long` }).max(max, { error: `length must be less than or equal to ${max} characters long` });
const optText = z.union([text(0, 100), z.null()]).optional();
const wgAnswer = z.union([z.enum(['1', '2', '3', '4']), z.literal(''), z.null()]).optional();
const dmy = z.union([z.string().length(10, { error: 'not valid' }), z.literal(''), z.null()]).optional();
const alnum = (min: number, max: number) => text(min, max).regex(/^[A-Za-z0-9]+$/, { error: 'must only contain alpha-numeric characters' });

const learner = strictBody({
  studentfirstname: text(2, 100),
  studentlastname: optText,
  familyname: optText,
  mothername: optText,
  fathername: optText,
  contact: optText,
  dateofbirth: dmy,
  dateofjoin: z.string({ error: 'is required' }),
  genderid: z.enum(['1', '2'], { error: 'must be one of [1, 2]' }),
  ...Object.fromEntries(WG.map((k) => [k, wgAnswer])),
  city: text(2, 100),
  country: text(2, 100),
  state: text(0, 100),
  schooltype: text(1, 100).optional(),
  schoolusername: alnum(2, 16),
  schooluserpasswordhash: alnum(1, 16),
  type: z.enum(['offline', 'online']).optional(),
  is_teacher_acc: z.enum(['1', '0', '']).optional(),
});

export const createStudentsBody = strictBody({
  curriculumid: z.array(z.string()).min(1, { error: 'must contain at least 1 items' }),
  schoolid: z.string({ error: 'is required' }),
  standard: z.union([z.string(), z.null()]).optional(),
  students: z.array(learner).min(1, { error: 'must contain at least 1 items' }).max(500, { error: 'must contain less than or equal to 500 items' }),
});
export const createStudentsQuery = z.looseObject({ online: z.string().optional(), cloud: z.string().optional() });

export type CreatedLearner = { schooluser: Record<string, unknown>; student: Record<string, unknown> };

/** Usernames already taken (case-insensitive), including twice in the same upload. */
export async function takenUsernames(db: Knex, names: string[]): Promise<string[]> {
  const lower = names.map((n) => n.toLowerCase());
  const dupes = lower.filter((n, i) => lower.indexOf(n) !== i);
  const rows = await db('schoolusers').whereRaw(`lower(schoolusername) in (${lower.map(() => '?').join(',')})`, lower).select('schoolusername');
  return [...new Set([...rows.map((r: { schoolusername: string }) => r.schoolusername.toLowerCase()), ...dupes])];
}

export async function schoolById(db: Knex, schoolid: string) {
  return db('schools').where({ schoolid, isdeleted: false }).first('schoolid', 'schoolname', 'countryid');
}

/** Creates a school user (role 4) and a learner row per item, all or nothing. */
export async function createStudents(
  db: Knex,
  body: z.infer<typeof createStudentsBody>,
  online: boolean,
  by: string | null,
  push?: (created: CreatedLearner[]) => Promise<void>,
): Promise<true> {
  const school = await schoolById(db, body.schoolid);
  if (!school) throw httpError(400, 'Invalid School Name');
  for (const s of body.students) if (s.is_teacher_acc !== '1' && !body.standard) throw httpError(400, 'Student must has a class!');
  const taken = await takenUsernames(db, body.students.map((s) => s.schoolusername));
  if (taken.length) throw httpError(400, `Students already exists, ${taken.join(',')}`);
  const hashes = await Promise.all(body.students.map((s) => hashPassword(s.schooluserpasswordhash)));
  const now = new Date().toISOString();
  const created: CreatedLearner[] = body.students.map((s, i) => {
    const schooluserid = crypto.randomUUID();
    const teacherAccount = s.is_teacher_acc === '1';
    const answers = Object.fromEntries(WG.map((k) => [k, (s as Record<string, unknown>)[k] ? Number((s as Record<string, unknown>)[k]) : null]));
    const answered = Object.values(answers).some((v) => v !== null);
    return {
      schooluser: {
        schooluserid, schoolusername: s.schoolusername, schooluserpasswordhash: hashes[i], schooluserrole: 4, schooluserstatus: true,
        schoolname: school.schoolname, created_by: by,
      },
      student: {
        studentid: crypto.randomUUID(), schooluserid, studentfirstname: s.studentfirstname, studentlastname: s.studentlastname ?? '',
        familyname: s.familyname ?? '', mothername: s.mothername ?? '', fathername: s.fathername ?? '', contact: s.contact ?? '',
        dateofbirth: parseDmy(s.dateofbirth)?.toISOString() ?? null, dateofjoin: (parseDmy(s.dateofjoin) ?? new Date()).toISOString(),
        genderid: Number(s.genderid), ...answers, wg_source: answered ? 1 : null, wg_collected_at: answered ? now : null,
        city: s.city, country: s.country, state: s.state, schooltype: s.schooltype ?? null, schoolname: school.schoolname,
        standard: body.standard || null, curriculumid: body.curriculumid[0], curriculumids: JSON.stringify(body.curriculumid),
        type: online || teacherAccount ? 'online' : 'offline', isactive: true, is_teacher_acc: teacherAccount, created_by: by,
      },
    };
  });
  await db.transaction(async (trx) => {
    await trx.batchInsert('schoolusers', created.map((c) => c.schooluser), 200);
    await trx.batchInsert('students', created.map((c) => c.student), 200);
    if (push) await push(created);
  });
  return true;
}

// ---- GET /student/all ---------------------------------------------------------------------------------

export const allStudentsQuery = z.looseObject({
  userid: z.string().optional(), standard: z.string().optional(), schoolname: z.string().optional(), teacher: z.string().optional(),
});

/** Learner rows with identity fields; without a school or class at most 50, oldest first. */
export async function allStudents(db: Knex, q: z.infer<typeof allStudentsQuery>) {
  const query = db('students as s').join('schoolusers as u', 'u.schooluserid', 's.schooluserid').where('s.isdeleted', false).orderBy('s.created_at');
  if (q.userid) query.where('u.schoolusername', 'like', `%${q.userid}%`);
  if (q.standard) query.where('s.standard', q.standard);
  if (q.schoolname) query.where('s.schoolname', q.schoolname);
  if (q.teacher !== 'true') query.where((w) => w.where('s.is_teacher_acc', false).orWhereNull('s.is_teacher_acc'));
  if (!q.schoolname && !q.standard) query.limit(50);
  const rows = await query.select('s.*', 'u.schoolusername');
  return rows.map(({ schoolusername, ...row }: Record<string, unknown>) => ({ ...row, schooluser: { schoolusername } }));
}

// ---- GET /student/download-students -------------------------------------------------------------------

export const downloadQuery = z.looseObject({ countryid: z.string().optional(), schoolname: z.string().optional(), studentid: z.string().optional() });

const DOWNLOAD_COLUMNS = [
  'studentid', 'schooluserid', 'schoolusername', 'schoolname', 'curriculums', 'standard', 'studentfirstname', 'studentlastname',
  'familyname', 'mothername', 'fathername', 'contact', 'genderid', ...WG, 'dateofbirth', 'dateofjoin', 'schooltype', 'city',
  'country', 'state', 'type', 'isactive', 'schooluserpasswordhash', 'is_teacher_acc',
] as const;

/** The learner CSV: the round-trip format of PUT /student/update (password column always empty). */
export async function downloadStudents(db: Knex, q: z.infer<typeof downloadQuery>): Promise<{ filename: string; columns: readonly string[]; rows: Array<Record<string, unknown>> }> {
  const query = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .leftJoin('standards as c', 'c.standardid', 's.standard')
    .where({ 's.isdeleted': false, 's.isactive': true, 'u.isdeleted': false })
    .orderBy(['s.schoolname', 's.studentfirstname']);
  if (q.countryid) {
    const country = await db('countries').where({ countryid: q.countryid }).first('countryname');
    if (!country) throw httpError(400, 'Country does not exists!');
    query.where('s.country', country.countryname);
  }
  if (q.schoolname) {
    const school = await db('schools').where({ schoolname: q.schoolname }).first('schoolid');
    if (!school) throw httpError(400, 'School does not exists!');
    query.where('s.schoolname', q.schoolname);
  }
  if (q.studentid) query.where('s.studentid', q.studentid);
  const rows = await query.select('s.*', 'u.schoolusername', 'c.standardname');
  const names = new Map(
    (await db('curriculums').select('curriculumid', 'curriculumname')).map((c: { curriculumid: string; curriculumname: string }) => [c.curriculumid, c.curriculumname]),
  );
  const out = rows.map((r: Record<string, any>) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
    ...r,
    curriculums: (Array.isArray(r.curriculumids) && r.curriculumids.length ? r.curriculumids : [r.curriculumid])
      .map((id: string) => names.get(id) ?? '')
      .filter(Boolean)
      .join('/'),
    standard: r.standardname ?? '',
    dateofbirth: toDmy(r.dateofbirth),
    dateofjoin: toDmy(r.dateofjoin),
    isactive: r.isactive ? 1 : 0,
    schooluserpasswordhash: '',
    is_teacher_acc: r.is_teacher_acc ? '1' : '',
  }));
  return { filename: `students-${q.schoolname || 'all'}.csv`, columns: DOWNLOAD_COLUMNS, rows: out };
}

// ---- Data migrations ----------------------------------------------------------------------------------

/** Learners whose `standard` still holds a class NAME get the id of that class in their school. */
export async function migrateStudentStandardIds(db: Knex): Promise<string> {
  await db.transaction(async (trx) => {
    const classes = await trx('standards').where({ isdeleted: false }).select('standardid', 'standardname', 'schoolname');
    const ids = new Set(classes.map((c: { standardid: string }) => c.standardid));
    const byName = new Map(classes.map((c: { standardid: string; standardname: string; schoolname: string | null }) => [`${c.schoolname}\u0000${c.standardname}`, c.standardid]));
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
      await trx('students').where({ studentid: l.studentid }).update({ curriculumids: JSON.stringify(l.curriculumid ? [l.curriculumid] : []) });
    }
  });
  return 'Migrated successfully!';
}

// ---- Roster push to the classroom server ------------------------------------------------------------

/**
 * Sends a roster ZIP as multipart `importfile` to `{RPI_CLOUD}<path>` with the raw SERVER_SYNC_KEY.
 * A failure is a 500 (the caller's transaction then rolls back, so nothing is half-created).
 */
export async function pushRoster(config: { rpiCloud: string; serverSyncKey: string }, path: string, zip: Buffer): Promise<void> {
  const form = new FormData();
  form.append('importfile', new Blob([zip], { type: 'application/zip' }), 'importfile.zip');
  let status = 0;
  try {
    const res = await fetch(`${config.rpiCloud}${path}`, { method: 'PUT', headers: { Authorization: config.serverSyncKey }, body: form });
    status = res.status;
  } catch {
    status = 0;
  }
  if (status < 200 || status >= 300) throw httpError(500, `Classroom server refused the roster (${status || 'unreachable'})`);
}
