import crypto from 'node:crypto';
import request from 'supertest';
import type { Knex } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { hashPassword } from '../src/auth/passwords';
import type { TestApp } from './helpers';
import { createRole, createStaff, schoolLogin, staffLogin } from './accounts';
import { document, question } from './content';
import { addLearner, seedWorld, type World } from './people-fixtures';

/**
 * Two sides of the organisation for the scope tests: side A (country X, school A) and side B (country Y,
 * school B), each with a class, learners, a teacher, a curriculum offered in its country only, and a
 * curriculum tree below it (grade, level, lesson, the four lesson items, the question links of the
 * practice, the quiz and the level), an assessment with a question, a feedback and a fee record.
 * `Side` names each of them by the id (or name) a route takes.
 */
export interface Side {
  countryid: string;
  schoolid: string;
  schoolname: string;
  standardid: string;
  studentid: string;
  /** The learner's school user and its name. */
  schooluserid: string;
  schoolusername: string;
  teacherid: string;
  curriculumid: string;
  gradeid: string;
  levelid: string;
  lessonid: string;
  lessonlearningid: string;
  lessonplanid: string;
  lessonpracticeid: string;
  lessonquizid: string;
  lessonpracticequestionid: string;
  lessonquizquestionid: string;
  levelquizquestionid: string;
  curriculumbaselineid: string;
  baselinequestionid: string;
  feedbackid: string;
  schoolcontributeid: string;
  /** A staff account (Teacher role) narrowed to the side's school. */
  lmsuserid: string;
  /** A fleet box registered for the side's school. */
  boxid: string;
  /** A diagnostics report the side's box sent. */
  diagnosticid: string;
}

export interface Sides {
  world: World;
  A: Side;
  B: Side;
  /** Shared by both sides (the question bank and media are global). */
  questionid: string;
  documentid: string;
  subjectid: string;
}

const uuid = () => crypto.randomUUID();

async function contentTree(
  db: Knex,
  s: Partial<Side>,
  tag: string,
  questionid: string,
  documentid: string,
): Promise<void> {
  const ids = {
    gradeid: uuid(),
    levelid: uuid(),
    lessonid: uuid(),
    lessonlearningid: uuid(),
    lessonplanid: uuid(),
    lessonpracticeid: uuid(),
    lessonquizid: uuid(),
    lessonpracticequestionid: uuid(),
    lessonquizquestionid: uuid(),
    levelquizquestionid: uuid(),
    curriculumbaselineid: uuid(),
    baselinequestionid: uuid(),
  };
  Object.assign(s, ids);
  await db('grades').insert({
    gradeid: ids.gradeid,
    curriculumid: s.curriculumid,
    gradename: `Grade ${tag}`,
    gradeorder: 1,
    gradestatus: true,
    passing_points: 0,
    points: 0,
  });
  await db('levels').insert({
    levelid: ids.levelid,
    gradeid: ids.gradeid,
    levelname: `Level ${tag}`,
    levelorder: 1,
    levelstatus: true,
    quiz_points: 100,
    passing_points: 0,
    points: 0,
  });
  await db('lessons').insert({
    lessonid: ids.lessonid,
    levelid: ids.levelid,
    lessonname: `Lesson ${tag}`,
    lessonorder: 1,
    lessonstatus: true,
    total_points: 100,
    passing_points: 0,
  });
  const item = (p: string, extra: Record<string, unknown>) => ({
    [`${p}id`]: (ids as Record<string, string>)[`${p}id`],
    lessonid: ids.lessonid,
    [`${p}name`]: `${p} ${tag}`,
    [`${p}description`]: 'd',
    [`${p}order`]: 1,
    [`${p}status`]: true,
    points: 0,
    ...extra,
  });
  await db('lessonlearnings').insert(item('lessonlearning', { documentid }));
  await db('lessonplans').insert(item('lessonplan', { documentid }));
  await db('lessonpractices').insert(item('lessonpractice', {}));
  await db('lessonquizzes').insert(item('lessonquiz', {}));
  await db('lessonpracticequestions').insert({
    lessonpracticequestionid: ids.lessonpracticequestionid,
    lessonpracticeid: ids.lessonpracticeid,
    questionid,
    lessonpracticequestionstatus: true,
    lessonpracticequestionorder: 1,
  });
  await db('lessonquizquestions').insert({
    lessonquizquestionid: ids.lessonquizquestionid,
    lessonquizid: ids.lessonquizid,
    questionid,
    lessonquizquestionstatus: true,
    lessonquizquestionorder: 1,
  });
  await db('levelquizquestions').insert({
    levelquizquestionid: ids.levelquizquestionid,
    levelid: ids.levelid,
    questionid,
    levelquizquestionstatus: true,
    levelquizquestionorder: 1,
  });
  await db('curriculumbaseline').insert({
    curriculumbaselineid: ids.curriculumbaselineid,
    curriculumid: s.curriculumid,
    baselineid: s.curriculumid,
    baselinename: `Baseline ${tag}`,
    baselinetype: 1,
    baselinestatus: false,
    schoolid: JSON.stringify([s.schoolid]),
  });
  await db('baselinequestion').insert({
    baselinequestionid: ids.baselinequestionid,
    curriculumbaselineid: ids.curriculumbaselineid,
    questionid,
    baselinequestionstatus: true,
    baselinequestionorder: 1,
  });
}

