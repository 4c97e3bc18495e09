import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@lms/db';
import { ROLE_IDS, sha256Hex } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedWorld, type World } from './people-fixtures';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';

// Both real servers on loopback ports, and the box's own command line (the built classroom CLI, as
// `lms-classroom` runs it): an operator registers a box at central, the box enrols with the code, reports in,
// is revoked, and is told so in words on its next contact.

const CLI = path.join(repoRoot, 'classroom', 'dist', 'cli.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-e2e-fleet-'));
const servers: http.Server[] = [];
let central: TestApp;
let classroom: ClassroomTestApp;
let centralUrl: string;
let classroomUrl: string;
let superadmin: string;
let w: World;

async function listen(app: http.RequestListener): Promise<string> {
  const server = http.createServer(app);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The box's CLI as a child process (asynchronous: central answers it from this process). */
function box(args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, NODE_ENV: 'test', DATA_DIR: tmp, DATABASE_URL: classroom.tdb.url,
        FLEET_REQUEST_TIMEOUT_SECONDS: '10' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

beforeAll(async () => {
  central = await makeApp();
  w = await seedWorld(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'fleet-operator@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'fleet-operator@e2e.test')).accessToken}`;
  centralUrl = await listen(central.app);
  classroom = await makeClassroomApp();
  classroomUrl = await listen(classroom.app);
});

afterAll(async () => {
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await classroom?.tdb.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe('a box enrols and reports with its own command line', () => {
  it('enrols with the code, reports in, and is refused with words after revoking', async () => {
    expect((await request(classroomUrl).get('/version')).status).toBe(200);
    const before = await box(['fleet-status']);
    expect(before.code).toBe(1);
    expect(before.out).toMatch(/not enrolled/);

    const reg = await request(centralUrl).post('/fleet/boxes').set('Authorization', superadmin)
      .send({ schoolid: w.schoolA.schoolid, name: 'Room 2' });
    expect(reg.status).toBe(201);
    const boxid = reg.body.data.box.boxid as string;

    const enrolled = await box(['enroll', '--central', `${centralUrl}/`, '--code', reg.body.data.enrolmentcode]);
    expect(enrolled.err).toBe('');
    expect(enrolled.code).toBe(0);
    expect(enrolled.out).toContain(boxid);
    expect(enrolled.out).toContain('Accra Primary');
    const identity = await classroom.tdb.db('fleetidentity').first();
    expect(identity).toMatchObject({ boxid, schoolid: w.schoolA.schoolid, centralurl: centralUrl });
    expect(enrolled.out).not.toContain(identity.secret);
    const atCentral = await central.tdb.db('boxes').where({ boxid }).first();
    expect(atCentral).toMatchObject({ state: 'enrolled', secrethash: sha256Hex(identity.secret) });

    // The code is used up: a second box cannot enrol with it.
    const twice = await box(['enroll', '--central', centralUrl, '--code', reg.body.data.enrolmentcode]);
    expect(twice.code).toBe(1);
    expect(twice.err).toMatch(/wrong, expired or already used/);
    expect((await classroom.tdb.db('fleetidentity').first()).secret).toBe(identity.secret);

    const contacted = await box(['fleet-status', '--contact']);
    expect(contacted.err).toBe('');
    expect(contacted.code).toBe(0);
    expect(contacted.out).toMatch(/clock skew\s+-?\d+ ms/);
    const seen = await request(centralUrl).get(`/fleet/boxes/${boxid}`).set('Authorization', superadmin);
    expect(seen.body.data.lastcontactat).not.toBeNull();
    expect(seen.body.data.version).toBe('1.0.0');
    expect(seen.body.data.freediskbytes).toBeGreaterThan(0);
    const status = await box(['fleet-status']);
    expect(status.out).toMatch(/last contact\s+\d{4}-\d\d-\d\dT/);

    await request(centralUrl).post(`/fleet/boxes/${boxid}/revoke`).set('Authorization', superadmin).expect(200);
    const refused = await box(['fleet-status', '--contact']);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/revoked at central; enrol it again/);
    const after = await box(['fleet-status']);
    expect(after.out).toMatch(/last error\s+This box was revoked/);

    // Plain http to another machine is refused before anything is sent.
    const plain = await box(['enroll', '--central', 'http://central.example.org', '--code', 'AAAAA-BBBBB']);
    expect(plain.code).toBe(2);
    expect(plain.err).toMatch(/plain http/);
  }, 60_000);
});
