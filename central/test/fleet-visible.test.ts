import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_PROTOCOL, boxAuthorization, newBoxSecret } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { callers, seedWorld, type Who, type World } from './people-fixtures';
import { sample } from './metrics-text';

// The fleet as an operator sees it: what each box's contacts report (rows waiting, failures in a row, the
// last good sync), in GET /fleet/boxes and on /metrics, without a label per box.

const TOKEN = 'fleet-metrics-token-0123456789';
let t: TestApp;
let w: World;
let as: Record<Who, string>;

beforeAll(async () => {
  t = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000', METRICS_TOKEN: TOKEN });
  w = await seedWorld(t.tdb.db);
  as = await callers(t, w);
}, 120_000);
afterAll(async () => {
  await t.tdb.dispose();
});

const api = () => request(t.app);
const contact = (boxid: string, secret: string, body: Record<string, unknown> = {}) =>
  api().post('/fleet/box/contact').set('Authorization', boxAuthorization(boxid, secret))
    .send({ version: '1.4.1', protocol: FLEET_PROTOCOL, boxtime: new Date().toISOString(), ...body });

async function enrolledBox(schoolid = w.schoolA.schoolid, name = 'Library box') {
  const reg = await api().post('/fleet/boxes').set('Authorization', as.superadmin).send({ schoolid, name });
  expect(reg.status).toBe(201);
  const secret = newBoxSecret();
  const res = await api().post('/fleet/enrol').set('Authorization', `Enrol ${reg.body.data.enrolmentcode}`)
    .send({ secret, version: '1.4.0', protocol: FLEET_PROTOCOL });
  expect(res.status).toBe(200);
  return { boxid: reg.body.data.box.boxid as string, secret };
}
const scrape = async () => {
  const res = await api().get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
};

describe('the fleet, visible', () => {
  it('records rows waiting, failures in a row and the last good sync from contacts', async () => {
    const { boxid, secret } = await enrolledBox();
    const before = await api().get(`/fleet/boxes/${boxid}`).set('Authorization', as.superadmin);
    expect(before.body.data).toMatchObject({ rowswaiting: null, failures: 0, lastgoodat: null, lastdownat: null,
      lastdownbytes: null });

    const failing = await contact(boxid, secret, { rowswaiting: 1234, failures: 3,
      lasterror: 'central answered 503' });
    expect(failing.status).toBe(200);
    const seen = await api().get(`/fleet/boxes/${boxid}`).set('Authorization', as.superadmin);
    expect(seen.body.data).toMatchObject({ rowswaiting: 1234, failures: 3, lasterror: 'central answered 503',
      lastgoodat: null });

    expect((await contact(boxid, secret, { rowswaiting: 0, failures: 0, lasterror: null })).status).toBe(200);
    const good = await api().get(`/fleet/boxes/${boxid}`).set('Authorization', as.superadmin);
    expect(good.body.data).toMatchObject({ rowswaiting: 0, failures: 0, lasterror: null });
    expect(Math.abs(Date.parse(good.body.data.lastgoodat) - Date.now())).toBeLessThan(600_000);

    // A box of the protocol's first bodies (without the new fields) is still understood, and what it did
    // not say stays as it was.
    expect((await contact(boxid, secret)).status).toBe(200);
    const old = await api().get(`/fleet/boxes/${boxid}`).set('Authorization', as.superadmin);
    expect(old.body.data).toMatchObject({ rowswaiting: 0, failures: 0 });
  });

  it('refuses a report with a negative or fractional count, and writes nothing of it', async () => {
    const { boxid, secret } = await enrolledBox();
    for (const body of [{ rowswaiting: -1 }, { failures: 1.5 }, { rowswaiting: 'many' }]) {
      const res = await contact(boxid, secret, body);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ error: true, data: false });
    }
    const row = await t.tdb.db('boxes').where({ boxid }).first();
    expect(row.rowswaiting).toBeNull();
    expect(row.lastcontactat).toBeNull();
  });

  it('pages GET /fleet/boxes and shows each box its fields', async () => {
    const list = await api().get('/fleet/boxes?pagesize=1&pageindex=1').set('Authorization', as.superadmin);
    expect(list.status).toBe(200);
    expect(list.body.data.boxes).toHaveLength(1);
    expect(list.body.data.total).toBeGreaterThanOrEqual(2);
    expect(list.body.data).toMatchObject({ pageindex: 1, pagesize: 1 });
    expect(Object.keys(list.body.data.boxes[0])).toEqual(expect.arrayContaining(['rowswaiting', 'failures',
      'lastgoodat', 'lastupat', 'lastdownat', 'freediskbytes', 'clockskewms', 'lasterror', 'version']));
  });

  it('exposes the fleet on /metrics by state and as its worst figures, with no label per box', async () => {
    await t.tdb.db('boxes').delete();
    const a = await enrolledBox();
    const b = await enrolledBox(w.schoolB.schoolid, 'Hall box');
    await api().post('/fleet/boxes').set('Authorization', as.superadmin)
      .send({ schoolid: w.schoolA.schoolid, name: 'Not yet' });
    const c = await enrolledBox();
    expect((await api().post(`/fleet/boxes/${c.boxid}/revoke`).set('Authorization', as.superadmin)).status)
      .toBe(200);
    const skewed = new Date(Date.now() - 20 * 60_000).toISOString();
    expect((await contact(a.boxid, a.secret, { rowswaiting: 40, failures: 0, lasterror: null })).status).toBe(200);
    expect((await contact(b.boxid, b.secret, { rowswaiting: 2, failures: 7, lasterror: 'disk full',
      boxtime: skewed })).status).toBe(200);
    // Box b's last good sync was eight days ago.
    await t.tdb.db('boxes').where({ boxid: b.boxid })
      .update({ lastgoodat: new Date(Date.now() - 8 * 86_400_000).toISOString() });

    const text = await scrape();
    expect(sample(text, 'lms_fleet_boxes', { state: 'enrolled' })).toBe(2);
    expect(sample(text, 'lms_fleet_boxes', { state: 'registered' })).toBe(1);
    expect(sample(text, 'lms_fleet_boxes', { state: 'revoked' })).toBe(1);
    expect(sample(text, 'lms_fleet_rows_waiting')).toBe(42);
    expect(sample(text, 'lms_fleet_box_failures')).toBe(7);
    expect(sample(text, 'lms_fleet_box_seconds_since_good_sync')).toBeGreaterThan(7.9 * 86_400);
    expect(sample(text, 'lms_fleet_box_clock_skew_seconds')).toBeGreaterThan(19 * 60);
    expect(sample(text, 'lms_fleet_box_seconds_since_contact')).toBeGreaterThanOrEqual(0);
    expect(text).not.toContain(a.boxid);
    expect(text).not.toContain(b.boxid);
  }, 120_000);
});
