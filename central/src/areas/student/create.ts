import crypto from 'node:crypto';
import { isUniqueViolation, type Knex } from '@lms/db';
import { writeStudentsZip, streamToBuffer } from '@lms/shared';
import { z } from 'zod';
import { hashSchoolUserPassword } from '../../auth/passwords';
import { BatchProblems, isDryrun, parseBatch } from '../../http/batch';
import { actorOf } from '../../http/context';
import { applyScope, type Scope } from '../../http/scope';
import type { CentralCtx } from '../../http/types';
import { createBody, createRow, parseDmy, WG, type CreateBody, type CreateRow } from './fields';
import { noteTakenUsernames, pushRoster, takenUsernames } from './store';

export const createStudentsQuery = z.looseObject({
  online: z.string().optional(),
  cloud: z.string().optional(),
  dryrun: z.string().optional(),
});

export type CreatedLearner = { schooluser: Record<string, unknown>; student: Record<string, unknown> };

interface Target {
  school?: { schoolid: string; schoolname: string; countryid: string | null };
}

/** One top-level field of the body on its own, so that its rules can be checked while rows are wrong. */
function field<K extends keyof CreateBody>(body: unknown, key: K): CreateBody[K] | undefined {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[key] : undefined;
  const parsed = createBody.shape[key].safeParse(value);
  return parsed.success ? (parsed.data as CreateBody[K]) : undefined;
}

/**
 * The business rules of an enrolment batch, every problem of every row (decision 29): the school
 * (a live one within the caller's scope), the curricula, the class (one of that school's), a class for
 * every learner that is not a teacher account, and usernames free whatever their case, also between
 * two rows of the batch.
 */
async function checkRules(
  db: Knex,
  scope: Scope,
  body: unknown,
  rows: ReadonlyMap<number, CreateRow>,
  problems: BatchProblems,
): Promise<Target> {
  const target: Target = {};
  const schoolid = field(body, 'schoolid');
  const curriculumid = field(body, 'curriculumid');
  const standard = field(body, 'standard');
  if (schoolid !== undefined) {
    const school = await applyScope(db('schools').where({ schoolid, isdeleted: false }), scope, {
      schoolid: 'schoolid',
    }).first('schoolid', 'schoolname', 'countryid');
    if (school)
      target.school = { schoolid: school.schoolid, schoolname: school.schoolname, countryid: school.countryid };
    else problems.add(null, 'schoolid', 'Invalid School Name');
  }
  if (curriculumid?.length) {
    const unique = [...new Set(curriculumid)];
    const found = await db('curriculums')
      .whereIn('curriculumid', unique)
      .where({ isdeleted: false })
      .select('curriculumid');
    if (found.length !== unique.length) problems.add(null, 'curriculumid', 'Invalid curriculum id');
    else if (!scope.all && target.school) {
      // A narrowed account enrols only on curricula offered in its school's country (as it sees no other).
      const offered = await db('curriculumcountry')
        .whereIn('curriculumid', unique)
        .where({ countryid: target.school.countryid ?? '' })
        .distinct('curriculumid');
      if (offered.length !== unique.length) problems.add(null, 'curriculumid', 'Invalid curriculum id');
    }
  }
  if (target.school && standard) {
    if (
      !(await db('standards')
        .where({ standardid: standard, schoolid: target.school.schoolid, isdeleted: false })
        .first('standardid'))
    ) {
      problems.add(null, 'standard', 'Invalid standard id');
    }
  }
  if (standard === undefined || !standard) {
    for (const [i, row] of rows)
      if (row.is_teacher_acc !== '1') problems.add(i, 'standard', 'Student must has a class!');
  }
  noteTakenUsernames(
    problems,
    [...rows].map(([i, r]) => [i, r.schoolusername]),
    await takenUsernames(
      db,
      [...rows.values()].map((r) => r.schoolusername),
    ),
  );
  return target;
}

