import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent, type TestDatabase } from '@lms/db';
import { streamToBuffer, writeLogZipFromDocument, type LogDocument } from '@lms/shared';
import { createObjectStore } from '../src/objects';
import { createSchoolUser, schoolLogin } from './accounts';
import { closedPort, makeApp, testDatabase } from './helpers';
import { sample } from './metrics-text';

const TOKEN = 'metrics-token-for-the-tests-0123456789';

/** A log of `n` learner activity rows, one result and one sign-in. */
function activityLog(studentid: string, schooluserid: string, n: number): LogDocument {
  const at = new Date('2026-08-20T05:00:00Z').getTime();
  return {
    log: {
      result: [
        {
          studentprogressid: crypto.randomUUID(),
          studentid,
          ispass: true,
          studentprogressreferenceid: DEMO.lessonid,
          starttime: new Date(at).toISOString(),
          endtime: new Date(at + 60_000).toISOString(),
          progresstype: 2,
          resultpercentage: 80,
          marks: 4,
          points: 40,
          scores: 2,
          fullpoints: 50,
        },
      ],
      progress: {
        studentlearningprogress: [],
        studentgradesprogress: [],
        studentlevelsprogress: [],
        studentlessonsprogress: [],
        studentpoints: [],
        studentappusages: [],
        studentactives: Array.from({ length: n }, (_, i) => ({
          studentactiveid: crypto.randomUUID(),
          studentid,
          referenceid: DEMO.lessonid,
          referencetype: 3,
          created_at: new Date(at + i * 1000).toISOString(),
        })),
      },
      access: [
        {
          rpiuseraccessid: crypto.randomUUID(),
          userid: schooluserid,
          logintime: new Date(at).toISOString(),
          logouttime: null,
          timespent: '0',
          status: 1,
          ipaddress: '10.0.0.5',
        },
      ],
    },
  } as unknown as LogDocument;
}

