import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyPassword } from '../src/auth/passwords';
import { makeApp, type TestApp } from './helpers';
import { callers, parseCsv, seedWorld, type Who, type World } from './people-fixtures';

// The spreadsheet round trip: 40 learners enrolled with names in Khmer, Thai, Arabic and Devanagari,
// downloaded as CSV, a set of cells changed, sent back as PUT /student/update. Every learner must then
// hold exactly what was intended, field by field, and the same file sent again must change nothing.

let t: TestApp;
let w: World;
let as: Record<Who, string>;

const FIRST = ['សុខា', 'สมชาย', 'مريم', 'प्रिया', 'ដារ៉ា', 'นภา', 'يوسف', 'अर्जुन'];
const LAST = ['ចាន់', 'ศรีสุข', 'الحسن', 'शर्मा'];

beforeAll(async () => {
  t = await makeApp({ RATE_LIMIT_MAX: '100000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
});
afterAll(async () => { await t.tdb.dispose(); });

const learner = (i: number) => ({
  studentfirstname: `${FIRST[i % FIRST.length]} ${i}`,
  studentlastname: LAST[i % LAST.length],
  mothername: i === 5 ? '=HYPERLINK("http://x","y")' : 'أمينة',
  fathername: i === 6 ? 'Line one\nline "two", three' : 'राम',
  contact: i % 2 ? `+855 12 345 ${String(i).padStart(3, '0')}` : `0${i}`,
  dateofbirth: `${String((i % 28) + 1).padStart(2, '0')}-0${(i % 9) + 1}-2016`,
  dateofjoin: '05-01-2026',
  genderid: String((i % 2) + 1),
  wg_seeing: '1',
  wg_hearing: i % 3 ? '1' : '',
  city: 'Phnom Penh',
  country: 'Cambodia',
  state: '-',
  schoolusername: `rt${i}`,
  schooluserpasswordhash: `pw${i}`,
});

const STUDENT_COLUMNS = [
  'studentfirstname',
  'studentlastname',
  'familyname',
  'mothername',
  'fathername',
  'contact',
  'dateofbirth',
  'genderid',
  'standard',
  'schooltype',
  'schoolname',
  'city',
  'country',
  'state',
  'dateofjoin',
  'curriculumid',
  'curriculumids',
  'isactive',
  'type',
  'is_teacher_acc',
  'wg_seeing',
  'wg_hearing',
  'wg_walking',
  'wg_remembering',
  'wg_selfcare',
  'wg_communicating',
  'wg_source',
  'wg_collected_at',
  'updated_at',
  'updated_by',
  'isdeleted',
] as const;

async function learners() {
  const rows = await t.tdb
    .db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .whereRaw("lower(u.schoolusername) like 'rt%'")
    .select(
      's.studentid',
      'u.schooluserid',
      'u.schoolusername',
      'u.schoolname as userschool',
      'u.schooluserpasswordhash',
      'u.updated_at as userupdated',
      ...STUDENT_COLUMNS.map((c) => `s.${c}`),
    );
  return new Map(rows.map((r: Record<string, unknown>) => [String(r.studentid), r]));
}

describe('the learner CSV round trip', () => {
  it('changes exactly what was edited, and nothing the second time', async () => {
    const enrol = async (from: number, standard: string) => {
      const res = await request(t.app)
        .post('/student/create?online=false')
        .set('Authorization', as.admin)
        .send({
          curriculumid: [w.curriculum1],
          schoolid: w.schoolA.schoolid,
          standard,
          students: Array.from({ length: 20 }, (_, k) => learner(from + k)),
        });
      expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    };
    await enrol(0, w.classA1);
    await enrol(20, w.classA2);
    const before = await learners();
    expect(before.size).toBe(40);

    const download = await request(t.app)
      .get(`/student/download-students?schoolname=${encodeURIComponent('Accra Primary')}`)
      .set('Authorization', as.admin);
    expect(download.status).toBe(200);
    // Formula-like cells are neutralised and a cell with a line break, quotes and a comma is quoted.
    expect(download.text).toContain(`,"'=HYPERLINK(""http://x"",""y"")",`);
    expect(download.text).toContain(",'+855 12 345 001,");
    expect(download.text).toContain('"Line one\nline ""two"", three"');
    expect(download.text).toContain(",'-,");
    const rows = parseCsv(download.text);
    expect(rows).toHaveLength(40);
    const byName = new Map(rows.map((r) => [r.schoolusername, r]));
    expect(byName.get('rt1')).toMatchObject({
      studentfirstname: 'สมชาย 1',
      curriculums: 'Reading',
      standard: 'Class 1',
      contact: "'+855 12 345 001",
      wg_hearing: '1',
      isactive: '1',
      schooluserpasswordhash: '',
    });
    expect(byName.get('rt3')?.wg_hearing).toBe('');

    // What a person does in the spreadsheet.
    const edit = (name: string, cells: Record<string, string>) => Object.assign(byName.get(name)!, cells);
    edit('rt0', { studentfirstname: 'សុភា', familyname: 'គីម' });
    edit('rt1', { standard: 'Class 2' });
    edit('rt2', { schooluserpasswordhash: 'newpw2' });
    edit('rt4', { wg_hearing: '3' });
    edit('rt7', { wg_seeing: '' });
    edit('rt8', { studentlastname: 'ใจดี', contact: '+66 81 234 5678' });
    edit('rt9', { dateofbirth: '1-2-2015' });
    edit('rt10', { curriculums: 'Reading/Numbers' });
    edit('rt11', { schoolusername: 'RT11new' });
    edit('rt12', { isactive: '0' });
    edit('rt13', { mothername: 'सीता', wg_walking: '4' });
    edit('rt21', { standard: 'class 1', schooltype: 'Primary' });
    const sent = rows.map((r) => ({ ...r }));

    const update = await request(t.app).put('/student/update').set('Authorization', as.admin).send({ students: sent });
    expect([update.status, update.body]).toEqual([200, { error: false, data: true }]);
    const after = await learners();
    const adminId = (await t.tdb.db('lmsusers').where('lmsusername', 'like', 'admin-%').first('lmsuserid')).lmsuserid;

    const id = (name: string) => [...before.values()].find((r) => r.schoolusername === name)!.studentid as string;
    const intended = new Map<string, Record<string, unknown>>([
      [id('rt0'), { studentfirstname: 'សុភា', familyname: 'គីម' }],
      [id('rt1'), { standard: w.classA2 }],
      [id('rt4'), { wg_hearing: 3, wg_source: 1 }],
      [id('rt8'), { studentlastname: 'ใจดี', contact: '+66 81 234 5678' }],
      [id('rt9'), { dateofbirth: '2015-02-01T00:00:00.000Z' }],
      [id('rt10'), { curriculumids: [w.curriculum1, w.curriculum2] }],
      [id('rt12'), { isactive: false }],
      [id('rt13'), { mothername: 'सीता', wg_walking: 4, wg_source: 1 }],
      [id('rt21'), { standard: w.classA1, schooltype: 'Primary' }],
    ]);
    const wgChanged = new Set([id('rt4'), id('rt13')]);
    for (const [studentid, old] of before) {
      const now = after.get(studentid)!;
      const changes = intended.get(studentid) ?? {};
      const expected: Record<string, unknown> = { ...old, ...changes };
      // Audit and provenance move only on the rows that changed.
      if (intended.has(studentid)) {
        expect(now.updated_by).toBe(adminId);
        expect(now.updated_at).not.toBe(old.updated_at);
        expected.updated_at = now.updated_at;
        expected.updated_by = adminId;
      }
      if (wgChanged.has(studentid)) {
        expect(now.wg_collected_at).not.toBe(old.wg_collected_at);
        expected.wg_collected_at = now.wg_collected_at;
      }
      if (old.schoolusername === 'rt11')
        Object.assign(expected, { schoolusername: 'RT11new', userupdated: now.userupdated });
      if (old.schoolusername === 'rt2')
        Object.assign(expected, { schooluserpasswordhash: now.schooluserpasswordhash, userupdated: now.userupdated });
      expect([old.schoolusername, now]).toEqual([old.schoolusername, expected]);
    }
    const rt2 = [...after.values()].find((r) => r.schoolusername === 'rt2')!;
    expect(await verifyPassword(String(rt2.schooluserpasswordhash), 'newpw2')).toBe(true);
    // A blank WG answer kept the stored one; an answer given where none was collected is stamped.
    expect(after.get(id('rt7'))!.wg_seeing).toBe(1);
    expect(after.get(id('rt4'))!.wg_collected_at).not.toBeNull();

    // The same file again changes nothing at all.
    const again = await request(t.app).put('/student/update').set('Authorization', as.admin).send({ students: sent });
    expect([again.status, again.body]).toEqual([200, { error: false, data: true }]);
    expect(await learners()).toEqual(after);

    // The next download reflects the edits (the inactive learner has left it).
    const next = parseCsv(
      (
        await request(t.app)
          .get(`/student/download-students?schoolname=${encodeURIComponent('Accra Primary')}`)
          .set('Authorization', as.admin)
      ).text,
    );
    expect(next).toHaveLength(39);
    const n = new Map(next.map((r) => [r.schoolusername, r]));
    expect(n.get('RT11new')).toMatchObject({ studentid: id('rt11') });
    expect(n.get('rt1')).toMatchObject({ standard: 'Class 2' });
    expect(n.get('rt9')).toMatchObject({ dateofbirth: '01-02-2015' });
    expect(n.get('rt10')).toMatchObject({ curriculums: 'Reading/Numbers' });
    expect(n.get('rt8')).toMatchObject({ contact: "'+66 81 234 5678" });
    expect(n.has('rt12')).toBe(false);
  }, 120_000);
});
