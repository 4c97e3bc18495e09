import crypto from 'node:crypto';
import { DEMO, seedDemoContent } from '@lms/db';
import { DEMO_IDS } from '@lms/shared';
import { profileClaims } from '../src/auth/claims';
import { issueAccessToken } from '../src/auth/tokens';
import type { TestApp } from './helpers';

export interface TokenOptions {
  /** Defaults to a fresh unique handle. */
  schoolusername?: string;
  schoolname?: string;
  /** Extra or overriding columns of the learner's students row (role 4, or any role with `student: true`). */
  studentFields?: Record<string, unknown>;
  /** Give a staff user a students row too (a teacher account used in the learner app). */
  student?: boolean;
  passwordhash?: string;
}

export interface TestUser {
  token: string;
  /** `Bearer <token>`, ready for the Authorization header. */
  auth: string;
  schooluserid: string;
  schoolusername: string;
  studentid?: string;
  jti: string;
}

let counter = 0;

/** Creates a school user of the given role (with a students row for a learner) and signs a token for it. */
export async function tokenFor(t: TestApp, role: 1 | 2 | 3 | 4, opts: TokenOptions = {}): Promise<TestUser> {
  const db = t.tdb.db;
  // On a database the classroom demo seed has filled, users join its school and class; elsewhere the shared skeleton's.
  const seeded = Boolean(await db('schools').where('schoolid', DEMO_IDS.schoolid).first());
  const S = seeded ? DEMO_IDS : DEMO;
  if (!seeded && !(await db('curriculums').where('curriculumid', DEMO.curriculumid).first())) await seedDemoContent(db);
  counter += 1;
  const schooluserid = crypto.randomUUID();
  const schoolusername = opts.schoolusername ?? `user${role}x${counter}${crypto.randomBytes(2).toString('hex')}`;
  const schoolname = opts.schoolname ?? S.schoolname;
  await db('schoolusers').insert({
    schooluserid,
    schoolusername,
    schooluserpasswordhash: opts.passwordhash ?? '',
    schooluserrole: role,
    schoolname,
  });
  let studentid: string | undefined;
  if (role === 4 || opts.student) {
    studentid = crypto.randomUUID();
    await db('students').insert({
      studentid,
      studentfirstname: `First${counter}`,
      studentlastname: `Last${counter}`,
      genderid: 1,
      standard: S.standardid,
      schoolname,
      city: 'Town',
      country: S.countryname,
      state: 'State',
      curriculumid: S.curriculumid,
      curriculumids: JSON.stringify([S.curriculumid]),
      gradeid: S.gradeid,
      isactive: true,
      schooluserid,
      is_teacher_acc: role !== 4,
      ...opts.studentFields,
    });
  }
  const claims = await profileClaims(db, { schooluserid, schoolusername, schooluserrole: role, schoolname });
  const { token, jti } = await issueAccessToken(
    db,
    { secret: t.config.jwtSecret, minutes: t.config.accessTokenMinutes },
    schooluserid,
    claims,
  );
  return { token, auth: `Bearer ${token}`, schooluserid, schoolusername, studentid, jti };
}

/** The raw SERVER_SYNC_KEY header value, as the central API sends it. */
export const syncKeyOf = (t: TestApp): string => t.config.serverSyncKey;
