import crypto from 'node:crypto';
import bcrypt from 'bcryptjs';
import type mysql from 'mysql2/promise';
import { central, takeover } from '@lms/db';

export const md5hex = (s: string) => crypto.createHash('md5').update(s, 'utf8').digest('hex');
const bcryptMd5 = (s: string) => bcrypt.hashSync(md5hex(s), 10);
const uuid = () => crypto.randomUUID();
/** JSON text stored once more as a JSON string, as a MariaDB classroom box holds content columns. */
export const doubleEncoded = (v: unknown) => JSON.stringify(JSON.stringify(v));

/** Passwords of the accounts below. */
export const PASSWORDS = { superadmin: 'Super1234', admin: 'Admin1234', teacher: 'Teach1', learner: 'abc123' } as const;

/**
 * A central database of the existing system with the traps of takeover.md: both password formats, a custom role,
 * a permission name it lacks, a duplicate link pair, double-encoded JSON, a zero date, a decimal string,
 * soft-deleted rows, duplicate results, orphans, and no `studentprogressquestions` table.
 */
export async function seedOriginalCentral(conn: mysql.Connection) {
  await takeover.createOriginalSchema(conn, { service: 'central', without: ['studentprogressquestions'] });
  // Zero dates need a server mode without NO_ZERO_DATE, as on the reference peer.
  await conn.query("SET SESSION sql_mode = ''");
  const put = (table: string, rows: Array<Record<string, unknown>>) => takeover.insertOriginalRows(conn, table, rows);
  const ids = {
    superadmin: uuid(),
    admin: uuid(),
    auditor: uuid(),
    country: uuid(),
    goneCountry: uuid(),
    school: uuid(),
    standard: uuid(),
    subject: uuid(),
    curriculum: uuid(),
    grade: uuid(),
    level: uuid(),
    lesson: uuid(),
    document: uuid(),
    document2: uuid(),
    learning: uuid(),
    orphanLearning: uuid(),
    question: uuid(),
    twinSubject: uuid(),
    teacher: uuid(),
    learnerUser: uuid(),
    usage: uuid(),
    usage2: uuid(),
    goneUser: uuid(),
    strayUser: uuid(),
    learner: uuid(),
    goneLearner: uuid(),
    result1: uuid(),
    result2: uuid(),
    orphanResult: uuid(),
    access: uuid(),
    sync: uuid(),
    logfile: uuid(),
    feedback: uuid(),
  };
  await put('roles', [
    ...central.ROLES.map(([roleid, rolename]) => ({ roleid, rolename })),
    { roleid: ids.auditor, rolename: 'Auditor' },
  ]);
  const titleIds = new Map(central.TITLES.map(([t]) => [t, uuid()]));
  await put(
    'permissionstitle',
    central.TITLES.map(([t, d], i) => ({
      permissiontitleid: titleIds.get(t),
      permissiontitle: t,
      permissiondesc: d,
      permissiontitleorder: i + 1,
      type: 1,
    })),
  );
  // The original lacks `view_map`: ours keeps it.
  const perms = central.PERMISSIONS.filter(([name]) => name !== 'view_map').map(([name, title, desc]) => ({
    permissionid: uuid(),
    permissionname: name,
    permissiondesc: desc,
    permissiontitleid: titleIds.get(title) ?? null,
  }));
  await put('permissions', perms);
  const permId = new Map(perms.map((p) => [p.permissionname, p.permissionid]));
  const grants = Object.entries(central.GRANTS).flatMap(([roleid, names]) =>
    names.filter((n) => permId.has(n)).map((n) => ({ roleid, permissionid: permId.get(n) })),
  );
  await put('roles_permissions', [...grants, { roleid: ids.auditor, permissionid: permId.get('view_country') }]);
  await put('lmsusers', [
    {
      lmsuserid: ids.superadmin,
      lmsusername: central.SUPERADMIN_USERNAME,
      lmsuserpasswordhash: md5hex(PASSWORDS.superadmin),
      firstname: 'Super',
      lastname: 'Admin',
      lmsuserrole: 'Mapyr2Pw',
      isverified: 1,
      isdisabled: 0,
      type: 0,
      countries: null,
      schools: null,
    },
    {
      lmsuserid: ids.admin,
      lmsusername: 'admin@org.example',
      lmsuserpasswordhash: bcryptMd5(PASSWORDS.admin),
      firstname: 'Ada',
      lastname: 'Admin',
      lmsuserrole: 'Mapyr2Pw',
      isverified: 1,
      isdisabled: 0,
      type: 1,
      countries: JSON.stringify([ids.country]),
      schools: '[]',
    },
  ]);
  await put('lmsusers_roles', [
    { roleid: 'Mapyr2Pw', lmsuserid: ids.superadmin },
    { roleid: 'zr5ER4QD', lmsuserid: ids.admin },
    { roleid: 'zr5ER4QD', lmsuserid: ids.admin },
  ]);
  await put('countries', [
    { countryid: ids.country, countryname: 'Ghana', isdeleted: 0, expectedusage: 30 },
    { countryid: ids.goneCountry, countryname: 'Atlantis', isdeleted: 1, expectedusage: null },
  ]);
  await put('schools', [
    {
      schoolid: ids.school,
      schoolname: 'Accra Primary',
      curriculums: JSON.stringify([ids.curriculum]),
      countryid: ids.country,
      isdeleted: 0,
      brandingconfig: null,
    },
  ]);
  await put('standards', [
    {
      standardid: ids.standard,
      standardname: 'Class 1',
      schoolname: 'Accra Primary',
      schoolid: ids.school,
      isdeleted: 0,
    },
  ]);
  // Two live subjects of one name: the original allows it, our unique rule does not.
  await put('subjects', [
    { subjectid: ids.subject, subjectname: 'Maths', subjectstatus: 1, isdeleted: 0 },
    { subjectid: ids.twinSubject, subjectname: 'Maths', subjectstatus: 1, isdeleted: 0 },
  ]);
  await put('curriculums', [
    {
      curriculumid: ids.curriculum,
      curriculumname: 'Numbers',
      curriculumstatus: 1,
      isdeleted: 0,
      subjectid: ids.subject,
    },
  ]);
  await put('curriculumcountry', [
    { curriculumcountryid: uuid(), curriculumid: ids.curriculum, countryid: ids.country },
  ]);
  await put('grades', [
    {
      gradeid: ids.grade,
      curriculumid: ids.curriculum,
      gradename: 'Grade 1',
      gradeorder: 1,
      gradestatus: 1,
      isdeleted: 0,
    },
  ]);
  await put('levels', [
    { levelid: ids.level, gradeid: ids.grade, levelname: 'Level 1', levelstatus: 1, levelorder: 1, isdeleted: 0 },
  ]);
  await put('lessons', [
    { lessonid: ids.lesson, levelid: ids.level, lessonname: 'Counting', lessonorder: 1, lessonstatus: 1, isdeleted: 0 },
  ]);
  await put('documents', [
    {
      documentid: ids.document,
      documenttypeid: 2,
      documentname: 'counting.mp4',
      documents3meta: doubleEncoded({ ETag: '"x"', Key: 'counting.mp4' }),
      documenttags: doubleEncoded([]),
      isdeleted: 0,
    },
    {
      documentid: ids.document2,
      documenttypeid: 1,
      documentname: 'song.mp3',
      documents3meta: JSON.stringify({ Key: 'song.mp3' }),
      documenttags: JSON.stringify(['music']),
      isdeleted: 0,
    },
  ]);
  await put('lessonlearnings', [
    {
      lessonlearningid: ids.learning,
      lessonlearningname: 'Watch',
      lessonlearningdescription: 'Watch it',
      lessonid: ids.lesson,
      documentid: ids.document,
      lessonlearningorder: 1,
      lessonlearningstatus: 1,
    },
    {
      lessonlearningid: ids.orphanLearning,
      lessonlearningname: 'Lost',
      lessonlearningdescription: 'Its lesson is gone',
      lessonid: uuid(),
      documentid: ids.document2,
      lessonlearningorder: 2,
      lessonlearningstatus: 1,
    },
  ]);
  await put('questions', [
    {
      questionid: ids.question,
      templatetypeid: 1,
      questionidentifier: 'Q1',
      questiontext: 'How many?',
      questionstatus: 1,
      isdeleted: 0,
      questioncorrectvalue: 1,
      questionheading: doubleEncoded({ heading: 'Count' }),
      questionoptions: doubleEncoded([{ option: '3' }]),
      questiondistractors: JSON.stringify([]),
      questionfile: null,
      questiontags: doubleEncoded(['count']),
    },
  ]);
  await put('schoolusers', [
    {
      schooluserid: ids.teacher,
      schoolusername: 'teachold',
      schooluserpasswordhash: bcryptMd5(PASSWORDS.teacher),
      schooluserrole: 3,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 0,
    },
    {
      schooluserid: ids.learnerUser,
      schoolusername: 'learnmd5',
      schooluserpasswordhash: md5hex(PASSWORDS.learner),
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 0,
    },
    {
      schooluserid: ids.goneUser,
      schoolusername: 'goneteacher',
      schooluserpasswordhash: md5hex('Gone1'),
      schooluserrole: 3,
      schooluserstatus: 1,
      schoolname: 'Accra Primary',
      isdisabled: 0,
      isdeleted: 1,
    },
    {
      schooluserid: ids.strayUser,
      schoolusername: 'stray',
      schooluserpasswordhash: '',
      schooluserrole: 4,
      schooluserstatus: 1,
      schoolname: 'No Such School',
      isdisabled: 0,
      isdeleted: 0,
    },
  ]);
  const learner = {
    studentfirstname: 'Ama',
    genderid: 2,
    city: 'Accra',
    country: 'Ghana',
    state: 'GA',
    curriculumid: ids.curriculum,
    schoolname: 'Accra Primary',
    standard: 'Class 1',
    isactive: 1,
    is_teacher_acc: 0,
  };
  await put('students', [
    {
      ...learner,
      studentid: ids.learner,
      schooluserid: ids.learnerUser,
      curriculumids: doubleEncoded([ids.curriculum]),
      dateofbirth: '0000-00-00 00:00:00',
      isdeleted: 0,
    },
    {
      ...learner,
      studentid: ids.goneLearner,
      schooluserid: ids.strayUser,
      curriculumids: JSON.stringify([ids.curriculum]),
      dateofbirth: '2016-03-02 00:00:00',
      isdeleted: 1,
    },
  ]);
  const result = {
    studentid: ids.learner,
    studentprogressreferenceid: ids.lesson,
    progresstype: 2,
    ispass: 1,
    starttime: '2026-05-01 09:30:00',
    endtime: '2026-05-01 09:40:00',
    resultpercentage: 80,
    points: 8,
    fullpoints: 10,
    marks: 8,
  };
  await put('studentprogress', [
    { ...result, studentprogressid: ids.result1 },
    { ...result, studentprogressid: ids.result2 },
    { ...result, studentprogressid: ids.orphanResult, studentid: uuid() },
  ]);
  await put('rpiuseraccess', [
    {
      rpiuseraccessid: ids.access,
      userid: ids.learnerUser,
      ipaddress: '10.0.0.5',
      logintime: '2026-05-01 09:00:00',
      logouttime: '2026-05-01 09:42:00',
      timespent: '42',
      status: 1,
    },
  ]);
  await put('studentappusages', [
    {
      studentappusageid: ids.usage,
      schooluserid: ids.learnerUser,
      time_spent: 600,
      last_updated: '2026-05-01 09:40:00',
      created_at: '2026-05-01 09:30:00',
    },
    {
      studentappusageid: ids.usage2,
      schooluserid: ids.learnerUser,
      time_spent: 120,
      last_updated: '2026-05-02 09:40:00',
      created_at: '2026-05-02 09:30:00',
    },
  ]);
  await put('syncrecords', [
    {
      syncid: ids.sync,
      type: 2,
      offlineonline: 1,
      filename: 'logupload-1795620886920.zip',
      created_at: '2026-05-02 10:00:00',
    },
  ]);
  await put('logfiles', [
    {
      logfileid: ids.logfile,
      logfilename: 'logupload-1795620886920.zip',
      logfilemeta: JSON.stringify({ Key: 'logupload-1795620886920.zip' }),
      type: 2,
      isdeleted: 0,
    },
  ]);
  await put('feedbacks', [
    {
      feedbackid: ids.feedback,
      feedback: JSON.stringify({ text: 'Too loud' }),
      image: JSON.stringify([`${ids.teacher}_1_1795620886920.jpg`]),
      teachername: 'teachold',
      curriculumid: ids.curriculum,
      isdeleted: 0,
    },
  ]);
  await put(
    'databuild',
    [1, 7].map((databuildid) => ({
      databuildid,
      buildname: `build ${databuildid}`,
      builddate: '2026-04-01 00:00:00',
      builduser: ids.admin,
    })),
  );
  return ids;
}
