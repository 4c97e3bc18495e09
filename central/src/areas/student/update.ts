import { isUniqueViolation, readRows, type Knex } from '@lms/db';
import { hashSchoolUserPassword, verifyPassword } from '../../auth/passwords';
import { revokeAll } from '../../auth/tokens';
import { BatchProblems, dryrunQuery, isDryrun, parseBatch } from '../../http/batch';
import { fromCsvCell } from '../../http/csv';
import { actorOf } from '../../http/context';
import { applyScope, type Scope } from '../../http/scope';
import type { CentralCtx } from '../../http/types';
import { editBody, editRow, parseDmy, toDmy, WG, type EditRow } from './fields';
import { noteTakenUsernames, takenUsernames } from './store';

/**
 * PUT /student/update: the learner CSV (GET /student/download-students) edited in a spreadsheet and
 * sent back as rows. Each row changes exactly what was edited in it: a cell equal to what is stored
 * writes nothing, a blank Washington Group answer or date keeps the stored one, and the WG provenance
 * (source, collected at) is stamped again only where an answer changed. The whole batch is checked
 * first (every problem of every row, decision 29), then written in one transaction; `?dryrun=true`
 * only checks. Sending the same file twice changes nothing the second time.
 */

type Row = Record<string, unknown>;

const NOT_FOUND = 'Student not found!';
const NO_PLACE = 'Schoolname or standard name not found!';
const NO_CURRICULUM = 'Invalid curriculum name!';
const TWICE = 'Student is listed more than once!';

interface Edit {
  index: number;
  studentid: string;
  schooluserid: string;
  student: Row;
  user: Row;
  password?: string;
  /** The stored hash, to tell a new password from the one already set. */
  passwordhash: unknown;
  /** A new username (compared lower-cased against the others). */
  rename?: string;
}

const key = (s: unknown) => String(s ?? '').trim().normalize('NFC').toLowerCase();
const blank = (v: unknown) => v === undefined || v === null || v === '';
const same = (a: unknown, b: unknown) => (a ?? '') === (b ?? '');
const idsOf = (r: Row): string[] =>
  Array.isArray(r.curriculumids) && r.curriculumids.length
    ? (r.curriculumids as string[])
    : r.curriculumid
      ? [String(r.curriculumid)]
      : [];

/** Cells come back from a file this service wrote: the quote that neutralised a formula is taken off. */
function fromSpreadsheet(body: unknown): unknown {
  const rows = (body as { students?: unknown })?.students;
  if (!Array.isArray(rows)) return body;
  return {
    ...(body as object),
    students: rows.map((r) => (r && typeof r === 'object' && !Array.isArray(r)
      ? Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === 'string' ? fromCsvCell(v) : v]))
      : r)),
  };
}

async function inChunks<T>(ids: string[], read: (part: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < ids.length; i += 500) out.push(...(await read(ids.slice(i, i + 500))));
  return out;
}

/** Everything the rows name, read in a fixed number of queries: learners, schools, classes, curricula. */
async function context(db: Knex, scope: Scope, rows: ReadonlyMap<number, EditRow>) {
  const studentids = [...new Set([...rows.values()].map((r) => r.studentid))];
  const learners = await inChunks(studentids, (part) =>
    readRows<Row>(
      applyScope(
        db('students as s')
          .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
          .whereIn('s.studentid', part)
          .where({ 's.isdeleted': false, 'u.isdeleted': false }),
        scope,
        { schoolname: 's.schoolname' },
      ).select('s.*', 'u.schoolusername', 'u.schoolname as userschool', 'u.schooluserpasswordhash as passwordhash'),
    ),
  );
  const byId = new Map(learners.map((l) => [String(l.studentid), l]));
  const schoolKeys = new Set<string>();
  for (const r of rows.values()) schoolKeys.add(key(r.schoolname ?? byId.get(r.studentid)?.schoolname));
  schoolKeys.delete('');
  const schools = schoolKeys.size
    ? await readRows<{ schoolid: string; schoolname: string; curriculums: unknown }>(
        applyScope(
          db('schools')
            .where({ isdeleted: false })
            .whereRaw(`lower(schoolname) in (${[...schoolKeys].map(() => '?').join(',')})`, [...schoolKeys]),
          scope,
          { schoolid: 'schoolid' },
        ).select('schoolid', 'schoolname', 'curriculums'),
      )
    : [];
  const schoolByKey = new Map(schools.map((s) => [key(s.schoolname), s]));
  const classes = schools.length
    ? await readRows<{ standardid: string; standardname: string; schoolid: string }>(
        db('standards')
          .whereIn(
            'schoolid',
            schools.map((s) => s.schoolid),
          )
          .where({ isdeleted: false })
          .orderBy('standardid')
          .select('standardid', 'standardname', 'schoolid'),
      )
    : [];
  const classByKey = new Map<string, string>();
  for (const c of classes)
    if (!classByKey.has(`${c.schoolid}\u0000${key(c.standardname)}`))
      classByKey.set(`${c.schoolid}\u0000${key(c.standardname)}`, c.standardid);
  const curricula = await readRows<{ curriculumid: string; curriculumname: string; isdeleted: boolean }>(
    db('curriculums').orderBy('curriculumid').select('curriculumid', 'curriculumname', 'isdeleted'));
  return { byId, schoolByKey, classByKey, curricula };
}

