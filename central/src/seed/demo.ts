import crypto from 'node:crypto';
import { DEMO, seedDemoContent, type Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { hashPassword } from '../auth/passwords';

const id = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Staff sign-ins per RBAC role (passwords meet the staff policy). API Key has no account: it is the APPLICATION_API_KEY. */
export const DEMO_STAFF = [
  { lmsusername: 'superadmin@demo.lms', password: 'DemoSuper1', roleid: ROLE_IDS.superadmin, role: 'Super Admin', firstname: 'Sam' },
  { lmsusername: 'admin@demo.lms', password: 'DemoAdmin1', roleid: ROLE_IDS.admin, role: 'Admin', firstname: 'Ada' },
  { lmsusername: 'teacher@demo.lms', password: 'DemoTeacher1', roleid: ROLE_IDS.teacher, role: 'Teacher', firstname: 'Tom' },
  { lmsusername: 'user@demo.lms', password: 'DemoUser1', roleid: ROLE_IDS.user, role: 'User', firstname: 'Uma' },
] as const;

// Same ids and handles as the classroom server's demo seed, as if the roster had been synced.
const SCHOOL_PASSWORD = 'demo';
const TEACHER = { schooluserid: id(200), schoolusername: 'demo.teacher' };
const LEARNERS = [
  { schooluserid: id(210), studentid: id(211), schoolusername: 'demo.student', first: 'Amina', last: 'Okafor', genderid: 2, wg: [1, 1, 2, 1, 1, 1] },
  { schooluserid: id(220), studentid: id(221), schoolusername: 'demo.student2', first: 'Jonas', last: 'Meyer', genderid: 1, wg: [1, 3, 1, 1, 1, 2] },
  { schooluserid: id(230), studentid: id(231), schoolusername: 'demo.student3', first: 'Lina', last: 'Haddad', genderid: 2, wg: null },
] as const;
const WG = ['wg_seeing', 'wg_hearing', 'wg_walking', 'wg_remembering', 'wg_selfcare', 'wg_communicating'] as const;

async function upsertStaff(trx: Knex, s: (typeof DEMO_STAFF)[number], hash: string): Promise<void> {
  const existing = await trx('lmsusers').where({ lmsusername: s.lmsusername }).first('lmsuserid');
  const lmsuserid = existing?.lmsuserid ?? crypto.randomUUID();
  const row = {
    lmsusername: s.lmsusername, lmsuserpasswordhash: hash, firstname: s.firstname, lastname: 'Demo', lmsuserrole: ROLE_IDS.superadmin,
    isverified: true, isdisabled: false, countries: JSON.stringify([]), schools: JSON.stringify([]),
  };
  if (existing) await trx('lmsusers').where({ lmsuserid }).update(row);
  else await trx('lmsusers').insert({ lmsuserid, ...row });
  await trx('lmsusers_roles').where({ lmsuserid }).del();
  await trx('lmsusers_roles').insert({ lmsuserid, roleid: s.roleid });
}

/** Demo data for development and test; returns the lines to print (sign-ins and what was loaded). */
export async function seedDemo(db: Knex): Promise<string[]> {
  await seedDemoContent(db);
  const staffHashes = await Promise.all(DEMO_STAFF.map((s) => hashPassword(s.password)));
  const schoolHash = await hashPassword(SCHOOL_PASSWORD);
  const now = new Date().toISOString();
  await db.transaction(async (trx) => {
    for (const [i, s] of DEMO_STAFF.entries()) await upsertStaff(trx, s, staffHashes[i]);
    const schoolusers = [
      { ...TEACHER, schooluserrole: 3 },
      ...LEARNERS.map((l) => ({ schooluserid: l.schooluserid, schoolusername: l.schoolusername, schooluserrole: 4 })),
    ];
    for (const u of schoolusers) {
      await trx('schoolusers')
        .insert({ ...u, schooluserpasswordhash: schoolHash, schooluserstatus: true, schoolname: DEMO.schoolname, isdisabled: false, isdeleted: false })
        .onConflict('schooluserid')
        .merge();
    }
    for (const l of LEARNERS) {
      const answers = Object.fromEntries(WG.map((k, i) => [k, l.wg ? l.wg[i] : null]));
      await trx('students')
        .insert({
          studentid: l.studentid, schooluserid: l.schooluserid, studentfirstname: l.first, studentlastname: l.last, familyname: '',
          mothername: 'Demo Mother', fathername: 'Demo Father', contact: '', dateofbirth: '2017-03-14T00:00:00.000Z', genderid: l.genderid,
          ...answers, wg_source: l.wg ? 1 : null, wg_collected_at: l.wg ? now : null,
          standard: DEMO.standardid, schooltype: 'Primary', schoolname: DEMO.schoolname, city: 'Demo Town', country: DEMO.countryname,
          state: 'Demo State', dateofjoin: '2026-01-05T00:00:00.000Z', curriculumid: DEMO.curriculumid,
          curriculumids: JSON.stringify([DEMO.curriculumid]), gradeid: DEMO.gradeid, startinglevelid: DEMO.levelid,
          studentcurrentlevelid: DEMO.levelid, studentcurrentlessonid: DEMO.lessonid, isactive: true, type: 'offline', is_teacher_acc: false,
        })
        .onConflict('studentid')
        .merge();
    }
  });
  return [
    `central: demo school "${DEMO.schoolname}" with curriculum "${DEMO.curriculumname}", ${LEARNERS.length} learners with Washington Group answers`,
    'central staff sign-ins (POST /auth/login):',
    ...DEMO_STAFF.map((s) => `  ${s.role.padEnd(11)} ${s.lmsusername} / ${s.password}`),
    `central school sign-in (POST /auth/school/login): teacher ${TEACHER.schoolusername} / ${SCHOOL_PASSWORD}`,
    `learners on the central roster (they sign in on the classroom server; a roster push, POST /sync/cloud/:schoolname/students, brings any missing there): ${LEARNERS.map((l) => l.schoolusername).join(', ')} / ${SCHOOL_PASSWORD}`,
    'API key: Authorization: Bearer <APPLICATION_API_KEY>; superadmin@superadmin.com has no password until `npm run set-password -w central`',
  ];
}
