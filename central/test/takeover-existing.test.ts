import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { takeover } from '@lms/db';
import { migrateFromMysql } from '../src/takeover/command';
import { makeApp, type TestApp } from './helpers';
import { md5hex } from './takeover-fixture';

const SERVER = takeover.testMysqlUrl();
// CI provides MariaDB (scripts/ci/ensure-mariadb.sh): there a missing server fails the file instead of skipping it.
const available = Boolean(process.env.CI) || (await takeover.mysqlAnswers(SERVER));
const uuid = () => crypto.randomUUID();

const ids = {
  staff: uuid(), noPassword: uuid(), huge: uuid(), twin: uuid(), country: uuid(), school: uuid(), subject: uuid(),
  curriculum: uuid(),
  teacher: uuid(), learnerUser: uuid(), learner: uuid(), result: uuid(), answer: uuid(), access: uuid(), org: uuid(),
};
// bcryptjs 2.x wrote `$2a$`; the same hash under either prefix.
const bcrypt2a = (password: string) => bcrypt.hashSync(md5hex(password), 10).replace(/^\$2b\$/, '$2a$');

/**
 * A central of a later release of the existing system: its own table layout plus organisation links and the
 * grading protocol's columns, `studentprogressquestions` made by hand, and rows that use those columns.
 */