/**
 * The curricula a row names (`A/B`), as ids. A name means, in order of preference, a curriculum the
 * learner already studies (so a file sent back unchanged resolves to what it came from), one its
 * school teaches, any live one.
 */
function resolveCurricula(
  cell: string,
  current: string[],
  schoolCurricula: unknown,
  all: ReadonlyArray<{ curriculumid: string; curriculumname: string; isdeleted: boolean }>,
): string[] | null {
  const taught = new Set(Array.isArray(schoolCurricula) ? (schoolCurricula as string[]) : []);
  const ids: string[] = [];
  const names = cell.split('/').map(key).filter(Boolean);
  if (!names.length) return null;
  for (const name of names) {
    const named = all.filter((c) => key(c.curriculumname) === name);
    const pick = named.find((c) => current.includes(c.curriculumid))
      ?? named.find((c) => !c.isdeleted && taught.has(c.curriculumid))
      ?? named.find((c) => !c.isdeleted);
    if (!pick) return null;
    if (!ids.includes(pick.curriculumid)) ids.push(pick.curriculumid);
  }
  return ids;
}

/** What a row changes in the learner and its school user: only the cells that differ from what is stored. */
function diff(
  row: EditRow,
  cur: Row,
  school: { schoolname: string },
  classid: string | null | undefined,
  curricula: string[],
  now: string,
  by: string | null,
) {
  const student: Row = {};
  const user: Row = {};
  const set = (col: string, value: unknown, old: unknown = cur[col]) => {
    if (!same(value, old)) student[col] = value;
  };
  set('studentfirstname', row.studentfirstname);
  for (const col of ['studentlastname', 'familyname', 'mothername', 'fathername', 'contact'] as const)
    set(col, row[col] ?? '');
  set('genderid', Number(row.genderid));
  let answered = false;
  for (const col of WG) {
    const v = row[col];
    if (blank(v)) continue;
    if (Number(v) !== cur[col]) {
      student[col] = Number(v);
      answered = true;
    }
  }
  if (answered) Object.assign(student, { wg_source: 1, wg_collected_at: now });
  for (const col of ['city', 'country', 'state'] as const) set(col, row[col]);
  set('schoolname', school.schoolname);
  if (classid !== undefined) set('standard', classid);
  set('schooltype', blank(row.schooltype) ? null : row.schooltype);
  for (const col of ['dateofbirth', 'dateofjoin'] as const) {
    const v = row[col];
    if (blank(v)) continue;
    const d = parseDmy(v, true) as Date;
    if (toDmy(cur[col]) !== toDmy(d.toISOString())) student[col] = d.toISOString();
  }
  if (!blank(row.type)) set('type', row.type);
  if ((row.isactive === 1) !== Boolean(cur.isactive)) student.isactive = row.isactive === 1;
  if ((row.is_teacher_acc === '1') !== Boolean(cur.is_teacher_acc)) student.is_teacher_acc = row.is_teacher_acc === '1';
  const current = idsOf(cur);
  if (curricula.join('\u0000') !== current.join('\u0000')) {
    student.curriculumids = JSON.stringify(curricula);
    if (!curricula.includes(String(cur.curriculumid))) student.curriculumid = curricula[0];
  }
  if (Object.keys(student).length) Object.assign(student, { updated_at: now, updated_by: by });

  if (row.schoolusername !== cur.schoolusername) user.schoolusername = row.schoolusername;
  if (!same(school.schoolname, cur.userschool)) user.schoolname = school.schoolname;
  return { student, user };
}

