import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, type TestApp } from './helpers';

let t: TestApp;
beforeAll(async () => { t = await makeApp(); });
afterAll(async () => { await t.tdb.dispose(); });

describe('central public routes', () => {
  it('GET / answers the plain-text banner', async () => {
    const res = await request(t.app).get('/');
    expect(res.status).toBe(200);
    expect(res.text).toBe('FORTYK API ***');
    expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('GET /version answers the version to anyone, as text or JSON, without the build', async () => {
    const text = await request(t.app).get('/version');
    expect(text.status).toBe(200);
    expect(text.text).toBe('1.0.0');
    expect(text.headers['x-build']).toBeUndefined();
    const json = await request(t.app).get('/version').set('Accept', 'application/json');
    expect(json.body).toEqual({ error: false, data: { version: '1.0.0' } });
  });

  it('GET /version gives the build (commit and time) only with Authorization: Bearer <METRICS_TOKEN>', async () => {
    const token = crypto.randomBytes(32).toString('base64url');
    const { app } = await makeApp({ METRICS_TOKEN: token }, t.tdb);
    const asked = (auth?: string) => {
      const r = request(app).get('/version').set('Accept', 'application/json');
      return auth ? r.set('Authorization', auth) : r;
    };
    const operator = await asked(`Bearer ${token}`);
    expect(operator.status).toBe(200);
    expect(operator.body).toEqual({ error: false, data: { version: '1.0.0', build: expect.any(String) } });
    expect(operator.headers['x-build']).toBe(operator.body.data.build);
    expect(operator.headers.vary).toMatch(/Authorization/i);
    const text = await request(app).get('/version').set('Authorization', `Bearer ${token}`);
    expect([text.text, text.headers['x-build']]).toEqual(['1.0.0', operator.body.data.build]);
    // Anyone else still gets the public version, never the build: no token, a wrong one, a staff-like token.
    for (const auth of [undefined, `Bearer ${token.slice(0, -1)}x`, 'Bearer x', `Basic ${token}`, token]) {
      const r = await asked(auth);
      const publicBody = { error: false, data: { version: '1.0.0' } };
      expect([auth, r.status, r.body, r.headers['x-build']]).toEqual([auth, 200, publicBody, undefined]);
    }
  });

  it('serves the learner upload template with the columns the bulk create accepts', async () => {
    const res = await request(t.app).get('/assets/user-upload.csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment;filename=user-upload.csv');
    expect(res.headers["content-type"]).toMatch(/^text\/csv/);
    const [header, sample] = res.text.trim().split('\n');
    expect(header.split(',')).toHaveLength(22);
    expect(header.split(',')).toContain('wg_communicating');
    expect(sample.split(',')).toHaveLength(22);
  });

  it('serves the teacher upload template as a header line', async () => {
    const res = await request(t.app).get('/assets/teacher-upload.csv');
    expect(res.status).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment;filename=teacher-upload.csv');
    expect(res.text).toBe('schoolusername,schooluserpasswordhash\n');
  });

  it.each(['/common/templatetype', '/dropdown/templatetype'])('GET %s lists the 24 template types', async (path) => {
    const res = await request(t.app).get(path);
    expect(res.status).toBe(200);
    expect(res.body.error).toBe(false);
    expect(res.body.data).toHaveLength(24);
    expect(res.body.data[0]).toEqual({
      templatename: 'MCQ (Single response) Text and Audio',
      oldtemplatename: 'MCQ (Single response) Text and Audio',
      templateinstructions: 'MCQ (Single response) Text and Audio',
      templateid: 1,
      oldtemplateid: 1,
    });
    expect(res.body.data[23].templatename).toBe('Fraction');
  });

  it('matches paths case-insensitively and tolerates a trailing slash', async () => {
    const res = await request(t.app).get('/Dropdown/TemplateType/');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(24);
  });

  it('answers an unknown route with the 404 envelope', async () => {
    const res = await request(t.app).get('/no/such/route');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: true, errormessage: 'Cannot GET /no/such/route', data: false });
  });

  it('does not have the removed routes', async () => {
    expect((await request(t.app).post('/auth/register').send({})).status).toBe(404);
    expect((await request(t.app).post('/roles/create-perm/x').send({})).status).toBe(404);
  });

  it('answers malformed JSON with a 400 envelope', async () => {
    const res = await request(t.app).post('/auth/login').set('Content-Type', 'application/json').send('{"a":');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: true, data: false });
  });

  it('sends security headers and no X-Powered-By', async () => {
    const res = await request(t.app).get('/');
    expect(res.headers['x-powered-by']).toBeUndefined();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('keeps a guarded route closed to an anonymous caller', async () => {
    const res = await request(t.app).post('/grade').send({});
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: true, errormessage: 'Unauthorized', data: false });
  });

  it('answers PUT /log/import with 404 while the switch is off, before authentication', async () => {
    const res = await request(t.app).put('/log/import');
    expect(res.status).toBe(404);
  });
});
