import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '@lms/db';
import {
  KHMER,
  authoringApp,
  expectRefused,
  onPostgres,
  oversize,
  raceWithUncommitted,
  uuid,
  type Callers,
} from './authoring';

let c: Callers;
beforeAll(async () => { c = await authoringApp(); });
afterAll(async () => { await c.t.tdb.dispose(); });

const db = () => c.t.tdb.db;
const post = (url: string, body: object, who = c.admin) =>
  request(c.t.app).post(url).set('Authorization', who).send(body);
const put = (url: string, body: object, who = c.admin) =>
  request(c.t.app).put(url).set('Authorization', who).send(body);
const get = (url: string, who = c.admin) =>
  request(c.t.app).get(url).set('Authorization', who).set('Content-Type', 'application/json');
const del = (url: string, who = c.admin) =>
  request(c.t.app).delete(url).set('Authorization', who).set('Content-Type', 'application/json');
const create = async (subjectname: string, subjectdescription?: string) => {
  const res = await post('/subject/create', { subjectname, subjectdescription });
  expect(res.status).toBe(200);
  return res.body.data as { subjectid: string };
};

describe('/subject', () => {
  it('POST /subject/create writes the row with its audit columns and answers it', async () => {
    const res = await post('/subject/create', { subjectname: 'Science', subjectdescription: 'Living things' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      error: false,
      data: expect.objectContaining({
        subjectid: expect.stringMatching(/^[0-9a-f-]{36}$/),
        subjectname: 'Science',
        subjectdescription: 'Living things',
        subjectstatus: true,
        isdeleted: false,
        created_by: c.adminId,
        created_at: expect.any(String),
      }),
    });
    expect(await db()('subjects').where({ subjectid: res.body.data.subjectid }).first()).toMatchObject({
      subjectname: 'Science',
      created_by: c.adminId,
      isdeleted: false,
    });
    // The admin UI sends '' for an untouched description.
    const blank = await post('/subject/create', { subjectname: 'Art', subjectdescription: '' });
    expect([blank.status, blank.body.data.subjectdescription]).toEqual([200, '']);
  });

  it('round-trips Khmer names through create, get, list filter and update', async () => {
    const { subjectid } = await create(KHMER.subject, 'មុខវិជ្ជាគណិត');
    expect((await get(`/subject/${subjectid}`)).body.data).toMatchObject({
      subjectname: KHMER.subject,
      subjectdescription: 'មុខវិជ្ជាគណិត',
    });
    const listed = await post('/subject', {
      filter: [{ key: 'subjectname', value: 'វិទ្យា' }],
      pageindex: 1,
      pagesize: 10,
    });
    expect(listed.body.data.data.map((s: { subjectid: string }) => s.subjectid)).toEqual([subjectid]);
    const renamed = await put(`/subject/${subjectid}`, { subjectname: `${KHMER.subject}ថ្មី`, subjectdescription: '' });
    expect([renamed.status, renamed.body.data.subjectname]).toEqual([200, `${KHMER.subject}ថ្មី`]);
    expect((await db()('subjects').where({ subjectid }).first()).subjectname).toBe(`${KHMER.subject}ថ្មី`);
  });

  it('POST /subject: live subjects by name, paged as asked, the page echoed', async () => {
    for (const n of ['Zoology', 'Biology', 'Chemistry']) await create(n);
    const gone = await create('Alchemy');
    await del(`/subject/${gone.subjectid}`);
    const all = (await post('/subject', { filter: [], pageindex: 1, pagesize: 200 })).body.data;
    const names = all.data.map((s: { subjectname: string }) => s.subjectname);
    expect(names).toEqual([...names].sort((a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(names).not.toContain('Alchemy');
    expect(all.total).toBe(names.length);
    const page2 = await post('/subject', { pageindex: 2, pagesize: 2 });
    expect(page2.body.data).toEqual({
      data: [expect.objectContaining({ subjectname: names[2] }), expect.objectContaining({ subjectname: names[3] })],
      total: names.length,
      pageindex: 2,
      pagesize: 2,
    });
    // What the question-create page and the clean-up scripts send: page 0, size 0 (= 20).
    const first = await post('/subject', { pageindex: 0, pagesize: 0 });
    expect([first.body.data.pageindex, first.body.data.pagesize, first.body.data.data.length]).toEqual([
      0,
      0,
      Math.min(20, names.length),
    ]);
    expect((await post('/subject', {})).body.data).toMatchObject({ pageindex: 0, pagesize: 0 });
    const filtered = await post('/subject', { filter: [{ key: 'subjectname', value: 'OLOGY' }] });
    expect(filtered.body.data.data.map((s: { subjectname: string }) => s.subjectname)).toEqual(['Biology', 'Zoology']);
  });

  it('GET and PUT work on a subject that a curriculum teaches; only DELETE refuses it', async () => {
    const { subjectid } = await create('Geography');
    await db()('curriculums').insert({
      curriculumid: uuid(),
      curriculumname: 'Geo 1',
      subjectid,
      curriculumstatus: false,
      isdeleted: false,
    });
    expect((await get(`/subject/${subjectid}`)).body.data).toMatchObject({ subjectid, subjectname: 'Geography' });
    const renamed = await put(`/subject/${subjectid}`, { subjectname: 'World Geography', subjectdescription: 'Maps' });
    expect(renamed.body.data).toMatchObject({
      subjectid,
      subjectname: 'World Geography',
      subjectdescription: 'Maps',
      updated_by: c.adminId,
    });
    await expectRefused(
      db(),
      ['subjects'],
      [['in use', del(`/subject/${subjectid}`), 400, 'Subject is assigned to a curriculum.']],
    );
    // Once the curriculum is deleted, the subject can go.
    await db()('curriculums').where({ subjectid }).update({ isdeleted: true });
    expect((await del(`/subject/${subjectid}`)).body).toEqual({ error: false, data: true });
    expect(await db()('subjects').where({ subjectid }).first()).toMatchObject({
      isdeleted: true,
      deleted_by: c.adminId,
      deleted_at: expect.any(String),
    });
    await expectRefused(
      db(),
      ['subjects'],
      [
        ['get deleted', get(`/subject/${subjectid}`), 400, 'Invalid subject id'],
        ['delete again', del(`/subject/${subjectid}`), 400, 'Invalid subject id'],
        ['update deleted', put(`/subject/${subjectid}`, { subjectname: 'Again' }), 400, 'Invalid subject id'],
      ],
    );
    // A deleted subject's name is free again.
    expect((await post('/subject/create', { subjectname: 'World Geography' })).status).toBe(200);
  });

  it('refuses invalid bodies, taken names and unknown ids with the contract words, writing nothing', async () => {
    const { subjectid } = await create('History');
    await create('Music');
    await expectRefused(
      db(),
      ['subjects'],
      [
        ['no name', post('/subject/create', {}), 400, '"Subject Name" is required'],
        [
          'short',
          post('/subject/create', { subjectname: 'ab' }),
          400,
          '"Subject Name" length must be at least 3 characters long',
        ],
        [
          'long',
          post('/subject/create', { subjectname: 'x'.repeat(26) }),
          400,
          '"Subject Name" length must be less than or equal to 25 characters long',
        ],
        ['blank', post('/subject/create', { subjectname: '     ' }), 400, 'Subject Name not allowed'],
        ['empty', post('/subject/create', { subjectname: '' }), 400, '"Subject Name" is not allowed to be empty'],
        ['number', post('/subject/create', { subjectname: 12345 }), 400, '"Subject Name" must be a string'],
        [
          'short description',
          post('/subject/create', { subjectname: 'Drama', subjectdescription: 'ab' }),
          400,
          '"Subject Description" length must be at least 3 characters long',
        ],
        [
          'long description',
          post('/subject/create', { subjectname: 'Drama', subjectdescription: 'x'.repeat(101) }),
          400,
          '"Subject Description" length must be less than or equal to 100 characters long',
        ],
        [
          'blank description',
          post('/subject/create', { subjectname: 'Drama', subjectdescription: '    ' }),
          400,
          'Subject Description not allowed',
        ],
        [
          'unknown key',
          post('/subject/create', { subjectname: 'Drama', subjectid: uuid() }),
          400,
          '"subjectid" is not allowed',
        ],
        [
          'two problems',
          post('/subject/create', { subjectname: 'ab', subjectdescription: 'ab' }),
          400,
          '"Subject Name" length must be at least 3 characters long, ' +
            '"Subject Description" length must be at least 3 characters long',
        ],
        ['taken', post('/subject/create', { subjectname: 'History' }), 400, 'Subject already exists'],
        ['taken on update', put(`/subject/${subjectid}`, { subjectname: 'Music' }), 400, 'Subject already exists'],
        ['unknown on update', put(`/subject/${uuid()}`, { subjectname: 'Drama' }), 400, 'Invalid subject id'],
        ['unknown get', get(`/subject/${uuid()}`), 400, 'Invalid subject id'],
        ['unknown delete', del(`/subject/${uuid()}`), 400, 'Invalid subject id'],
        ['bad page size', post('/subject', { pagesize: 201 }), 400, '"pagesize" must be less than or equal to 200'],
        [
          'bad filter key',
          post('/subject', { filter: [{ key: 'subjectid', value: 'x' }] }),
          400,
          /"filter.0.key" must be one of \[subjectname\]/,
        ],
      ],
    );
    // Keeping its own name is not a clash.
    expect((await put(`/subject/${subjectid}`, { subjectname: 'History', subjectdescription: 'Past' })).status).toBe(
      200,
    );
  });

  it('answers attacks without touching the table: oversize body, malformed ids, ' +
      'wrong token type, missing permission', async () => {
    await expectRefused(
      db(),
      ['subjects'],
      [
        ['oversize', post('/subject/create', oversize()), 413, 'Request body is too large'],
        ['malformed get', get('/subject/not-a-uuid'), 400, '"Subject ID" must be a valid GUID'],
        [
          'malformed put',
          put("/subject/1'%20or%201=1", { subjectname: 'Drama' }),
          400,
          '"Subject ID" must be a valid GUID',
        ],
        ['malformed delete', del('/subject/%00'), 400, '"Subject ID" must be a valid GUID'],
        ['refresh token', post('/subject/create', { subjectname: 'Drama' }, c.refresh), 401, 'Unauthorized'],
        ['anonymous', request(c.t.app).post('/subject/create').send({ subjectname: 'Drama' }), 401, 'Unauthorized'],
        ['teacher creates', post('/subject/create', { subjectname: 'Drama' }, c.teacher), 403, 'Forbidden resource'],
        ['user lists', post('/subject', {}, c.user), 403, 'Forbidden resource'],
      ],
    );
    expect((await post('/subject', {}, c.teacher)).status).toBe(200);
  });

  it("one name, one live subject: simultaneous creates give one row, the others the rule's 400", async () => {
    const results = await Promise.all(
      Array.from({ length: 6 }, () => post('/subject/create', { subjectname: 'Physics' })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400, 400, 400, 400, 400]);
    for (const r of results.filter((x) => x.status === 400)) expect(r.body.errormessage).toBe('Subject already exists');
    expect(
      await db()('subjects').where({ subjectname: 'Physics', isdeleted: false }).count({ n: '*' }).first(),
    ).toMatchObject({ n: 1 });
    // The database holds the rule too: a second live row is refused, a deleted one is not.
    const err = await db()('subjects')
      .insert({ subjectid: uuid(), subjectname: 'Physics', isdeleted: false })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(isUniqueViolation(err)).toBe(true);
    await db()('subjects').insert({ subjectid: uuid(), subjectname: 'Physics', isdeleted: true });
  });

  it.runIf(onPostgres())(
    "a create that races past the check ends as the rule's 400, not a 500 (PostgreSQL)",
    async () => {
      const res = await raceWithUncommitted(
        db(),
        'subjects',
        { subjectid: uuid(), subjectname: 'Racing', isdeleted: false },
        () => post('/subject/create', { subjectname: 'Racing' }),
      );
      expect([res.status, res.body.errormessage]).toEqual([400, 'Subject already exists']);
      expect(await db()('subjects').where({ subjectname: 'Racing' }).count({ n: '*' }).first()).toMatchObject({ n: 1 });
    },
  );
});
