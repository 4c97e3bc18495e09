import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { ObjectStoreError, type ObjectStore } from '../src/objects';
import { makeApp, type TestApp } from './helpers';
import { createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';
import { startS3Sandbox, type S3Sandbox } from './s3';
import { media, storeFor } from './media-helpers';

// A teacher's feedback with pictures (contract §10), on both object stores.

let sandbox: S3Sandbox;
beforeAll(async () => { sandbox = await startS3Sandbox('lms-feedback-'); });
afterAll(async () => { await sandbox?.close(); });

const b64 = (b: Buffer) => b.toString('base64');
const empty = { feedback: '', selected_error: [], images: [] };
const form = (o: Record<string, unknown> = {}) => ({
  teachername: 'Ms Achieng', curriculumid: DEMO.curriculumid,
  rpi: empty, router: empty, tablet: empty, content: empty, app: empty, general: empty, ...o,
});

describe.each(['folder', 's3'] as const)('feedback on the %s store', (kind) => {
  let t: TestApp;
  let store: ObjectStore;
  let teacher: string;
  let teacherId: string;
  let hillTeacher: string;
  let admin: string;
  let countryScoped: string;
  const hill = { schoolid: crypto.randomUUID(), schoolname: 'Hill School', countryid: crypto.randomUUID() };

  beforeAll(async () => {
    const s = storeFor(kind, sandbox, `feedback-${kind}`);
    store = s.store;
    t = await makeApp({ ...s.env, RATE_LIMIT_MAX: '100000' }, undefined, { objects: store });
    const db = t.tdb.db;
    await seedDemoContent(db);
    await db('countries').insert({ countryid: hill.countryid, countryname: 'Hill Country' });
    await db('schools').insert({
      schoolid: hill.schoolid,
      schoolname: hill.schoolname,
      countryid: hill.countryid,
      curriculums: JSON.stringify([]),
    });
    teacherId = await createSchoolUser(db, { schoolusername: 'achieng', role: 3, schoolname: DEMO.schoolname });
    await createSchoolUser(db, { schoolusername: 'hillteacher', role: 3, schoolname: hill.schoolname });
    teacher = `Bearer ${(await schoolLogin(t.app, 'achieng')).accessToken}`;
    hillTeacher = `Bearer ${(await schoolLogin(t.app, 'hillteacher')).accessToken}`;
    await createStaff(db, { lmsusername: 'fb@admin.test', roleids: [ROLE_IDS.admin] });
    admin = `Bearer ${(await staffLogin(t.app, 'fb@admin.test')).accessToken}`;
    await createStaff(db, { lmsusername: 'fb@hill.test', roleids: [ROLE_IDS.admin], countries: [hill.countryid] });
    countryScoped = `Bearer ${(await staffLogin(t.app, 'fb@hill.test')).accessToken}`;
  });
  afterAll(async () => { await t.tdb.dispose(); });

  const create = (body: object, who = teacher) =>
    request(t.app).post('/feedback/create').set('Authorization', who).send(body);
  const feedbackKeys = async () => (await store.list('feedback/')).map((o) => o.key);
  const rows = () => t.tdb.db('feedbacks');
  async function refused(res: request.Response, status: number, message: string) {
    expect({ status: res.status, body: res.body }).toEqual({
      status,
      body: { error: true, errormessage: message, data: false },
    });
  }

  it('stores each picture under feedback/ with its generated name and writes one row', async () => {
    const pics = { a: media.png(3000), b: media.jpg(2000), c: media.gif(1500) };
    const res = await create(
      form({
        rpi: {
          feedback: 'Box restarts',
          selected_error: [1, 3],
          images: [
            { filename: 'box-front.png', content: b64(pics.a) },
            { filename: 'box_back.jpg', content: `data:image/jpeg;base64,${b64(pics.b)}` },
          ],
        },
        tablet: {
          feedback: 'Cracked screen',
          selected_error: [2],
          images: [{ filename: 'screen.gif', content: b64(pics.c) }],
        },
      }),
    );
    expect(res.body).toEqual({ error: false, data: 'feedback is created successfully!' });
    const [row] = await rows();
    const name = (section: string, ext: string) => new RegExp(`^${teacherId}_${section}_\\d{13}\\.${ext}$`);
    expect(row).toMatchObject({
      teachername: 'Ms Achieng',
      curriculumid: DEMO.curriculumid,
      created_by: teacherId,
      isdeleted: false,
    });
    expect(row.feedback.rpi).toEqual({
      feedback: 'Box restarts',
      selected_error: [1, 3],
      images: [expect.stringMatching(name('rpi', 'png')), expect.stringMatching(name('rpi', 'jpg'))],
    });
    expect(row.feedback.tablet.images).toEqual([expect.stringMatching(name('tablet', 'gif'))]);
    expect(row.feedback.general).toEqual({ feedback: '', selected_error: [], images: [] });
    expect(row.image).toEqual([...row.feedback.rpi.images, ...row.feedback.tablet.images]);
    expect(new Set(row.image).size).toBe(3);
    expect(row.feedback3meta.map((m: { Key: string }) => m.Key)).toEqual(row.image.map((n: string) => `feedback/${n}`));
    expect((await feedbackKeys()).sort()).toEqual(row.image.map((n: string) => `feedback/${n}`).sort());
    const served = await request(t.app).get(`/media/feedback/${row.feedback.rpi.images[1]}`).buffer(true);
    expect(served.status).toBe(200);
    expect(served.headers['content-type']).toBe('image/jpeg');
    expect(Number(served.headers['content-length'])).toBe(pics.b.length);
  });

  it('refuses a failing third picture, or any picture, before it stores one: no row, no object', async () => {
    const before = { rows: (await rows()).length, keys: await feedbackKeys() };
    const two = [
      { filename: 'one.png', content: b64(media.png()) },
      { filename: 'two.png', content: b64(media.png()) },
    ];
    const long = 'Invalid file name, only alpha numeric is allowed and file name max length of 25 characters only';
    const cases: Array<[object, number, string]> = [
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'three.png', content: b64(media.html()) }] } }),
        400,
        'Invalid file type',
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'three.mp3', content: b64(media.png()) }] } }),
        400,
        'Invalid file type',
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'three.exe', content: b64(media.png()) }] } }),
        400,
        'Invalid file type',
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'noextension', content: b64(media.png()) }] } }),
        400,
        'Invalid file name',
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: '../../three.png', content: b64(media.png()) }] } }),
        400,
        long,
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'a/three.png', content: b64(media.png()) }] } }),
        400,
        long,
      ],
      [
        form({ rpi: { images: two }, app: { images: [{ filename: 'three.png', content: 'not base64 at all!' }] } }),
        400,
        'Invalid file type',
      ],
      [
        form({ rpi: { images: [...two, { filename: 'one.png', content: b64(media.png()) }] } }),
        400,
        'Duplicate file name, please check and rename your file!',
      ],
      [
        form({
          rpi: { images: two },
          app: { images: [{ filename: 'big.png', content: b64(media.png(5 * 1024 * 1024 + 1)) }] },
        }),
        413,
        'File too large (at most 5 MB)',
      ],
      [
        form({
          rpi: { images: two },
          app: {
            images: Array.from({ length: 11 }, (_, i) => ({ filename: `p${i}.png`, content: b64(media.png(100)) })),
          },
        }),
        400,
        'At most 12 pictures can be sent with one feedback',
      ],
      [form({ curriculumid: crypto.randomUUID(), rpi: { images: two } }), 400, 'Invalid Curriculum id'],
    ];
    for (const [body, status, message] of cases) await refused(await create(body), status, message);
    await refused(await create(form({ rpi: { images: two } }), admin), 400, 'Please login as a teacher!');
    const huge = await create(
      form({ rpi: { images: [{ filename: 'x.png', content: 'A'.repeat(25 * 1024 * 1024) }] } }),
    );
    expect({ status: huge.status, message: huge.body.errormessage }).toEqual({
      status: 413,
      message: 'Request body is too large',
    });
    expect((await create({ curriculumid: DEMO.curriculumid })).body.errormessage).toBe('"teachername" is required');
    expect((await rows()).length).toBe(before.rows);
    expect(await feedbackKeys()).toEqual(before.keys);
    expect(await t.tdb.db('mediaclaims')).toEqual([]);
  });

  it('removes what it stored when the store fails on the third picture', async () => {
    let puts = 0;
    const failing: ObjectStore = {
      ...store,
      kind: store.kind,
      async put(key, body, options) {
        puts += 1;
        if (puts === 3) throw new ObjectStoreError('Unavailable', 'the disk is full');
        return store.put(key, body, options);
      },
    };
    const app = (await makeApp({ RATE_LIMIT_MAX: '100000' }, t.tdb, { objects: failing })).app;
    const before = { rows: (await rows()).length, keys: await feedbackKeys() };
    const res = await request(app)
      .post('/feedback/create')
      .set('Authorization', teacher)
      .send(
        form({
          rpi: {
            images: [
              { filename: 'one.png', content: b64(media.png()) },
              { filename: 'two.png', content: b64(media.png()) },
            ],
          },
          general: { images: [{ filename: 'three.png', content: b64(media.png()) }] },
        }),
      );
    // The store out of reach is an outage: 503 with Retry-After, and nothing left behind.
    expect([res.status, res.headers['retry-after'], res.body.errormessage]).toEqual([
      503,
      '30',
      'Service temporarily unavailable (the object store cannot be reached), please try again later',
    ]);
    expect(puts).toBe(3);
    expect((await rows()).length).toBe(before.rows);
    expect(await feedbackKeys()).toEqual(before.keys);
    expect(await t.tdb.db('mediaclaims')).toEqual([]);
  });

  it('never writes over a picture already in the store under the generated name', async () => {
    // Close to now: the teacher's token must still be valid at that time.
    const at = new Date(Date.now() + 60_000);
    const taken = `${teacherId}_router_${at.getTime()}.png`;
    const original = media.png(700);
    await store.put(`feedback/${taken}`, original, { contentType: 'image/png' });
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(at);
    try {
      const before = (await rows()).length;
      const res = await create(form({ router: { images: [{ filename: 'cable.png', content: b64(media.png()) }] } }));
      expect({ status: res.status, message: res.body.errormessage }).toEqual({
        status: 400,
        message: `${taken} already exists, please rename your file!`,
      });
      expect((await rows()).length).toBe(before);
    } finally {
      vi.useRealTimers();
    }
    const kept: Buffer[] = [];
    for await (const c of await store.get(`feedback/${taken}`)) kept.push(c as Buffer);
    expect(Buffer.concat(kept).equals(original)).toBe(true);
    await store.delete(`feedback/${taken}`);
  });

  it('accepts feedback without pictures and missing parts of the form', async () => {
    expect(
      (
        await create(
          {
            teachername: 'Mr Hill',
            curriculumid: DEMO.curriculumid,
            router: { feedback: 'No signal', selected_error: [4] },
          },
          hillTeacher,
        )
      ).status,
    ).toBe(200);
    const row = await rows().where({ teachername: 'Mr Hill' }).first();
    expect(row.feedback.router).toEqual({ feedback: 'No signal', selected_error: [4], images: [] });
    expect(row.image).toEqual([]);
  });

  it("lists feedback newest first with the teacher, school and curriculum, " +
      "filtered and within the caller's scope", async () => {
    const list = (body: object, who = admin) => request(t.app).post('/feedback').set('Authorization', who).send(body);
    const all = await list({ filter: [], pageindex: 1, pagesize: 10 });
    expect(all.status).toBe(200);
    expect(all.body.data).toMatchObject({ total: 2, pageindex: 1, pagesize: 10 });
    const [newest, older] = all.body.data.data;
    expect(newest).toEqual({
      feedbackid: expect.any(String),
      feedback: expect.objectContaining({ router: { feedback: 'No signal', selected_error: [4], images: [] } }),
      image: [],
      teachername: 'Mr Hill',
      created_at: expect.any(String),
      schooluser: {
        schooluserid: expect.any(String),
        schoolname: hill.schoolname,
        school: { schoolname: hill.schoolname, countryid: hill.countryid },
      },
      curriculum: { curriculumid: DEMO.curriculumid, curriculumname: DEMO.curriculumname },
    });
    expect(older.teachername).toBe('Ms Achieng');
    const names = async (body: object, who = admin) =>
      ((await list(body, who)).body.data.data as Array<{ teachername: string }>).map((f) => f.teachername);
    expect(await names({ filter: [{ key: 'countryid', value: hill.countryid }] })).toEqual(['Mr Hill']);
    expect(await names({ filter: [{ key: 'schoolname', value: DEMO.schoolname }] })).toEqual(['Ms Achieng']);
    expect(await names({ filter: [{ key: 'schoolname', value: DEMO.schoolid }] })).toEqual(['Ms Achieng']);
    expect(
      await names({
        filter: [
          { key: 'startDate', value: '2000-01-01T00:00:00.000Z' },
          { key: 'endDate', value: '2001-01-01T00:00:00.000Z' },
        ],
      }),
    ).toEqual([]);
    expect(
      await names({ filter: [{ key: 'startDate', value: new Date(Date.now() - 3600_000).toISOString() }] }),
    ).toEqual(['Mr Hill', 'Ms Achieng']);
    expect(await names({ pagesize: 1, pageindex: 2 })).toEqual(['Ms Achieng']);
    expect(await names({ filter: [] }, countryScoped)).toEqual(['Mr Hill']);
  });

  it('answers one feedback\'s text, and nothing for one outside the caller\'s scope', async () => {
    const mine = await rows().where({ teachername: 'Ms Achieng' }).first();
    const res = await request(t.app).get(`/feedback/${mine.feedbackid}`).set('Authorization', admin);
    expect(res.body.data).toEqual({ feedbackid: mine.feedbackid, feedback: mine.feedback, teachername: 'Ms Achieng' });
    expect((await request(t.app).get(`/feedback/${mine.feedbackid}`).set('Authorization', countryScoped)).body).toEqual(
      { error: false, data: null },
    );
    expect((await request(t.app).get(`/feedback/${crypto.randomUUID()}`).set('Authorization', admin)).body).toEqual({
      error: false,
      data: null,
    });
    expect((await request(t.app).get('/feedback/nope').set('Authorization', admin)).body.errormessage).toBe(
      '"feedbackid" must be a valid GUID',
    );
  });
});