describe('central GET /metrics', () => {
  let tdb: TestDatabase;
  let objectDir: string;
  beforeAll(async () => {
    tdb = await testDatabase();
    await seedDemoContent(tdb.db);
    objectDir = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-metrics-'));
  });
  afterAll(async () => {
    await tdb.dispose();
    fs.rmSync(objectDir, { recursive: true, force: true });
  });

  it('is the plain 404 while METRICS_TOKEN is unset', async () => {
    const { app } = await makeApp({ OBJECT_DIR: objectDir }, tdb);
    expect((await request(app).get('/metrics')).status).toBe(404);
    expect((await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).status).toBe(404);
  });

  it('refuses a scrape without the bearer token or with another one', async () => {
    const { app } = await makeApp({ OBJECT_DIR: objectDir, METRICS_TOKEN: TOKEN }, tdb);
    for (const auth of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN]) {
      const r = request(app).get('/metrics');
      const res = await (auth ? r.set('Authorization', auth) : r);
      expect(res.status).toBe(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.text).not.toContain('lms_');
    }
  });

  it('counts a request by its route template, an import with its rows, an import refused while busy, ' +
      'a rate-limit refusal and a store error', async () => {
    const teacherid = await createSchoolUser(tdb.db, {
      schoolusername: 'metrics.teacher',
      role: 3,
      schoolname: DEMO.schoolname,
    });
    const schooluserid = crypto.randomUUID();
    await tdb
      .db('schoolusers')
      .insert({
        schooluserid,
        schoolusername: 'metrics.learner',
        schooluserpasswordhash: 'x',
        schooluserrole: 4,
        schoolname: DEMO.schoolname,
      });
    const studentid = crypto.randomUUID();
    await tdb.db('students').insert({
      studentid,
      studentfirstname: 'M',
      genderid: 1,
      city: 'C',
      country: 'X',
      state: 'S',
      curriculumid: DEMO.curriculumid,
      schooluserid,
      schoolname: DEMO.schoolname,
    });
    expect(teacherid).toBeTruthy();
    const { app } = await makeApp(
      {
        OBJECT_DIR: objectDir,
        METRICS_TOKEN: TOKEN,
        LOG_IMPORT_ENABLED: 'true',
        MAX_CONCURRENT_IMPORTS: '1',
        RATE_LIMIT_MAX: '40',
      },
      tdb,
    );
    const scrape = async () => {
      const res = await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      return res.text;
    };
    const auth = `Bearer ${(await schoolLogin(app, 'metrics.teacher')).accessToken}`;

    // Requests: by template, never by raw path; a path no route answers is `unmatched`.
    const gradeid = crypto.randomUUID();
    expect((await request(app).get(`/grade/${gradeid}`)).status).toBe(401);
    expect((await request(app).get(`/no/such/${gradeid}`)).status).toBe(404);
    let text = await scrape();
    expect(
      sample(text, 'lms_http_request_duration_seconds_count', {
        route: '/grade/:gradeid',
        method: 'GET',
        status: '401',
      }),
    ).toBe(1);
    expect(
      sample(text, 'lms_http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status: '404' }),
    ).toBe(1);
    expect(text).not.toContain(gradeid);
    // Scrapes and health checks are not requests of the API.
    expect(text).not.toContain('route="/metrics"');

    // An import: finished, with the rows it wrote.
    const zip = await streamToBuffer(writeLogZipFromDocument(activityLog(studentid, schooluserid, 30), []));
    const ok = await request(app)
      .put('/log/import')
      .set('Authorization', auth)
      .attach('importfile', zip, 'studentlog.zip');
    expect(ok.status).toBe(200);
    const imported = (JSON.parse(ok.headers['x-log-import'] as string) as { imported: Record<string, number> })
      .imported;
    const rows = Object.values(imported).reduce((n, r) => n + r, 0);
    expect(rows).toBe(32);
    // A file that is not a ZIP: failed.
    expect(
      (
        await request(app)
          .put('/log/import')
          .set('Authorization', auth)
          .attach('importfile', Buffer.from('not a zip'), 'studentlog.zip')
      ).status,
    ).toBe(400);
    text = await scrape();
    expect(sample(text, 'lms_imports_total', { kind: 'log', outcome: 'finished' })).toBe(1);
    expect(sample(text, 'lms_imports_total', { kind: 'log', outcome: 'failed' })).toBe(1);
    expect(sample(text, 'lms_import_rows_written_total', { kind: 'log' })).toBe(rows);
    expect(sample(text, 'lms_imports_running', { kind: 'log' })).toBe(0);
    expect(
      sample(text, 'lms_http_request_duration_seconds_count', { route: '/log/import', method: 'PUT', status: '200' }),
    ).toBe(1);

    // An import still arriving is running and holds its account's
    // turn: the account's next is refused with 429 and counted.
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const boundary = 'metricsboundary';
    const held = http.request({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/log/import',
      agent: false,
      headers: {
        Authorization: auth,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': 100_000,
      },
    });
    held.on('error', () => undefined);
    held.write(
      `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; ` +
        `filename="studentlog.zip"\r\nContent-Type: application/zip\r\n\r\n`,
    );
    try {
      let running: number | undefined;
      for (let i = 0; i < 50 && running !== 1; i++) {
        await new Promise((r) => setTimeout(r, 20));
        running = sample(await scrape(), 'lms_imports_running', { kind: 'log' });
      }
      expect(running).toBe(1);
      const busy = await request(app)
        .put('/log/import')
        .set('Authorization', auth)
        .attach('importfile', zip, 'studentlog.zip');
      expect(busy.status).toBe(429);
      text = await scrape();
      expect(sample(text, 'lms_imports_refused_total', { kind: 'log' })).toBe(1);
    } finally {
      held.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }

    // The rate limit: 40 requests a minute from this address, then refusals.
    let refused = 0;
    for (let i = 0; i < 45 && refused === 0; i++) if ((await request(app).get('/')).status === 429) refused += 1;
    expect(refused).toBe(1);
    text = await scrape();
    expect(sample(text, 'lms_rate_limit_refusals_total', { limiter: 'central' })).toBe(1);
    // Refused before any route was matched: no template to name.
    expect(
      sample(text, 'lms_http_request_duration_seconds_count', { route: 'unmatched', method: 'GET', status: '429' }),
    ).toBe(1);

    // The pool and the process.
    expect(sample(text, 'lms_db_pool_max')).toBeGreaterThan(0);
    expect(sample(text, 'lms_db_pool_connections', { state: 'used' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'lms_db_pool_waiting')).toBe(0);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('counts the errors of an object store that does not answer, not a missing object', async () => {
    const port = await closedPort();
    const { app } = await makeApp(
      { METRICS_TOKEN: TOKEN, S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_ACCESS_KEY: 'k', S3_SECRET_KEY: 'k' },
      tdb,
    );
    expect((await request(app).get('/readyz')).body).toEqual({ status: 'ready', degraded: ['objects'] });
    const text = (await request(app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
    expect(sample(text, 'lms_object_store_errors_total', { operation: 'probe' })).toBe(1);

    const folder = createObjectStore({ kind: 'folder', dir: objectDir });
    const { app: withFolder } = await makeApp({ METRICS_TOKEN: TOKEN }, tdb, { objects: folder });
    // A media file nobody stored: a 404 of the store, not an error of it.
    expect((await request(withFolder).get('/media/nothing-here.png')).status).toBe(404);
    const after = (await request(withFolder).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
    expect(sample(after, 'lms_object_store_errors_total', { operation: 'get' }) ?? 0).toBe(0);
    expect(sample(after, 'lms_object_store_errors_total', { operation: 'stat' }) ?? 0).toBe(0);
  });
});
