import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { expect } from 'vitest';
import { createLogger, newBoxSecret } from '@lms/shared';
import type { TestApp } from './helpers';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { enrol } from '../../classroom/src/fleet/client';
import { saveIdentity } from '../../classroom/src/fleet/identity';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';

/** A real classroom server enrolled at a listening central, with its agent (runs only when asked). */
export interface EnrolledBox {
  box: ClassroomTestApp;
  agent: SyncAgent;
  boxid: string;
  centralUrl: string;
  close(): Promise<void>;
}

export async function enrolledBox(central: TestApp, staff: string, schoolid: string, name = 'Room 1'):
  Promise<EnrolledBox> {
  const server = http.createServer(central.app);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const centralUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const reg = await request(central.app).post('/fleet/boxes').set('Authorization', staff).send({ schoolid, name });
  expect(reg.status).toBe(201);
  const secret = newBoxSecret();
  const answer = await enrol(centralUrl, reg.body.data.enrolmentcode as string, { secret, version: '1.0.0' },
    { timeoutMs: 30_000 });
  const box = await makeClassroomApp();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-box-'));
  await saveIdentity(box.tdb.db, { centralurl: centralUrl, boxid: answer.boxid, schoolid: answer.schoolid, secret,
    enrolledat: answer.centraltime });
  const agent = startSyncAgent(box.tdb.db, { intervalMs: 60_000, pieceRows: 50, requestTimeoutMs: 30_000,
    minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir }, createLogger({ name: 'test', level: 'silent' }),
  { start: false });
  return {
    box, agent, boxid: answer.boxid, centralUrl,
    close: async () => {
      agent.stop();
      await new Promise((r) => server.close(r));
      await box.tdb.dispose();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
