import crypto from 'node:crypto';
import request from 'supertest';
import type { Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { hashPassword } from '../src/auth/passwords';
import type { TestApp } from './helpers';
import { createStaff, schoolLogin, staffLogin } from './accounts';

/**
 * Two countries, each with one school of two classes, and two curricula: the world the school, class,
 * learner, teacher and fee tests work in. School B lies in country Y, outside the scoped accounts.
 */
export interface World {
  countryX: string;
  countryY: string;
  curriculum1: string;
  curriculum2: string;
  schoolA: { schoolid: string; schoolname: string };
  schoolB: { schoolid: string; schoolname: string };
  classA1: string;
  classA2: string;
  classB1: string;
}

export async function seedWorld(db: Knex): Promise<World> {
  const w: World = {
    countryX: crypto.randomUUID(),
    countryY: crypto.randomUUID(),
    curriculum1: crypto.randomUUID(),
    curriculum2: crypto.randomUUID(),
    schoolA: { schoolid: crypto.randomUUID(), schoolname: 'Accra Primary' },
    schoolB: { schoolid: crypto.randomUUID(), schoolname: 'Bamako Primary' },
    classA1: crypto.randomUUID(),
    classA2: crypto.randomUUID(),
    classB1: crypto.randomUUID(),
  };
  const subjectid = crypto.randomUUID();
  await db('countries').insert([
    { countryid: w.countryX, countryname: 'Ghana', expectedusage: 0 },
    { countryid: w.countryY, countryname: 'Mali', expectedusage: 0 },
  ]);
  await db('subjects').insert({ subjectid, subjectname: 'Literacy' });
  await db('curriculums').insert([
    { curriculumid: w.curriculum1, curriculumname: 'Reading', subjectid, curriculumstatus: true },
    { curriculumid: w.curriculum2, curriculumname: 'Numbers', subjectid, curriculumstatus: true },
  ]);
  await db('schools').insert([
    {
      ...w.schoolA,
      countryid: w.countryX,
      curriculums: JSON.stringify([w.curriculum1, w.curriculum2]),
      brandingconfig: JSON.stringify({ logo: 'a.png', colours: ['#fff'] }),
    },
    { ...w.schoolB, countryid: w.countryY, curriculums: JSON.stringify([w.curriculum1]) },
  ]);
  await db('standards').insert([
    { standardid: w.classA1, standardname: 'Class 1', ...w.schoolA },
    { standardid: w.classA2, standardname: 'Class 2', ...w.schoolA },
    { standardid: w.classB1, standardname: 'Class 1', ...w.schoolB },
  ]);
  return w;
}

let learnerHash: Promise<string> | undefined;

/** A learner and its school user, written directly (the routes under test are not the way in). */
export async function addLearner(
  db: Knex,
  o: {
    schoolname: string;
    standard: string | null;
    schoolusername: string;
    curriculumids: string[];
    studentfirstname?: string;
    extra?: Record<string, unknown>;
  },
): Promise<{ studentid: string; schooluserid: string }> {
  learnerHash ??= hashPassword('pass1');
  const schooluserid = crypto.randomUUID();
  const studentid = crypto.randomUUID();
  await db('schoolusers').insert({
    schooluserid,
    schoolusername: o.schoolusername,
    schooluserpasswordhash: await learnerHash,
    schooluserrole: 4,
    schoolname: o.schoolname,
  });
  await db('students').insert({
    studentid,
    schooluserid,
    studentfirstname: o.studentfirstname ?? 'Kofi',
    studentlastname: 'Mensah',
    genderid: 1,
    city: 'Accra',
    country: 'Ghana',
    state: 'Greater Accra',
    schoolname: o.schoolname,
    standard: o.standard,
    curriculumid: o.curriculumids[0],
    curriculumids: JSON.stringify(o.curriculumids),
    dateofjoin: '2026-01-05T00:00:00.000Z',
    isactive: true,
    type: 'offline',
    ...o.extra,
  });
  return { studentid, schooluserid };
}

export type Who =
  | 'admin'
  | 'teacher'
  | 'user'
  | 'superadmin'
  | 'scopedSchool'
  | 'scopedCountry'
  | 'apikey'
  | 'schoolteacher'
  | 'schoolteacherB';

/** Bearer headers of every kind of caller the people routes meet. */
export async function callers(t: TestApp, w: World, apiKey?: string): Promise<Record<Who, string>> {
  const db = t.tdb.db;
  const tag = crypto.randomBytes(3).toString('hex');
  const staff = async (name: string, roleids: string[], o: { schools?: string[]; countries?: string[] } = {}) => {
    const lmsusername = `${name}-${tag}@people.test`;
    await createStaff(db, { lmsusername, roleids, ...o });
    return `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`;
  };
  const schoolTeacher = async (schoolname: string) => {
    const schoolusername = `t${tag}${schoolname.slice(0, 1)}`;
    await db('schoolusers').insert({
      schooluserid: crypto.randomUUID(),
      schoolusername,
      schooluserpasswordhash: await hashPassword('demo'),
      schooluserrole: 3,
      schoolname,
    });
    return `Bearer ${(await schoolLogin(t.app, schoolusername, 'demo')).accessToken}`;
  };
  return {
    admin: await staff('admin', [ROLE_IDS.admin]),
    teacher: await staff('teacher', [ROLE_IDS.teacher]),
    user: await staff('user', [ROLE_IDS.user]),
    superadmin: await staff('super', [ROLE_IDS.superadmin]),
    scopedSchool: await staff('scoped-school', [ROLE_IDS.admin], { schools: [w.schoolA.schoolid] }),
    scopedCountry: await staff('scoped-country', [ROLE_IDS.admin], { countries: [w.countryX] }),
    apikey: `Bearer ${apiKey ?? 'no-api-key'}`,
    schoolteacher: await schoolTeacher(w.schoolA.schoolname),
    schoolteacherB: await schoolTeacher(w.schoolB.schoolname),
  };
}

/** Every row of the tables, for asserting that a refused request wrote nothing. */
export async function snapshot(db: Knex, tables: string[]): Promise<Record<string, unknown[]>> {
  const out: Record<string, unknown[]> = {};
  for (const table of tables) {
    const columns = Object.keys(await db(table).columnInfo()).sort();
    out[table] = await db(table).orderBy(columns).select();
  }
  return out;
}

export const req = (t: TestApp) => request(t.app);

/** RFC 4180 text (quoted cells, doubled quotes, LF or CRLF lines) as records keyed by the header line. */
export function parseCsv(text: string): Array<Record<string, string>> {
  const lines: string[][] = [];
  let cell = '';
  let line: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i += 1; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { line.push(cell); cell = ''; }
    else if (c === '\n' || (c === '\r' && text[i + 1] === '\n')) {
      if (c === '\r') i += 1;
      line.push(cell); lines.push(line); line = []; cell = '';
    } else cell += c;
  }
  line.push(cell);
  lines.push(line);
  const [header, ...rows] = lines;
  return rows.map((r) => Object.fromEntries(header.map((h, i) => [h, r[i] ?? ''])));
}
