import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp as makeClassroomApp } from '../../classroom/test/helpers';
import { ROLE_IDS } from '@lms/shared';
import { createStaff, staffLogin } from './accounts';
import { makeApp, type TestApp } from './helpers';

/** `[{},{},…]` of about `mb` megabytes: cheap to send, expensive to parse into objects. */
const emptyObjects = (mb: number) => Buffer.from(`[${'{},'.repeat(Math.floor((mb * 1024 * 1024) / 3) - 1)}{}]`);

/** Sends a raw body over a real connection (as an attacker would, without supertest buffering the answer). */
async function post(
  app: http.RequestListener,
  path: string,
  body: Buffer,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    return await new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: '127.0.0.1',
          port,
          path,
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'Content-Length': body.length, ...headers },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        },
      );
      // The server may answer and close before the whole body is sent: that is the point.
      req.on('error', (err: NodeJS.ErrnoException) =>
        err.code === 'EPIPE' || err.code === 'ECONNRESET' ? resolve({ status: -1, body: '' }) : reject(err),
      );
      req.end(body);
    });
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}

describe('JSON bodies: 1 MB by default, read only after the rate limiter, identity and guards', () => {
  let central: TestApp;
  let classroom: Awaited<ReturnType<typeof makeClassroomApp>>;
  beforeAll(async () => {
    central = await makeApp({ RATE_LIMIT_MAX: '100000' });
    classroom = await makeClassroomApp({ RATE_LIMIT_MAX: '100000' });
  });
  afterAll(async () => {
    await central.tdb.dispose();
    await classroom.tdb.dispose();
  });

  it.each([
    ['central', '/auth/login'],
    ['classroom', '/auth/login'],
  ])(
    '%s: a 20 MB anonymous body to %s is refused without being parsed; ' +
      'the service still answers and its memory stays bounded',
    async (which, path) => {
      const app = (which === 'central' ? central.app : classroom.app) as unknown as http.RequestListener;
      const body = emptyObjects(20);
      global.gc?.();
      const before = process.memoryUsage().rss;
      for (let i = 0; i < 3; i += 1) {
        const res = await post(app, path, body);
        // 413 when the answer arrives before the upload ends; a reset connection otherwise.
        expect([413, -1]).toContain(res.status);
        if (res.status === 413) expect(JSON.parse(res.body)).toMatchObject({ error: true, data: false });
      }
      // Parsing 20 MB of `{}` used to cost several hundred MB; three refused bodies now cost next to nothing.
      expect(process.memoryUsage().rss - before).toBeLessThan(100 * 1024 * 1024);
      expect((await request(app).get('/')).status).toBe(200);
    },
  );

  it('central: a body over 1 MB to a guarded route without a token gets 401, not a parse', async () => {
    const res = await post(central.app as unknown as http.RequestListener, '/user', emptyObjects(2), {
      Authorization: 'Bearer not-a-token',
    });
    expect([401, -1]).toContain(res.status);
  });

  it('central: the access token may still come in the body field `accesstoken` (contract), ' +
      'read with the default limit', async () => {
    await createStaff(central.tdb.db, { lmsusername: 'body.token@example.org', roleids: [ROLE_IDS.superadmin] });
    const { accessToken } = await staffLogin(central.app, 'body.token@example.org');
    const ok = await request(central.app).post('/user').send({ accesstoken: accessToken });
    // The token was read from the body; the body itself then fails the list's schema (accesstoken is no paging key).
    expect(ok.status).toBe(400);
    expect(ok.body.errormessage).toContain('"accesstoken" is not allowed');
    const anonymous = await request(central.app).post('/user').send({});
    expect(anonymous.status).toBe(401);
    const big = await post(
      central.app as unknown as http.RequestListener,
      '/user',
      Buffer.from(JSON.stringify({ accesstoken: accessToken, pad: 'x'.repeat(2 * 1024 * 1024) })),
    );
    expect([413, -1]).toContain(big.status);
  });
});
