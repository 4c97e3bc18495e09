import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_PROTOCOL, boxAuthorization, newBoxSecret, sha256Hex } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { callers, seedWorld, snapshot, type Who, type World } from './people-fixtures';

// The fleet's boxes at central: registering a box for a school, the one-time code's exchange for the box's own
// credential, contacts, revoking and re-enrolling; who may see which box; and which credential opens what.

let t: TestApp;
let w: World;
let as: Record<Who, string>;

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
});
afterAll(async () => {
  await t.tdb.dispose();
});

const api = () => request(t.app);
const register = (who: string, schoolid: string, name = 'Library box') =>
  api().post('/fleet/boxes').set('Authorization', who).send({ schoolid, name });
const enrol = (code: string, secret = newBoxSecret(), extra: Record<string, unknown> = {}) =>
  api().post('/fleet/enrol').set('Authorization', `Enrol ${code}`)
    .send({ secret, version: '1.4.0', protocol: FLEET_PROTOCOL, ...extra });
const contact = (boxid: string, secret: string, body: Record<string, unknown> = {}) =>
  api().post('/fleet/box/contact').set('Authorization', boxAuthorization(boxid, secret))
    .send({ version: '1.4.1', protocol: FLEET_PROTOCOL, boxtime: new Date().toISOString(), ...body });

async function enrolledBox(who = as.superadmin, schoolid = w.schoolA.schoolid) {
  const reg = await register(who, schoolid);
  expect(reg.status).toBe(201);
  const secret = newBoxSecret();
  const res = await enrol(reg.body.data.enrolmentcode as string, secret);
  expect(res.status).toBe(200);
  return { boxid: reg.body.data.box.boxid as string, secret, code: reg.body.data.enrolmentcode as string };
}

describe('register, enrol, contact', () => {
  it('registers a box with a typeable one-time code kept only hashed, enrols it and records its contact', async () => {
    const reg = await register(as.superadmin, w.schoolA.schoolid, 'Room 4');
    expect(reg.status).toBe(201);
    const { box, enrolmentcode, expiresat } = reg.body.data;
    expect(enrolmentcode).toMatch(/^[A-HJKMNP-TV-Z2-9]{5}-[A-HJKMNP-TV-Z2-9]{5}$/);
    expect(Date.parse(expiresat) - Date.now()).toBeGreaterThan(23.9 * 3_600_000);
    expect(box).toMatchObject({ schoolid: w.schoolA.schoolid, schoolname: 'Accra Primary', name: 'Room 4',
      state: 'registered' });
    const row = await t.tdb.db('boxes').where({ boxid: box.boxid }).first();
    expect(row.enrolcodehash).toBe(sha256Hex(enrolmentcode.replace('-', '')));
    expect(JSON.stringify(row)).not.toContain(enrolmentcode.replace('-', ''));
    expect(JSON.stringify(reg.body)).not.toContain(row.enrolcodehash);

    const secret = newBoxSecret();
    // Typed in lower case with a space: the same code.
    const res = await enrol(enrolmentcode.toLowerCase().replace('-', ' '), secret);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ boxid: box.boxid, schoolid: w.schoolA.schoolid,
      schoolname: 'Accra Primary', protocol: FLEET_PROTOCOL });
    expect(Math.abs(Date.parse(res.body.data.centraltime) - Date.now())).toBeLessThan(60_000);
    const enrolled = await t.tdb.db('boxes').where({ boxid: box.boxid }).first();
    expect(enrolled).toMatchObject({ state: 'enrolled', secrethash: sha256Hex(secret), enrolcodehash: null,
      version: '1.4.0' });
    expect(JSON.stringify(enrolled)).not.toContain(secret);

    // A box whose clock is a year behind: the skew is central's time minus the box's.
    const boxtime = new Date(Date.now() - 365 * 86_400_000).toISOString();
    const c = await contact(box.boxid, secret, { boxtime, freediskbytes: 5e9 });
    expect(c.status).toBe(200);
    expect(c.body.data.clockskewms).toBeGreaterThan(364 * 86_400_000);
    const seen = await api().get(`/fleet/boxes/${box.boxid}`).set('Authorization', as.superadmin);
    expect(seen.status).toBe(200);
    expect(seen.body.data).toMatchObject({ state: 'enrolled', version: '1.4.1', freediskbytes: 5e9 });
    expect(seen.body.data.clockskewms).toBeGreaterThan(364 * 86_400_000);
    expect(seen.body.data.lastcontactat).not.toBeNull();
    expect(JSON.stringify(seen.body)).not.toMatch(/secrethash|enrolcodehash/);
  });

  it('uses a code once, refuses an expired one, and counts wrong codes under the sign-in limiter', async () => {
    const { code } = await enrolledBox();
    const again = await enrol(code);
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: true, errormessage: expect.stringMatching(/expired or already used/),
      data: false });

    const reg = await register(as.superadmin, w.schoolA.schoolid);
    const boxid = reg.body.data.box.boxid as string;
    await t.tdb.db('boxes').where({ boxid }).update({ enrolcodeexpiresat: new Date(Date.now() - 1000).toISOString() });
    const late = await enrol(reg.body.data.enrolmentcode as string);
    expect(late.status).toBe(401);
    expect(await t.tdb.db('boxes').where({ boxid }).first('state', 'secrethash'))
      .toEqual({ state: 'registered', secrethash: null });

    const limited = await makeApp({ LOGIN_RATE_LIMIT_MAX: '3' }, t.tdb);
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await request(limited.app).post('/fleet/enrol').set('Authorization', 'Enrol AAAAA-BBBBB')
        .send({ secret: newBoxSecret(), version: '1', protocol: FLEET_PROTOCOL });
      statuses.push(r.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });

  it('refuses a contact after revoking, with words a person can act on; re-enrolling replaces the credential',
    async () => {
      const { boxid, secret } = await enrolledBox();
      const revoked = await api().post(`/fleet/boxes/${boxid}/revoke`).set('Authorization', as.superadmin);
      expect(revoked.status).toBe(200);
      expect(revoked.body.data.state).toBe('revoked');
      const refused = await contact(boxid, secret);
      expect(refused.status).toBe(401);
      expect(refused.body.errormessage).toBe(
        'This box was revoked at central; enrol it again with a new code from the fleet page');

      const code = await api().post(`/fleet/boxes/${boxid}/code`).set('Authorization', as.superadmin);
      expect(code.status).toBe(200);
      const secret2 = newBoxSecret();
      expect((await enrol(code.body.data.enrolmentcode as string, secret2)).status).toBe(200);
      expect((await contact(boxid, secret2)).status).toBe(200);
      const old = await contact(boxid, secret);
      expect(old.status).toBe(401);
      expect(old.body.errormessage).toMatch(/not known at central/);
    });

  it('replaces a waiting code with a new one: the old code is refused', async () => {
    const reg = await register(as.superadmin, w.schoolA.schoolid);
    const boxid = reg.body.data.box.boxid as string;
    const second = await api().post(`/fleet/boxes/${boxid}/code`).set('Authorization', as.superadmin);
    expect(second.body.data.enrolmentcode).not.toBe(reg.body.data.enrolmentcode);
    expect((await enrol(reg.body.data.enrolmentcode as string)).status).toBe(401);
    expect((await enrol(second.body.data.enrolmentcode as string)).status).toBe(200);
  });
});