/** Seeds both sides (on top of the people tests' world: school A in country X, school B in country Y). */
export async function seedSides(db: Knex): Promise<Sides> {
  const world = await seedWorld(db);
  const questionid = await question(db);
  const documentid = await document(db);
  // Curriculum 2 (Numbers) is offered in country X only; a third, in country Y only, is school B's.
  const curriculumB = uuid();
  const subject = (await db('curriculums').where({ curriculumid: world.curriculum2 }).first('subjectid')) as {
    subjectid: string;
  };
  await db('curriculums').insert({
    curriculumid: curriculumB,
    curriculumname: 'Calcul',
    subjectid: subject.subjectid,
    curriculumstatus: true,
  });
  await db('curriculumcountry').insert([
    { curriculumcountryid: uuid(), curriculumid: world.curriculum2, countryid: world.countryX },
    { curriculumcountryid: uuid(), curriculumid: curriculumB, countryid: world.countryY },
  ]);
  await db('schools')
    .where({ schoolid: world.schoolB.schoolid })
    .update({ curriculums: JSON.stringify([world.curriculum1, curriculumB]) });
  const sides = { world, questionid, documentid, subjectid: subject.subjectid } as Sides;
  const hash = await hashPassword('teach1');
  for (const [k, school, klass, country, curriculumid] of [
    ['A', world.schoolA, world.classA1, world.countryX, world.curriculum2],
    ['B', world.schoolB, world.classB1, world.countryY, curriculumB],
  ] as const) {
    const s: Partial<Side> = {
      countryid: country,
      schoolid: school.schoolid,
      schoolname: school.schoolname,
      standardid: klass,
      curriculumid,
    };
    const learner = await addLearner(db, {
      schoolname: school.schoolname,
      standard: klass,
      schoolusername: `learner${k}`,
      curriculumids: [curriculumid],
      studentfirstname: `Learner${k}`,
    });
    s.studentid = learner.studentid;
    s.schooluserid = learner.schooluserid;
    s.schoolusername = `learner${k}`;
    s.teacherid = uuid();
    await db('schoolusers').insert({
      schooluserid: s.teacherid,
      schoolusername: `teacher${k}`,
      schooluserpasswordhash: hash,
      schooluserrole: 3,
      schoolname: school.schoolname,
    });
    await contentTree(db, s, k, questionid, documentid);
    s.feedbackid = uuid();
    await db('feedbacks').insert({
      feedbackid: s.feedbackid,
      created_by: s.teacherid,
      teachername: `Teacher ${k}`,
      curriculumid,
      feedback: JSON.stringify({ general: 'fine' }),
      image: JSON.stringify([]),
    });
    s.schoolcontributeid = uuid();
    await db('schoolcontributedata').insert({
      schoolcontributeid: s.schoolcontributeid,
      ...school,
      countryid: country,
      expected: 10,
      actual: 5,
      created_at: '2026-05-05T05:05:05.000Z',
    });
    s.lmsuserid = await createStaff(db, {
      lmsusername: `staff${k}-${crypto.randomBytes(3).toString('hex')}@scope.test`,
      roleids: [ROLE_IDS.teacher],
      schools: [school.schoolid],
    });
    s.boxid = uuid();
    await db('boxes').insert({ boxid: s.boxid, schoolid: school.schoolid, name: `Box ${k}`, state: 'enrolled',
      secrethash: '0'.repeat(64) });
    s.diagnosticid = uuid();
    await db('boxdiagnostics').insert({ diagnosticid: s.diagnosticid, boxid: s.boxid, state: 'received',
      receivedat: new Date().toISOString(), bytes: 2, body: '{}' });
    sides[k] = s as Side;
  }
  return sides;
}

/** The narrowed caller kinds every scope test runs as. */
export type Narrowed = 'adminOfSchoolA' | 'adminOfCountryX' | 'teacherOfSchoolA' | 'schoolTeacherA';
export const NARROWED: readonly Narrowed[] = [
  'adminOfSchoolA',
  'adminOfCountryX',
  'teacherOfSchoolA',
  'schoolTeacherA',
];

/** Bearer headers of the narrowed callers and of an unnarrowed super admin (who seeds and checks). */
export async function narrowedCallers(t: TestApp, s: Sides): Promise<Record<Narrowed | 'superadmin', string>> {
  const db = t.tdb.db;
  const tag = crypto.randomBytes(3).toString('hex');
  const staff = async (name: string, roleids: string[], o: { schools?: string[]; countries?: string[] } = {}) => {
    const lmsusername = `${name}-${tag}@scope.test`;
    await createStaff(db, { lmsusername, roleids, ...o });
    return `Bearer ${(await staffLogin(t.app, lmsusername)).accessToken}`;
  };
  // The narrowed Admins also manage staff accounts (a role the Admin role lacks, given here on purpose).
  const manager = await createRole(db, `Staff manager ${tag}`, [
    'create_user',
    'view_user',
    'update_user',
    'delete_user',
  ]);
  return {
    superadmin: await staff('super', [ROLE_IDS.superadmin]),
    adminOfSchoolA: await staff('admin-school', [ROLE_IDS.admin, manager], { schools: [s.A.schoolid] }),
    adminOfCountryX: await staff('admin-country', [ROLE_IDS.admin, manager], { countries: [s.A.countryid] }),
    teacherOfSchoolA: await staff('teacher-school', [ROLE_IDS.teacher], { schools: [s.A.schoolid] }),
    schoolTeacherA: `Bearer ${(await schoolLogin(t.app, 'teacherA', 'teach1')).accessToken}`,
  };
}

export const send = (t: TestApp, auth: string, method: string, url: string, body?: unknown) => {
  const r = request(t.app)[method.toLowerCase() as 'get'](url).set('Authorization', auth);
  return body === undefined ? r : r.send(body as object);
};
