import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_IDS, ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedDemo } from '../src/seed/demo';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// A new box gets its school's people from central's roster push alone: the learners and the teachers, so that
// a teacher signs in on the box (to export the learners' log) with the password central holds.

const SYNC_KEY = 'shared-sync-key-for-roster-teachers';
const school = encodeURIComponent(DEMO_IDS.schoolname);

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

const teacherLogin = (password = 'demo') =>
  request(classroomUrl).post('/auth/login').send({ studentusername: 'demo.teacher', studentpassword: password });

beforeAll(async () => {
  classroom = await makeClassroomApp({ SERVER_SYNC_KEY: SYNC_KEY, JWT_SECRET: 'classroom-jwt-for-roster' });
  classroomUrl = await listen(classroom.app);
  central = await makeApp({ SERVER_SYNC_KEY: SYNC_KEY, RPI_CLOUD: classroomUrl, JWT_SECRET: 'central-jwt-roster' });
  await seedDemo(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'admin@example.org', roleids: [ROLE_IDS.admin] });
  admin = (await staffLogin(central.app, 'admin@example.org')).accessToken;
  const content = await request(central.app).post('/sync/cloud').set('Authorization', `Bearer ${admin}`);
  expect(content.status, JSON.stringify(content.body)).toBe(200);
}, 60_000);

afterAll(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  await central?.tdb.dispose();
  await classroom?.tdb.dispose();
});

describe('the roster push (POST /sync/cloud/:schoolname/students) carries the teachers too', () => {
  it('after it the school\'s teacher signs in on the box with the password central holds', async () => {
    expect((await teacherLogin()).status).toBe(400);
    const res = await request(central.app)
      .post(`/sync/cloud/${school}/students`)
      .set('Authorization', `Bearer ${admin}`);
    expect([res.status, res.body]).toEqual([200, { error: false, data: true }]);
    const row = await classroom.tdb.db('schoolusers').where({ schoolusername: 'demo.teacher' }).first();
    expect(row).toMatchObject({ schooluserrole: 3, schoolname: DEMO_IDS.schoolname });
    const login = await teacherLogin();
    expect(login.status).toBe(200);
    expect(login.body.data.accessToken).toEqual(expect.any(String));
    expect((await teacherLogin('wrong')).status).toBe(400);
    // The teacher reaches what the box's teacher pages read.
    const summary = await request(classroomUrl)
      .get('/export/log/summary')
      .set('Authorization', `Bearer ${login.body.data.accessToken}`);
    expect(summary.status).toBe(200);
  });

  it('a teacher deactivated on central is refused on the box after the next push', async () => {
    const db = central.tdb.db;
    await db('schoolusers').where({ schoolusername: 'demo.teacher' }).update({ schooluserstatus: false });
    try {
      const res = await request(central.app)
        .post(`/sync/cloud/${school}/students`)
        .set('Authorization', `Bearer ${admin}`);
      expect(res.status).toBe(200);
      expect((await teacherLogin()).status).toBe(400);
    } finally {
      await db('schoolusers').where({ schoolusername: 'demo.teacher' }).update({ schooluserstatus: true });
    }
    await request(central.app).post(`/sync/cloud/${school}/students`).set('Authorization', `Bearer ${admin}`);
    expect((await teacherLogin()).status).toBe(200);
  });

});
