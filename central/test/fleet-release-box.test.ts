import { spawnSync } from 'node:child_process';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, repoRoot, seedDemoContent } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { enrolledBox, type EnrolledBox } from './fleet-fixtures';
import { readOffer, recordOutcome } from '../../classroom/src/fleet/release';

// A staged release seen from the box: its sync stores the release central's contact answer offers it, the
// updater's outcome waits on the box until a sync delivers it, and a rollback reported that way pauses the
// rollout at central and takes the offer off the box.

let central: TestApp;
let superadmin: string;
let one: EnrolledBox;
let two: EnrolledBox;
let releaseid = '';
const FPR = 'AAAABBBBCCCCDDDDEEEEFFFF0000111122223333';

beforeAll(async () => {
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await createStaff(central.tdb.db, { lmsusername: 'release-box@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'release-box@e2e.test')).accessToken}`;
  await seedDemoContent(central.tdb.db);
  one = await enrolledBox(central, superadmin, DEMO.schoolid, 'First');
  two = await enrolledBox(central, superadmin, DEMO.schoolid, 'Second');
}, 120_000);
afterAll(async () => {
  await one?.close();
  await two?.close();
  await central?.tdb.dispose();
});

const api = () => request(central.app);

describe('a release on the box', () => {
  it('a box is offered nothing until the release is staged for it; then its sync stores the offer', async () => {
    await one.agent.syncNow();
    expect(await readOffer(one.box.tdb.db)).toBeUndefined();
    const res = await api().post('/fleet/releases').set('Authorization', superadmin)
      .send({ version: '1.5.0', repourl: 'https://apt.example.org/lms', keyfingerprint: FPR });
    releaseid = res.body.data.releaseid;
    await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', superadmin)
      .send({ boxids: [one.boxid] });
    await one.agent.syncNow();
    await two.agent.syncNow();
    expect(await readOffer(one.box.tdb.db)).toEqual({ releaseid, version: '1.5.0',
      repourl: 'https://apt.example.org/lms', keyfingerprint: FPR });
    expect(await readOffer(two.box.tdb.db)).toBeUndefined();
  }, 120_000);

  it('the CLI prints the offer for the updater', () => {
    const cli = spawnSync(process.execPath, [path.join(repoRoot, 'classroom/dist/cli.js'), 'release-offer'], {
      env: { ...process.env, NODE_ENV: 'test', DATABASE_URL: one.box.tdb.url }, encoding: 'utf8' });
    expect(cli.status, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout.trim())).toMatchObject({ releaseid, version: '1.5.0', keyfingerprint: FPR });
  }, 60_000);

  it('a rollback waits on the box until a sync delivers it; central pauses the release; the offer goes', async () => {
    await recordOutcome(one.box.tdb.db, { releaseid, outcome: 'rolledback', fromversion: '1.4.0',
      message: 'the server did not answer its health check within 300 s' });
    const waiting = await one.box.tdb.db('fleetreleasereports').where({ releaseid }).first();
    expect(waiting.sentat).toBeNull();
    expect((await api().get(`/fleet/releases/${releaseid}`).set('Authorization', superadmin)).body.data.state)
      .toBe('rolling');
    await one.agent.syncNow();
    const r = (await api().get(`/fleet/releases/${releaseid}`).set('Authorization', superadmin)).body.data;
    expect(r.state).toBe('paused');
    expect(r.pausedreason).toContain('First');
    expect(r.reports).toEqual([expect.objectContaining({ boxid: one.boxid, outcome: 'rolledback',
      fromversion: '1.4.0' })]);
    expect((await one.box.tdb.db('fleetreleasereports').where({ releaseid }).first()).sentat).not.toBeNull();
    // The next contact carries no offer: the box drops it. The report is sent once.
    await one.agent.syncNow();
    expect(await readOffer(one.box.tdb.db)).toBeUndefined();
    expect(Number((await central.tdb.db('boxreleasereports').count({ n: '*' }).first())?.n)).toBe(1);
  }, 120_000);
});