describe('scope: the boxes of the caller\'s schools', () => {
  it('lets an Admin narrowed to school A register, list, see and revoke its boxes only; B\'s answer 404',
    async () => {
      const b = await enrolledBox(as.superadmin, w.schoolB.schoolid);
      const a = await enrolledBox(as.scopedSchool, w.schoolA.schoolid);
      const before = await snapshot(t.tdb.db, ['boxes']);
      for (const [method, path] of [
        ['get', `/fleet/boxes/${b.boxid}`],
        ['post', `/fleet/boxes/${b.boxid}/code`],
        ['post', `/fleet/boxes/${b.boxid}/revoke`],
      ] as const) {
        for (const who of [as.scopedSchool, as.scopedCountry]) {
          const res = await api()[method](path).set('Authorization', who);
          expect(res.status, `${method} ${path}`).toBe(404);
          expect(res.body).toEqual({ error: true, errormessage: 'Box not found', data: false });
        }
      }
      const other = await register(as.scopedSchool, w.schoolB.schoolid);
      expect(other.status).toBe(400);
      expect(other.body.errormessage).toBe('Invalid school id');
      expect(await snapshot(t.tdb.db, ['boxes'])).toEqual(before);

      const list = await api().get('/fleet/boxes').query({ pagesize: 200 }).set('Authorization', as.scopedSchool);
      expect(list.status).toBe(200);
      const ids = (list.body.data.boxes as Array<{ boxid: string; schoolid: string }>).map((x) => x.boxid);
      expect(ids).toContain(a.boxid);
      expect(ids).not.toContain(b.boxid);
      expect(new Set(list.body.data.boxes.map((x: { schoolid: string }) => x.schoolid))).toEqual(
        new Set([w.schoolA.schoolid]));
      const all = await api().get('/fleet/boxes').query({ pagesize: 200 }).set('Authorization', as.superadmin);
      expect(all.body.data.boxes.map((x: { boxid: string }) => x.boxid)).toEqual(expect.arrayContaining(
        [a.boxid, b.boxid]));
      expect(all.body.data.total).toBeGreaterThanOrEqual(2);
      const page = await api().get('/fleet/boxes').query({ pagesize: 1, pageindex: 1 })
        .set('Authorization', as.superadmin);
      expect(page.body.data.boxes).toHaveLength(1);
      expect(page.body.data.boxes[0].boxid).toBe(all.body.data.boxes[1].boxid);

      const revoked = await api().post(`/fleet/boxes/${a.boxid}/revoke`).set('Authorization', as.scopedSchool);
      expect(revoked.status).toBe(200);
    });

  it('refuses staff without the school-management permission and school users', async () => {
    for (const who of [as.teacher, as.user, as.schoolteacher]) {
      expect((await api().get('/fleet/boxes').set('Authorization', who)).status).toBe(403);
      expect((await register(who, w.schoolA.schoolid)).status).toBe(403);
    }
    expect((await api().get('/fleet/boxes')).status).toBe(401);
    expect((await register(as.apikey, w.schoolA.schoolid)).status).toBe(401);
  });
});

