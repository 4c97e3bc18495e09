import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_PROTOCOL, boxAuthorization, newBoxSecret } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { callers, seedWorld, type Who, type World } from './people-fixtures';
import { bucketOf } from '../src/areas/fleet/releases';

// Box releases in stages: a superadmin publishes a release (its signed repository and key), offers it to
// chosen boxes, then a share of the fleet, then all; exactly the boxes of the stage are offered it; a box
// that rolls back pauses the release for everyone; a withdrawn release is offered to no one again.

let t: TestApp;
let w: World;
let as: Record<Who, string>;
const boxes: Array<{ boxid: string; auth: string }> = [];
const FPR = '0123456789ABCDEF0123456789ABCDEF01234567';

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
  for (let i = 0; i < 40; i += 1) {
    const school = i % 2 ? w.schoolB.schoolid : w.schoolA.schoolid;
    const reg = await request(t.app).post('/fleet/boxes').set('Authorization', as.superadmin)
      .send({ schoolid: school, name: `Box ${i}` });
    const secret = newBoxSecret();
    const res = await request(t.app).post('/fleet/enrol').set('Authorization', `Enrol ${reg.body.data.enrolmentcode}`)
      .send({ secret, version: '1.4.0', protocol: FLEET_PROTOCOL });
    expect(res.status).toBe(200);
    boxes.push({ boxid: res.body.data.boxid, auth: boxAuthorization(res.body.data.boxid, secret) });
  }
}, 120_000);
afterAll(async () => {
  await t.tdb.dispose();
});

const api = () => request(t.app);
const offered = async (auth: string) => {
  const res = await api().get('/fleet/box/release').set('Authorization', auth);
  expect(res.status).toBe(200);
  return res.body.data.release as { releaseid: string; version: string } | null;
};
const offeredTo = async (version: string) => {
  const out: string[] = [];
  for (const b of boxes) if ((await offered(b.auth))?.version === version) out.push(b.boxid);
  return out;
};