function learnerRows(
  body: CreateBody,
  school: { schoolname: string },
  hashes: string[],
  online: boolean,
  by: string | null,
): CreatedLearner[] {
  const now = new Date().toISOString();
  return body.students.map((s, i) => {
    const schooluserid = crypto.randomUUID();
    const teacherAccount = s.is_teacher_acc === '1';
    const answers = Object.fromEntries(WG.map((k) => [k, s[k] ? Number(s[k]) : null]));
    const answered = Object.values(answers).some((v) => v !== null);
    return {
      schooluser: {
        schooluserid,
        schoolusername: s.schoolusername,
        schooluserpasswordhash: hashes[i],
        schooluserrole: 4,
        schooluserstatus: true,
        schoolname: school.schoolname,
        isdisabled: false,
        isdeleted: false,
        created_by: by,
        updated_by: by,
      },
      student: {
        studentid: crypto.randomUUID(),
        schooluserid,
        studentfirstname: s.studentfirstname,
        studentlastname: s.studentlastname ?? '',
        familyname: s.familyname ?? '',
        mothername: s.mothername ?? '',
        fathername: s.fathername ?? '',
        contact: s.contact ?? '',
        dateofbirth: parseDmy(s.dateofbirth)?.toISOString() ?? null,
        dateofjoin: (parseDmy(s.dateofjoin) ?? new Date()).toISOString(),
        genderid: Number(s.genderid),
        ...answers,
        wg_source: answered ? 1 : null,
        wg_collected_at: answered ? now : null,
        city: s.city,
        country: s.country,
        state: s.state,
        schooltype: s.schooltype ?? null,
        schoolname: school.schoolname,
        standard: body.standard || null,
        curriculumid: body.curriculumid[0],
        curriculumids: JSON.stringify([...new Set(body.curriculumid)]),
        type: online || teacherAccount ? 'online' : 'offline',
        isactive: true,
        is_teacher_acc: teacherAccount,
        isdeleted: false,
        created_by: by,
        updated_by: by,
      },
    };
  });
}

/**
 * POST /student/create: a school user (role 4) and a learner row per item, all or nothing, in one
 * transaction; `?cloud=true` also pushes them to the classroom server before it commits; `?dryrun=true`
 * only checks. Bodies are checked here rather than by the route's schema because a dry run answers
 * 200 with the problems instead of refusing.
 */
export async function createStudentsHandler({
  config,
  db,
  caller,
  scope,
  body,
  query,
}: CentralCtx<{ query: typeof createStudentsQuery }>) {
  const problems = new BatchProblems();
  const parsed = parseBatch(createBody, createRow, 'students', body, problems);
  const rows = new Map<number, CreateRow>();
  const raw = Array.isArray((body as { students?: unknown })?.students)
    ? (body as { students: unknown[] }).students
    : [];
  for (const i of parsed.goodRows) rows.set(i, createRow.parse(raw[i]));
  const target = await checkRules(db, scope, body, rows, problems);
  if (isDryrun(query)) return problems.report();
  problems.throwIfAny();
  const valid = parsed.value as CreateBody;
  const school = target.school as { schoolid: string; schoolname: string };

  const hashes = await Promise.all(
    valid.students.map((s) => hashSchoolUserPassword(s.schooluserpasswordhash, config.schoolUserPasswordFormat)),
  );
  const created = learnerRows(valid, school, hashes, query.online !== 'false', actorOf(caller));
  const usernames = valid.students.map((s) => s.schoolusername);
  try {
    await db.transaction(async (trx) => {
      // Checked again inside the transaction: another batch may have taken a name since.
      const taken = await takenUsernames(trx, usernames);
      if (taken.length) {
        const late = new BatchProblems();
        noteTakenUsernames(late, usernames.map((u, i) => [i, u]), taken);
        late.throwIfAny();
      }
      await trx.batchInsert('schoolusers', created.map((c) => c.schooluser), 200);
      await trx.batchInsert('students', created.map((c) => c.student), 200);
      if (query.cloud === 'true') {
        const studentusers = created.map((c) => ({
          ...c.schooluser,
          student: { ...c.student, curriculumids: JSON.parse(String(c.student.curriculumids)) },
        }));
        await pushRoster(config, '/import/students', await streamToBuffer(writeStudentsZip({ studentusers })));
      }
    });
  } catch (err) {
    // Two batches at once: the unique index on the lower-cased username decides, the loser hears why.
    if (!isUniqueViolation(err)) throw err;
    const late = new BatchProblems();
    noteTakenUsernames(late, usernames.map((u, i) => [i, u]), await takenUsernames(db, usernames));
    late.throwIfAny();
    throw err;
  }
  return true;
}
