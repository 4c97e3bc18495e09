import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { writeLogZipFromDocument } from '@lms/shared';
import { createSchoolUser, schoolLogin } from './accounts';
import { makeApp, type TestApp } from './helpers';

const BOUNDARY = 'lms-test-boundary';
const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="importfile"; filename="studentlog"\r\nContent-Type: application/zip\r\n\r\n`);
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

async function zipBytes(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of writeLogZipFromDocument([] as never, [])) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('PUT /log/import: concurrent imports are capped, and a stalled upload gives its slot back', () => {
  let t: TestApp;
  let server: http.Server;
  let port: number;
  let auth: string;
  beforeAll(async () => {
    t = await makeApp({ LOG_IMPORT_ENABLED: 'true', MAX_CONCURRENT_IMPORTS: '2', UPLOAD_IDLE_SECONDS: '1', RATE_LIMIT_MAX: '100000' });
    await seedDemoContent(t.tdb.db);
    await createSchoolUser(t.tdb.db, { schoolusername: 'teacher.limits', role: 3, schoolname: DEMO.schoolname });
    auth = `Bearer ${(await schoolLogin(t.app, 'teacher.limits')).accessToken}`;
    server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.tdb.dispose();
  });

  /** Starts an upload that announces `length` bytes and sends `first` of them; resolves with the answer. */
  function upload(length: number, first: Buffer): { answer: Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>; req: http.ClientRequest } {
    const req = http.request({
      host: '127.0.0.1', port, method: 'PUT', path: '/log/import',
      headers: { Authorization: auth, 'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`, 'Content-Length': length },
    });
    const answer = new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? resolve({ status: -1, headers: {}, body: '' }) : reject(err)));
    });
    req.write(first);
    return { answer, req };
  }

  it('answers 429 with Retry-After beyond MAX_CONCURRENT_IMPORTS, 408 to the stalled uploads, then imports again', async () => {
    const zip = await zipBytes();
    const whole = Buffer.concat([head, zip, tail]);
    // Two uploads that send their headers and a few bytes, then stall.
    const stalled = [upload(whole.length + 1000, head), upload(whole.length + 1000, head)];
    await new Promise((r) => setTimeout(r, 200));
    const third = upload(whole.length, whole);
    third.req.end();
    const refused = await third.answer;
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(JSON.parse(refused.body)).toMatchObject({ error: true, data: false });

    const timedOut = await Promise.all(stalled.map((s) => s.answer));
    for (const r of timedOut) expect([408, -1]).toContain(r.status);
    expect(await t.tdb.db('syncs').count({ n: '*' }).first()).toMatchObject({ n: 0 });

    const again = upload(whole.length, whole);
    again.req.end();
    const ok = await again.answer;
    expect(ok.status).toBe(200);
    expect(await t.tdb.db('syncs').count({ n: '*' }).first()).toMatchObject({ n: 1 });
  });
});
