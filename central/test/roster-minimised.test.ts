import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BOX_WITHHELD_STUDENT_COLUMNS, DEMO_IDS, ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedDemo } from '../src/seed/demo';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// The roster a box receives carries what the classroom server and the learner app use, and nothing else:
// parents' names, birth date, contact and the disability answers stay on central.

const SYNC_KEY = 'shared-sync-key-for-roster-minimised';
const school = encodeURIComponent(DEMO_IDS.schoolname);
const learner = DEMO_IDS.learners[0];
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

let central: TestApp;
let classroom: ClassroomTestApp;
let classroomUrl: string;
let admin: string;
const servers: http.Server[] = [];

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  classroom = await makeClassroomApp({ SERVER_SYNC_KEY: SYNC_KEY, JWT_SECRET: 'classroom-jwt-for-minimised' });
  classroomUrl = await listen(classroom.app);
  central = await makeApp({ SERVER_SYNC_KEY: SYNC_KEY, RPI_CLOUD: classroomUrl, JWT_SECRET: 'central-jwt-minimised' });
  await seedDemo(central.tdb.db);
  await central.tdb.db('students').update(PERSONAL);
  await createStaff(central.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  admin = (await staffLogin(central.app, 'admin@example.org')).accessToken;
  const content = await request(central.app).post('/sync/cloud').set('Authorization', `Bearer ${admin}`);
  expect(content.status, JSON.stringify(content.body)).toBe(200);
}, 120_000);

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await central?.tdb.dispose();
  await classroom?.tdb.dispose();
});

describe('the roster pushed to a box (POST /sync/cloud/:schoolname/students)', () => {
  it('leaves parents\' names, birth date, contact and disability answers on central', async () => {
    const res = await request(central.app)
      .post(`/sync/cloud/${school}/students`)
      .set('Authorization', `Bearer ${admin}`);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);

    const onBox = (await classroom.tdb.db('students').select()) as Array<Record<string, unknown>>;
    expect(onBox.length).toBeGreaterThan(0);
    for (const row of onBox) {
      for (const c of BOX_WITHHELD_STUDENT_COLUMNS) expect(row[c], `${String(row.studentid)} ${c}`).toBeNull();
    }
    // What the box uses arrived.
    expect(onBox.find((r) => r.studentid === learner.studentid)).toMatchObject({
      studentfirstname: learner.studentfirstname,
      studentlastname: learner.studentlastname,
      schoolname: DEMO_IDS.schoolname,
    });
    // Central keeps its own copy untouched.
    const kept = await central.tdb.db('students').where({ studentid: learner.studentid }).first();
    expect(kept).toMatchObject({ mothername: PERSONAL.mothername, contact: PERSONAL.contact, wg_seeing: 2 });
  }, 120_000);

  it('the learner still signs in on the box and the learner app\'s routes answer', async () => {
    const login = await request(classroomUrl)
      .post('/auth/login')
      .send({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password });
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    // The token's claims, which the learner app reads, keep their keys; the withheld ones are empty.
    const claims = JSON.parse(Buffer.from(String(login.body.data.accessToken).split('.')[1], 'base64url').toString());
    expect(claims).toMatchObject({
      studentid: learner.studentid,
      studentfirstname: learner.studentfirstname,
      mothername: null,
      fathername: null,
      contact: null,
      dateofbirth: null,
    });
    const auth = `Bearer ${login.body.data.accessToken}`;
    expect((await request(classroomUrl).get('/curriculum').set('Authorization', auth)).status).toBe(200);
    const subjects = await request(classroomUrl).get('/curriculum/subjects').set('Authorization', auth);
    expect(subjects.status).toBe(200);
  }, 120_000);
});