async function seed(conn: takeover.ScratchMysql['conn']): Promise<void> {
  await takeover.createOriginalSchema(conn, { service: 'central', later: true });
  await conn.query("SET SESSION sql_mode = ''");
  const put = (table: string, rows: Array<Record<string, unknown>>) => takeover.insertOriginalRows(conn, table, rows);
  await put('lmsusers', [
    {
      lmsuserid: ids.staff, lmsusername: 'old@org.example', lmsuserpasswordhash: bcrypt2a('Older1234'),
      firstname: 'Old',
      lmsuserrole: 'Mapyr2Pw', isverified: 1, isdisabled: 0, type: 0, organisationid: ids.org,
    },
    // The original has no unique key on staff usernames: two accounts whose names differ in case.
    {
      lmsuserid: ids.twin, lmsusername: 'NoPass@Org.example', lmsuserpasswordhash: bcrypt2a('Twin12345'),
      firstname: 'Twin',
      lmsuserrole: 'Mapyr2Pw', isverified: 1, isdisabled: 0, type: 1, organisationid: null,
    },
    // INT UNSIGNED takes it; no whole-number column here does.
    {
      lmsuserid: ids.huge, lmsusername: 'huge@org.example', lmsuserpasswordhash: bcrypt2a('Huge12345'), firstname: 'H',
      lmsuserrole: 'Mapyr2Pw', isverified: 1, isdisabled: 0, type: 4294967295, organisationid: null,
    },
    {
      lmsuserid: ids.noPassword, lmsusername: 'nopass@org.example', lmsuserpasswordhash: '', firstname: 'No',
      lmsuserrole: 'Mapyr2Pw', isverified: 0, isdisabled: 0, type: 1, organisationid: null,
    },
  ]);
  const links = [ids.staff, ids.noPassword, ids.huge, ids.twin].map((lmsuserid) => ({ roleid: 'zr5ER4QD', lmsuserid }));
  await put('lmsusers_roles', links);
  await put('countries', [{ countryid: ids.country, countryname: 'Ghana', isdeleted: 0, expectedusage: 12.5 }]);
  await put('schools', [{
    schoolid: ids.school, schoolname: 'Accra Primary', curriculums: JSON.stringify([ids.curriculum]),
    countryid: ids.country,
    isdeleted: 0, expectedcontribution: 3.25, organisationid: ids.org,
  }]);
  await put('subjects', [{ subjectid: ids.subject, subjectname: 'Maths', subjectstatus: 1, isdeleted: 0 }]);
  await put('curriculums', [{
    curriculumid: ids.curriculum, curriculumname: 'Numbers', curriculumstatus: 1, isdeleted: 0, subjectid: ids.subject,
  }]);
  await put('schoolusers', [
    {
      schooluserid: ids.teacher, schoolusername: 'teachnew', schooluserpasswordhash: bcrypt2a('Teach1'),
      schooluserrole: 3,
      schooluserstatus: 1, schoolname: 'Accra Primary', isdisabled: 0, isdeleted: 0,
    },
    {
      schooluserid: ids.learnerUser, schoolusername: 'esi', schooluserpasswordhash: md5hex('esi123'), schooluserrole: 4,
      schooluserstatus: 1, schoolname: 'Accra Primary ', isdisabled: 0, isdeleted: 0,
    },
  ]);
  await put('students', [{
    studentid: ids.learner, studentfirstname: 'Esi', genderid: 2, city: 'Accra', country: 'Ghana', state: 'GA',
    curriculumid: ids.curriculum, schooluserid: ids.learnerUser, schoolname: 'Accra Primary ', isactive: 1,
    curriculumids: 'null', dateofbirth: '0000-00-00 00:00:00', dateofjoin: '2026-01-05 00:00:00',
  }]);
  // The learner's id written in upper case by a hand-made import: the original's case-insensitive collation
  // joins it to the learner all the same.
  await put('studentprogress', [{
    studentprogressid: ids.result, studentid: ids.learner.toUpperCase(), studentprogressreferenceid: ids.curriculum,
    progresstype: 2, ispass: 1, starttime: '2026-06-01 08:00:00', endtime: '2026-06-01 08:05:00', verified: 1,
  }]);
  await put('studentprogressquestions', [{
    studentprogressquestionid: ids.answer, studentprogressid: ids.result, tries: 1, iscorrect: 1,
    referencequestionid: uuid(),
    clientiscorrect: 0, servergrade: 'ungradable',
  }]);
  // Tables the existing central's 2026-07 migration skips when they exist: hand-made ones with other types.
  await conn.query('DROP TABLE lmsuseraccess, databuild');
  await conn.query(
    'CREATE TABLE lmsuseraccess (useraccessid varchar(45) NOT NULL PRIMARY KEY, userid varchar(45) NOT NULL,'
    + ' logintime varchar(45) NOT NULL, ipaddress varchar(45) NOT NULL)',
  );
  await conn.query(
    'CREATE TABLE databuild (databuildid bigint unsigned NOT NULL AUTO_INCREMENT PRIMARY KEY,'
    + ' buildname varchar(45) NOT NULL, builddate timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,'
    + ' builduser varchar(36) NOT NULL)',
  );
  await put('lmsuseraccess', [
    { useraccessid: ids.access, userid: ids.staff, logintime: '2026-06-02 10:00:00', ipaddress: '10.0.0.8' },
  ]);
  await put('databuild', [
    { databuildid: 41, buildname: 'June', builddate: '2026-06-03 11:00:00', builduser: ids.staff },
  ]);
  await put('rpiuseraccess', [{
    rpiuseraccessid: ids.access, userid: ids.learnerUser, ipaddress: '10.0.0.7', logintime: '2026-06-01 07:59:00',
    timespent: '17',
  }]);
}