describe('box releases', () => {
  let releaseid = '';

  it('only a superadmin publishes; the body is checked; a new release is offered to no box', async () => {
    const body = { version: '1.5.0', repourl: 'https://apt.example.org/lms', keyfingerprint: FPR.toLowerCase() };
    for (const who of ['admin', 'scopedSchool', 'teacher', 'schoolteacher'] as const) {
      expect((await api().post('/fleet/releases').set('Authorization', as[who]).send(body)).status, who).toBe(403);
      expect((await api().get('/fleet/releases').set('Authorization', as[who])).status, who).toBe(403);
    }
    expect([401, 403]).toContain((await api().post('/fleet/releases').set('Authorization', as.apikey).send(body))
      .status);
    expect((await api().post('/fleet/releases').set('Authorization', boxes[0].auth).send(body)).status).toBe(401);
    expect((await api().post('/fleet/releases').send(body)).status).toBe(401);
    const bad = await api().post('/fleet/releases').set('Authorization', as.superadmin)
      .send({ ...body, repourl: 'file:///etc' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: true, data: false });
    expect((await api().post('/fleet/releases').set('Authorization', as.superadmin)
      .send({ ...body, keyfingerprint: 'abc' })).status).toBe(400);
    expect((await api().post('/fleet/releases').set('Authorization', as.superadmin)
      .send({ ...body, extra: 1 })).status).toBe(400);
    expect(Number((await t.tdb.db('boxreleases').count({ n: '*' }).first())?.n)).toBe(0);

    const res = await api().post('/fleet/releases').set('Authorization', as.superadmin).send(body);
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ version: '1.5.0', state: 'staged', keyfingerprint: FPR,
      stage: { boxids: [], percent: 0, all: false } });
    releaseid = res.body.data.releaseid;
    expect((await api().post('/fleet/releases').set('Authorization', as.superadmin).send(body)).status).toBe(409);
    expect(await offeredTo('1.5.0')).toEqual([]);
  }, 120_000);

  it('reaches exactly the chosen boxes first, then a stable share, then all', async () => {
    const chosen = [boxes[3].boxid, boxes[7].boxid];
    const st = await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin)
      .send({ boxids: chosen });
    expect(st.status).toBe(200);
    expect(st.body.data).toMatchObject({ state: 'rolling', boxes: { instage: 2 } });
    expect((await offeredTo('1.5.0')).sort()).toEqual([...chosen].sort());

    const share = await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin)
      .send({ percent: 30 });
    expect(share.status).toBe(200);
    const expected = boxes.filter((b) => chosen.includes(b.boxid) || bucketOf(releaseid, b.boxid) < 30)
      .map((b) => b.boxid).sort();
    const at30 = (await offeredTo('1.5.0')).sort();
    expect(at30).toEqual(expected);
    expect(at30.length).toBeGreaterThan(2);
    expect(at30.length).toBeLessThan(boxes.length);
    // A stage never narrows: a lower percentage keeps the boxes offered.
    await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin).send({ percent: 10 });
    expect((await offeredTo('1.5.0')).sort()).toEqual(at30);
    expect((await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin)
      .send({ boxids: ['00000000-0000-4000-8000-000000000000'] })).status).toBe(400);
    expect((await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin)
      .send({})).status).toBe(400);
  }, 120_000);

  it('a box that rolls back pauses the release for every box and says why', async () => {
    const rolled = boxes[3];
    const rep = await api().post('/fleet/box/release/report').set('Authorization', rolled.auth)
      .send({ releaseid, outcome: 'rolledback', fromversion: '1.4.0', message: 'health check failed after 300 s' });
    expect(rep.status).toBe(200);
    expect(rep.body.data).toEqual({ recorded: true, paused: true });
    expect(await offeredTo('1.5.0')).toEqual([]);
    const r = await api().get(`/fleet/releases/${releaseid}`).set('Authorization', as.superadmin);
    expect(r.body.data.state).toBe('paused');
    expect(r.body.data.pausedreason).toContain('Box 3');
    expect(r.body.data.pausedreason).toContain('health check failed');
    expect(r.body.data.boxes).toMatchObject({ rolledback: 1, failed: 0 });
    const box = await api().get(`/fleet/boxes/${rolled.boxid}`).set('Authorization', as.superadmin);
    expect(box.body.data.lasterror).toContain('1.5.0 was rolled back');

    // Resumed, the release goes on, but never to the box that rolled it back.
    expect((await api().post(`/fleet/releases/${releaseid}/resume`).set('Authorization', as.superadmin)).status)
      .toBe(200);
    const again = await offeredTo('1.5.0');
    expect(again).not.toContain(rolled.boxid);
    expect(again).toContain(boxes[7].boxid);
    const ok = await api().post('/fleet/box/release/report').set('Authorization', boxes[7].auth)
      .send({ releaseid, outcome: 'installed', fromversion: '1.4.0' });
    expect(ok.body.data).toEqual({ recorded: true, paused: false });
  }, 120_000);

  it('withdrawn, a release is offered to no box, and cannot be staged again', async () => {
    await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin).send({ all: true });
    expect((await offeredTo('1.5.0')).length).toBe(boxes.length - 1);
    expect((await api().post(`/fleet/releases/${releaseid}/withdraw`).set('Authorization', as.superadmin)).status)
      .toBe(200);
    expect(await offeredTo('1.5.0')).toEqual([]);
    expect((await api().post(`/fleet/releases/${releaseid}/stage`).set('Authorization', as.superadmin)
      .send({ all: true })).status).toBe(409);
    expect((await api().post(`/fleet/releases/${releaseid}/resume`).set('Authorization', as.superadmin)).status)
      .toBe(409);
    const list = await api().get('/fleet/releases').set('Authorization', as.superadmin);
    expect(list.body.data.map((x: { state: string }) => x.state)).toEqual(['withdrawn']);
  }, 120_000);

  it('a box reports only on a release that exists; staff tokens cannot use the box routes', async () => {
    expect((await api().post('/fleet/box/release/report').set('Authorization', boxes[0].auth)
      .send({ releaseid: '00000000-0000-4000-8000-000000000000', outcome: 'failed' })).status).toBe(404);
    expect((await api().post('/fleet/box/release/report').set('Authorization', boxes[0].auth)
      .send({ releaseid, outcome: 'exploded' })).status).toBe(400);
    expect((await api().get('/fleet/box/release').set('Authorization', as.superadmin)).status).toBe(401);
    expect((await api().post('/fleet/box/release/report').set('Authorization', boxes[0].auth)
      .send({ releaseid, outcome: 'failed', message: 'x'.repeat(5000) })).status).toBe(413);
  }, 120_000);
});