/** Checks every row and works out what each changes; the problems go to `problems`. */
async function plan(
  db: Knex,
  scope: Scope,
  rows: ReadonlyMap<number, EditRow>,
  problems: BatchProblems,
  by: string | null,
): Promise<Edit[]> {
  const { byId, schoolByKey, classByKey, curricula } = await context(db, scope, rows);
  const now = new Date().toISOString();
  const edits: Edit[] = [];
  const seen = new Set<string>();
  const names: Array<[index: number, username: string, renamed: boolean]> = [];
  for (const [i, row] of rows) {
    if (seen.has(row.studentid)) {
      problems.add(i, 'studentid', TWICE);
      continue;
    }
    seen.add(row.studentid);
    const cur = byId.get(row.studentid);
    if (!cur || cur.schooluserid !== row.schooluserid) {
      problems.add(i, 'studentid', NOT_FOUND);
      continue;
    }
    const rename =
      row.schoolusername.toLowerCase() !== String(cur.schoolusername).toLowerCase() ? row.schoolusername : undefined;
    names.push([i, row.schoolusername, !!rename]);
    let ok = true;
    const school = schoolByKey.get(key(row.schoolname ?? cur.schoolname));
    if (!school) {
      problems.add(i, 'schoolname', NO_PLACE);
      ok = false;
    }
    const teacherAccount = row.is_teacher_acc === '1';
    let classid: string | null | undefined;
    if (school) {
      const found = blank(row.standard) ? undefined : classByKey.get(`${school.schoolid}\u0000${key(row.standard)}`);
      if (found) classid = found;
      else if (!teacherAccount) {
        problems.add(i, 'standard', NO_PLACE);
        ok = false;
      } else if (school.schoolname !== cur.schoolname) {
        // A teacher account moved to a school where no class is named leaves its old school's class.
        classid = null;
      }
    }
    const ids = resolveCurricula(row.curriculums, idsOf(cur), school?.curriculums, curricula);
    if (!ids) {
      problems.add(i, 'curriculums', NO_CURRICULUM);
      ok = false;
    }
    if (!ok || !school || !ids) continue;
    const { student, user } = diff(row, cur, school, classid, ids, now, by);
    const password = blank(row.schooluserpasswordhash) ? undefined : String(row.schooluserpasswordhash);
    edits.push({
      index: i,
      studentid: row.studentid,
      schooluserid: row.schooluserid,
      student,
      user,
      password,
      passwordhash: cur.passwordhash,
      rename,
    });
  }
  // A name a row takes must be free: held by no other school user, and taken by one row only.
  const count = new Map<string, number>();
  for (const [, n] of names) count.set(n.toLowerCase(), (count.get(n.toLowerCase()) ?? 0) + 1);
  const twice = [...count].filter(([, c]) => c > 1).map(([n]) => n);
  const held = await takenUsernames(db, [
    ...new Set(names.filter(([, , renamed]) => renamed).map(([, n]) => n.toLowerCase())),
  ]);
  noteTakenUsernames(
    problems,
    names.filter(([, n, renamed]) => renamed || twice.includes(n.toLowerCase())).map(([i, n]) => [i, n]),
    [...new Set([...held, ...twice])],
  );
  return edits;
}

export async function updateStudentsHandler({
  config,
  db,
  caller,
  scope,
  body,
  query,
}: CentralCtx<{ query: typeof dryrunQuery }>) {
  const by = actorOf(caller);
  const problems = new BatchProblems();
  const input = fromSpreadsheet(body);
  const parsed = parseBatch(editBody, editRow, 'students', input, problems);
  const raw = (input as { students?: unknown[] })?.students ?? [];
  const rows = new Map<number, EditRow>();
  for (const i of [...parsed.goodRows].sort((a, b) => a - b)) rows.set(i, editRow.parse(raw[i]));
  const edits = await plan(db, scope, rows, problems, by);
  if (isDryrun(query)) return problems.report();
  problems.throwIfAny();

  const now = new Date().toISOString();
  for (const e of edits) {
    // The password the account already has is no change (a file sent twice must change nothing).
    if (e.password && (await verifyPassword(String(e.passwordhash ?? ''), e.password))) e.password = undefined;
    if (e.password)
      e.user.schooluserpasswordhash = await hashSchoolUserPassword(e.password, config.schoolUserPasswordFormat);
    if (Object.keys(e.user).length) Object.assign(e.user, { updated_at: now, updated_by: by });
  }
  const renames = edits.filter((e) => e.rename).map((e) => [e.index, e.rename as string] as [number, string]);
  try {
    await db.transaction(async (trx) => {
      // Checked again inside the transaction: another request may have taken a name since.
      const taken = await takenUsernames(trx, renames.map(([, n]) => n));
      if (taken.length) {
        const late = new BatchProblems();
        noteTakenUsernames(late, renames, taken);
        late.throwIfAny();
      }
      for (const e of edits) {
        if (Object.keys(e.student).length) await trx('students').where({ studentid: e.studentid }).update(e.student);
        if (Object.keys(e.user).length) await trx('schoolusers').where({ schooluserid: e.schooluserid }).update(e.user);
        if (e.password || e.rename) await revokeAll(trx, e.schooluserid);
      }
    });
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    const late = new BatchProblems();
    noteTakenUsernames(late, renames, await takenUsernames(db, renames.map(([, n]) => n)));
    late.throwIfAny();
    throw err;
  }
  return true;
}