describe('which credential opens what', () => {
  it('refuses a box credential on staff routes and the sync key\'s, and staff tokens on the box routes',
    async () => {
      const { boxid, secret } = await enrolledBox();
      const box = boxAuthorization(boxid, secret);
      for (const [method, path] of [
        ['get', '/fleet/boxes'],
        ['get', `/fleet/boxes/${boxid}`],
        ['post', `/fleet/boxes/${boxid}/code`],
        ['get', '/school/all'],
        ['get', `/school/${w.schoolA.schoolid}`],
        ['post', '/student'],
        ['get', '/sync/content'],
        ['post', '/sync/cloud'],
        ['post', '/teacher/create'],
        ['get', '/sync/report-data'],
      ] as const) {
        const res = await api()[method](path).set('Authorization', box).send({});
        expect([401, 403], `${method} ${path}`).toContain(res.status);
      }
      const before = await snapshot(t.tdb.db, ['boxes']);
      for (const who of [as.superadmin, as.scopedSchool, as.schoolteacher]) {
        const c = await api().post('/fleet/box/contact').set('Authorization', who)
          .send({ version: '1', protocol: FLEET_PROTOCOL, boxtime: new Date().toISOString() });
        expect(c.status).toBe(401);
        const e = await api().post('/fleet/enrol').set('Authorization', who)
          .send({ secret: newBoxSecret(), version: '1', protocol: FLEET_PROTOCOL });
        expect(e.status).toBe(401);
      }
      // A box credential is no enrolment code, and an enrolment code no box credential.
      expect((await api().post('/fleet/enrol').set('Authorization', box)
        .send({ secret: newBoxSecret(), version: '1', protocol: FLEET_PROTOCOL })).status).toBe(401);
      const reg = await register(as.superadmin, w.schoolA.schoolid);
      expect((await api().post('/fleet/box/contact').set('Authorization', `Enrol ${reg.body.data.enrolmentcode}`)
        .send({ version: '1', protocol: FLEET_PROTOCOL, boxtime: new Date().toISOString() })).status).toBe(401);
      // Another box's id with this box's secret.
      const other = await enrolledBox();
      expect((await contact(other.boxid, secret)).status).toBe(401);
      expect(await snapshot(t.tdb.db, ['boxes'])).toEqual({
        boxes: expect.arrayContaining((before.boxes as object[])) });
    });

  it('refuses oversize and malformed bodies, writing nothing', async () => {
    const { boxid, secret } = await enrolledBox();
    const reg = await register(as.superadmin, w.schoolA.schoolid);
    const before = await snapshot(t.tdb.db, ['boxes']);
    const big = await contact(boxid, secret, { lasterror: 'x'.repeat(10_000) });
    expect(big.status).toBe(413);
    const long = await contact(boxid, secret, { lasterror: 'x'.repeat(600) });
    expect(long.status).toBe(400);
    expect((await contact(boxid, secret, { boxtime: 'yesterday' })).status).toBe(400);
    expect((await contact(boxid, secret, { extra: 1 })).status).toBe(400);
    const oldBox = await contact(boxid, secret, { protocol: FLEET_PROTOCOL + 1 });
    expect(oldBox.status).toBe(400);
    expect(oldBox.body.errormessage).toMatch(/fleet protocol/);
    const code = reg.body.data.enrolmentcode as string;
    expect((await enrol(code, 'short')).status).toBe(400);
    expect((await enrol(code, newBoxSecret(), { pad: 'x'.repeat(10_000) })).status).toBe(413);
    expect((await register(as.superadmin, w.schoolA.schoolid, 'x'.repeat(201))).status).toBe(400);
    expect((await register(as.superadmin, crypto.randomUUID())).status).toBe(400);
    expect((await api().get('/fleet/boxes').query({ pagesize: 1000 }).set('Authorization', as.superadmin)).status)
      .toBe(400);
    expect((await api().get('/fleet/boxes/not-a-uuid').set('Authorization', as.superadmin)).status).toBe(400);
    expect(await snapshot(t.tdb.db, ['boxes'])).toEqual(before);
    // The code survived the refused tries.
    expect((await enrol(code)).status).toBe(200);
  });
});
