import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO } from '@lms/db';
import { streamToBuffer, writeTeachersZip } from '@lms/shared';
import { sample } from '../../central/test/metrics-text';
import { makeApp, testDatabase } from './helpers';
import type { TestDatabase } from '@lms/db';

const TOKEN = 'classroom-metrics-token-0123456789abcdef';
const SECRETS = { SERVER_SYNC_KEY: 'sk_metrics_0123456789', JWT_SECRET: 'jwt_metrics_0123456789' };

const teacher = (n: number) => ({
  schooluserid: `c0000000-0000-4000-8000-${String(700 + n).padStart(12, '0')}`,
  schoolusername: `metrics.teacher${n}`,
  schooluserpasswordhash: '$2b$10$abcdefghijklmnopqrstuu',
  schooluserrole: 3,
  schooluserstatus: 1,
  schoolname: DEMO.schoolname,
  isdisabled: 0,
  isdeleted: 0,
  created_at: '2026-01-01T00:00:00.000Z',
});

describe('classroom GET /metrics', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await testDatabase();
  });
  afterAll(async () => {
    await tdb.dispose();
  });

  it('is the plain 404 while METRICS_TOKEN is unset, and 401 without the token', async () => {
    const off = await makeApp(SECRETS, tdb);
    expect((await request(off.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).status).toBe(404);
    const on = await makeApp({ ...SECRETS, METRICS_TOKEN: TOKEN }, tdb);
    expect((await request(on.app).get('/metrics')).status).toBe(401);
    expect((await request(on.app).get('/metrics').set('Authorization', 'Bearer nope')).status).toBe(401);
  });

  it('counts requests by template, imports with their rows, and rate-limit refusals', async () => {
    const t = await makeApp({ ...SECRETS, METRICS_TOKEN: TOKEN, RATE_LIMIT_MAX: '30' }, tdb);
    const scrape = async () => (await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`)).text;
    const put = (body: Buffer) =>
      request(t.app)
        .put('/import/teachers')
        .set('Authorization', SECRETS.SERVER_SYNC_KEY)
        .attach('importfile', body, 'importfile.zip');
    expect(
      (await put(await streamToBuffer(writeTeachersZip([teacher(1), teacher(2), teacher(3)] as never)))).status,
    ).toBe(200);
    expect((await put(Buffer.from('not a zip'))).status).toBe(400);
    let text = await scrape();
    expect(sample(text, 'lms_imports_total', { kind: 'teachers', outcome: 'finished' })).toBe(1);
    expect(sample(text, 'lms_imports_total', { kind: 'teachers', outcome: 'failed' })).toBe(1);
    expect(sample(text, 'lms_import_rows_written_total', { kind: 'teachers' })).toBe(3);
    expect(sample(text, 'lms_imports_running', { kind: 'teachers' })).toBe(0);
    expect(
      sample(text, 'lms_http_request_duration_seconds_count', {
        route: '/import/teachers',
        method: 'PUT',
        status: '200',
      }),
    ).toBe(1);

    let refused = 0;
    for (let i = 0; i < 35 && refused === 0; i++) if ((await request(t.app).get('/')).status === 429) refused += 1;
    expect(refused).toBe(1);
    text = await scrape();
    expect(sample(text, 'lms_rate_limit_refusals_total', { limiter: 'classroom' })).toBe(1);
    // The pool's ceiling: SQLite's one connection, several on PostgreSQL.
    if (process.env.TEST_DATABASE_URL) expect(sample(text, 'lms_db_pool_max')).toBeGreaterThan(1);
    else expect(sample(text, 'lms_db_pool_max')).toBe(1);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });
});