describe.skipIf(!available)('migrate-from-mysql from a central of a later release of the existing system', () => {
  let src: takeover.ScratchMysql;
  let t: TestApp;
  let run: Awaited<ReturnType<typeof migrateFromMysql>>;
  const lines: string[] = [];

  beforeAll(async () => {
    src = await takeover.createScratchMysql(SERVER);
    await seed(src.conn);
    t = await makeApp({ JWT_SECRET: 'takeover-existing-secret' });
    run = await migrateFromMysql(t.tdb.db, ['--source', src.url], { out: (l) => lines.push(l), err: () => undefined });
  }, 120_000);
  afterAll(async () => {
    await t?.tdb.dispose();
    await src?.drop();
  });

  const table = (name: string) => run.tables.tables.find((x) => x.table === name)!;

  it('copies every valid row and names the columns it has no place for', () => {
    expect(run.tables.refusedRows).toEqual([
      {
        table: 'lmsusers', id: ids.huge,
        reason: '4294967295 is beyond the whole numbers this service stores (-2147483648 to 2147483647)',
      },
      {
        table: 'lmsusers_roles', id: `${ids.huge} zr5ER4QD`,
        reason: `orphan: lmsuserid ${ids.huge} names no lmsusers row`,
      },
    ]);
    expect(run.code).toBe(1);
    expect(table('lmsusers')).toMatchObject({ read: 4, copied: 3, refused: 1 });
    expect(run.tables.notes)
      .toContain('lmsusers: 2 accounts share the username nopass@org.example (ignoring case): rename all but one');
    expect(lines.join('\n')).toContain('2 accounts share the username nopass@org.example');
    const counts = [['schools', 1], ['schools', 1], ['studentprogress', 1], ['studentprogressquestions', 1]] as const;
    for (const [name, n] of counts) {
      expect(table(name)).toMatchObject({ read: n, copied: n, refused: 0 });
    }
    expect(table('lmsusers').notes).toEqual(['source columns with no place here, not copied: organisationid']);
    expect(table('schools').notes).toEqual(['source columns with no place here, not copied: organisationid']);
    expect(table('studentprogress').notes).toEqual(['source columns with no place here, not copied: verified']);
    expect(table('studentprogressquestions').notes)
      .toEqual(['source columns with no place here, not copied: clientiscorrect, servergrade']);
    expect(lines.join('\n')).toContain('studentprogressquestions: source columns with no place here, not copied');
  });

  it('keeps the values of the existing system\'s own types', async () => {
    const db = t.tdb.db;
    expect((await db('lmsusers').where({ lmsuserid: ids.staff }).first()).type).toBe(0);
    expect(Number((await db('countries').first()).expectedusage)).toBe(12.5);
    expect(Number((await db('schools').first()).expectedcontribution)).toBe(3.25);
    expect(Number((await db('rpiuseraccess').first()).timespent)).toBe(17);
    const learner = await db('students').where({ studentid: ids.learner }).first();
    expect([learner.dateofbirth, learner.dateofjoin, learner.curriculumids, learner.schoolname])
      .toEqual([null, '2026-01-05T00:00:00.000Z', null, 'Accra Primary ']);
    const q = await db('studentprogressquestions').where({ studentprogressquestionid: ids.answer }).first();
    expect([q.studentprogressid, Boolean(q.iscorrect)]).toEqual([ids.result, true]);
  });

  it('copies hand-made tables whose columns have other types than the migrations give', async () => {
    const db = t.tdb.db;
    expect(await db('lmsuseraccess').select('useraccessid', 'logintime'))
      .toEqual([{ useraccessid: ids.access, logintime: '2026-06-02T10:00:00.000Z' }]);
    expect(await db('databuild').select('databuildid', 'builddate'))
      .toEqual([{ databuildid: 41, builddate: '2026-06-03T11:00:00.000Z' }]);
    await db('databuild').insert({ buildname: 'next', builddate: new Date().toISOString(), builduser: ids.staff });
    expect((await db('databuild').max({ m: 'databuildid' }).first())?.m).toBe(42);
  });

  it('joins a result whose learner id the existing system stored in upper case to that learner', async () => {
    const row = await t.tdb.db('studentprogress').where({ studentprogressid: ids.result }).first('studentid');
    expect(row).toEqual({ studentid: ids.learner });
    expect(table('studentprogress')).toMatchObject({ transformed: 1, changes: { 'upper-case id lower-cased': 1 } });
  });

  it('lets a `$2a$` account sign in, and never one without a password', async () => {
    const login = (lmsusername: string, lmsuserpassword: string) =>
      request(t.app).post('/auth/login').send({ lmsusername, lmsuserpassword });
    expect((await login('old@org.example', 'Older1234')).status).toBe(200);
    expect((await login('nopass@org.example', '')).status).toBe(400);
    expect((await login('nopass@org.example', 'anything1')).status).toBe(400);
    const teacher = await request(t.app).post('/auth/school/login')
      .send({ lmsusername: 'teachnew', lmsuserpassword: 'Teach1' });
    expect(teacher.status).toBe(200);
  });
});
