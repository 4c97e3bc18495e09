import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, migrateLatest, type TestDatabase } from '@lms/db';
import { BOX_WITHHELD_STUDENT_COLUMNS, DEMO_IDS, streamToBuffer, writeStudentsZip } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';
import { demoStudentsPackage, seedDemo } from '../src/seed/demo';
import { hashPassword } from '../src/auth/passwords';
import { silentLogger } from './helpers';

// A box holds no learner data it never uses: a roster that carries parents' names, birth date, contact or
// disability answers is stored without them, and a box upgraded with such rows has them blanked.

const SYNC_KEY = 'sk_minimise_0123456789';
const PERSONAL = {
  mothername: 'Mother Okafor',
  fathername: 'Father Okafor',
  contact: '+255700000001',
  dateofbirth: '2017-05-06T00:00:00.000Z',
  wg_seeing: 2,
  wg_hearing: 1,
  wg_walking: 3,
  wg_remembering: 1,
  wg_selfcare: 4,
  wg_communicating: 2,
  wg_source: 1,
  wg_collected_at: '2026-02-01T00:00:00.000Z',
};
const learner = DEMO_IDS.learners[0];
const BEFORE_MINIMISING = classroom.migrations.filter(([name]) => name < '0006_minimise_learners');

let tdb: TestDatabase;
let app: ReturnType<typeof createApp>;

async function withheldOnBox(): Promise<Array<Record<string, unknown>>> {
  return (await tdb.db('students').select(['studentid', ...BOX_WITHHELD_STUDENT_COLUMNS])) as Array<
    Record<string, unknown>
  >;
}

beforeAll(async () => {
  // The box as today's package leaves it: the personal fields filled in.
  tdb = await createTestDatabase({ kinds: classroom.kinds, migrations: BEFORE_MINIMISING });
  await seedDemo(tdb.db);
  await tdb.db('students').update(PERSONAL);
}, 120_000);

afterAll(async () => {
  await tdb?.dispose();
});

describe('a box keeps no learner data it does not use', () => {
  it('the upgrade blanks parents\' names, birth date, contact and disability answers already held', async () => {
    const held = await withheldOnBox();
    expect(held.length).toBeGreaterThan(0);
    expect(held.every((r) => r.mothername === PERSONAL.mothername && r.wg_selfcare === 4)).toBe(true);
    await migrateLatest(tdb.db, classroom.migrations);
    for (const row of await withheldOnBox())
      for (const c of BOX_WITHHELD_STUDENT_COLUMNS) expect(row[c], `${String(row.studentid)} ${c}`).toBeNull();
    // Names and the learner's place in the curriculum stay.
    expect(await tdb.db('students').where({ studentid: learner.studentid }).first()).toMatchObject({
      studentfirstname: learner.studentfirstname,
      studentlastname: learner.studentlastname,
      curriculumid: DEMO_IDS.curriculumid,
    });
  }, 120_000);

  it('a roster that carries them is stored without them, and the learner still signs in', async () => {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATABASE_URL: tdb.url,
      SERVER_SYNC_KEY: SYNC_KEY,
      JWT_SECRET: 'jwt_minimise_0123456789',
    });
    app = createApp(config, { db: tdb.db, logger: silentLogger });
    const pkg = demoStudentsPackage(await hashPassword(DEMO_IDS.password));
    const full = { studentusers: pkg.studentusers.map((u) => ({ ...u, student: { ...u.student, ...PERSONAL } })) };
    const zip = await streamToBuffer(writeStudentsZip(full as never));
    const res = await request(app)
      .put('/import/students')
      .set('Authorization', SYNC_KEY)
      .attach('importfile', zip, 'students.zip');
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    for (const row of await withheldOnBox())
      for (const c of BOX_WITHHELD_STUDENT_COLUMNS) expect(row[c], `${String(row.studentid)} ${c}`).toBeNull();

    const login = await request(app)
      .post('/auth/login')
      .send({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const auth = `Bearer ${login.body.data.accessToken}`;
    expect((await request(app).get('/curriculum').set('Authorization', auth)).status).toBe(200);
    expect((await request(app).get('/curriculum/subjects').set('Authorization', auth)).status).toBe(200);
  }, 120_000);
});
