import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { LEARNER_IDENTITY_COLUMNS, ROLE_IDS, openZipBuffer } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { addLearner } from './people-fixtures';
import { enrolledBox, type EnrolledBox } from './fleet-fixtures';

// A learner erased at central is anonymised on the school's enrolled box by the box's next sync, with no push
// from anyone; the learner's sign-in account and activity stay, and the export names the box and what it holds.

let central: TestApp;
let box: EnrolledBox['box'];
let agent: EnrolledBox['agent'];
let enrolled: EnrolledBox;
let superadmin: string;
let kwame: { studentid: string; schooluserid: string };
let boxid = '';

beforeAll(async () => {
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  await seedDemoContent(central.tdb.db);
  await central.tdb.db('curriculumcountry').insert({ curriculumcountryid: crypto.randomUUID(),
    curriculumid: DEMO.curriculumid, countryid: DEMO.countryid });
  await createStaff(central.tdb.db, { lmsusername: 'fleet-erase@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'fleet-erase@e2e.test')).accessToken}`;
  kwame = await addLearner(central.tdb.db, { schoolname: DEMO.schoolname, standard: DEMO.standardid,
    schoolusername: 'kwame-e', studentfirstname: 'Kwamena', curriculumids: [DEMO.curriculumid],
    extra: { mothername: 'Efua Quartey', dateofbirth: '2016-03-04' } });
  enrolled = await enrolledBox(central, superadmin, DEMO.schoolid);
  ({ box, agent, boxid } = enrolled);
}, 120_000);

afterAll(async () => {
  await enrolled?.close();
  await central?.tdb.dispose();
});

async function unzip(buf: Buffer): Promise<Map<string, string>> {
  const zip = await openZipBuffer(buf);
  const out = new Map<string, string>();
  try {
    for await (const e of zip.entries()) out.set(e.name, await e.readText());
  } finally {
    zip.close();
  }
  return out;
}

const onBox = () => box.tdb.db('students').where('studentid', kwame.studentid).first();
const login = (username: string) =>
  request(box.app).post('/auth/login').send({ studentusername: username, studentpassword: 'pass1' });

describe('erasure through the fleet', () => {
  it('the box holds the learner\'s names only, never the fields it has no use for', async () => {
    expect((await agent.syncNow())?.down?.applied).toContain('students');
    const held = await onBox();
    expect(held).toMatchObject({ studentfirstname: 'Kwamena', studentlastname: 'Mensah' });
    expect(held.mothername ?? null).toBeNull();
    expect(held.dateofbirth ?? null).toBeNull();
    expect((await login('kwame-e')).status).toBe(200);
  }, 120_000);

  it('the export names the enrolled box and what it holds of the learner', async () => {
    const ex = await request(central.app).get(`/privacy/learner/${kwame.studentid}/export`)
      .set('Authorization', superadmin).buffer(true)
      .parse((res, cb) => { const b: Buffer[] = []; res.on('data', (c: Buffer) => b.push(c));
        res.on('end', () => cb(null, Buffer.concat(b))); });
    expect(ex.status).toBe(200);
    const files = await unzip(ex.body as Buffer);
    const manifest = JSON.parse(files.get('manifest.json')!);
    const listed = manifest.boxes.boxes.find((b: { boxid: string }) => b.boxid === boxid);
    expect(listed).toMatchObject({ state: 'enrolled', name: 'Room 1' });
    expect(listed.holds).toEqual(expect.arrayContaining(['studentfirstname', 'studentlastname']));
    expect(listed.holds).not.toContain('mothername');
    expect(listed.lastcontactat).not.toBeNull();
    expect(files.get('manifest.txt')).toContain('Room 1');
  }, 120_000);

  it('an erasure at central reaches the box on its next sync; sign-in and activity stay', async () => {
    const erase = await request(central.app).post(`/privacy/learner/${kwame.studentid}/erase`)
      .set('Authorization', superadmin);
    expect(erase.status).toBe(200);
    expect((await onBox()).studentfirstname).toBe('Kwamena');
    const r = await agent.syncNow();
    expect(r?.down?.applied).toContain('students');
    const held = await onBox();
    for (const c of LEARNER_IDENTITY_COLUMNS) if (c in held) expect(held[c] ?? '', c).toBe('');
    const everything = JSON.stringify(await box.tdb.db('students'));
    expect(everything).not.toContain('Kwamena');
    expect(everything).not.toContain('Efua');
    // The account survives anonymised: the learner's progress on the box stays theirs.
    expect(await box.tdb.db('schoolusers').where('schooluserid', kwame.schooluserid).first()).toBeDefined();
    // The box said it applied that roster: the erasure is marked carried, as a push marks it.
    const mark = await central.tdb.db('learnererasures').where('studentid', kwame.studentid).first();
    expect(mark.rosterpushedat).not.toBeNull();
    // A second sync has nothing to bring.
    expect((await agent.syncNow())?.down?.applied).toEqual([]);
  }, 120_000);
});
