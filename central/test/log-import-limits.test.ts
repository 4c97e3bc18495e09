import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO, seedDemoContent } from '@lms/db';
import { writeLogZipFromDocument } from '@lms/shared';
import { createSchoolUser, schoolLogin } from './accounts';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { createTurns } from '../src/http/turns';
import { ImportSlots } from '../src/areas/log/slots';

const BOUNDARY = 'lms-test-boundary';
const head = Buffer.from(
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="importfile"; ` +
    `filename="studentlog"\r\nContent-Type: application/zip\r\n\r\n`,
);
const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);

async function zipBytes(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of writeLogZipFromDocument([] as never, [])) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('PUT /log/import: slots are shared fairly, and a stalled upload holds none', () => {
  let t: TestApp;
  let server: http.Server;
  let port: number;
  const auth: Record<'a' | 'b' | 'c', string> = { a: '', b: '', c: '' };
  beforeAll(async () => {
    t = await makeApp({
      LOG_IMPORT_ENABLED: 'true',
      MAX_CONCURRENT_IMPORTS: '2',
      UPLOAD_IDLE_SECONDS: '1',
      RATE_LIMIT_MAX: '100000',
    });
    await seedDemoContent(t.tdb.db);
    for (const k of ['a', 'b', 'c'] as const) {
      await createSchoolUser(t.tdb.db, { schoolusername: `teacher.limits.${k}`, role: 3, schoolname: DEMO.schoolname });
      auth[k] = `Bearer ${(await schoolLogin(t.app, `teacher.limits.${k}`)).accessToken}`;
    }
    server = http.createServer(t.app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await t.tdb.dispose();
  });

  type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string };
  /** Starts an upload as `who` that announces `length` bytes and sends `first` of them; resolves with the answer. */
  function upload(
    who: keyof typeof auth,
    length: number,
    first: Buffer,
  ): { answer: Promise<Answer>; req: http.ClientRequest } {
    const req = http.request({
      host: '127.0.0.1',
      port,
      method: 'PUT',
      path: '/log/import',
      headers: {
        Authorization: auth[who],
        'Content-Type': `multipart/form-data; boundary=${BOUNDARY}`,
        'Content-Length': length,
      },
    });
    const answer = new Promise<Answer>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => { body += c.toString(); });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      });
      req.on('error', (err: NodeJS.ErrnoException) =>
        err.code === 'ECONNRESET' || err.code === 'EPIPE'
          ? resolve({ status: -1, headers: {}, body: '' })
          : reject(err),
      );
    });
    req.write(first);
    return { answer, req };
  }
  const syncs = async () => Number((await t.tdb.db('syncs').count({ n: '*' }).first())?.n);

  it('one account trickling uploads holds its own turn only: its second gets 429, ' +
      'every other account imports meanwhile', async () => {
    const zip = await zipBytes();
    const whole = Buffer.concat([head, zip, tail]);
    // Account a trickles one upload: a byte every 300 ms, never silent long enough for the 1 s idle limit.
    const trickle = upload('a', whole.length + 1000, head);
    const drip = setInterval(() => trickle.req.write(Buffer.from(' ')), 300);
    try {
      await new Promise((r) => setTimeout(r, 200));
      // A second upload of the same account is refused at once, whole or not.
      const second = upload('a', whole.length + 1000, head);
      const refused = await second.answer;
      expect(refused.status).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(JSON.parse(refused.body)).toMatchObject({ error: true, data: false });
      second.req.destroy();

      // With MAX_CONCURRENT_IMPORTS=2 and a's upload still arriving, two other accounts import at once.
      const others = [upload('b', whole.length, whole), upload('c', whole.length, whole)];
      for (const o of others) o.req.end();
      expect((await Promise.all(others.map((o) => o.answer))).map((r) => r.status)).toEqual([200, 200]);
      expect(await syncs()).toBe(2);
    } finally {
      clearInterval(drip);
    }
    // Once it stops sending, a's upload is given up (408) and nothing of it is written.
    expect([408, -1]).toContain((await trickle.answer).status);
    expect(await syncs()).toBe(2);

    const again = upload('a', whole.length, whole);
    again.req.end();
    expect((await again.answer).status).toBe(200);
    expect(await syncs()).toBe(3);
  });
});

describe('ImportSlots', () => {
  it('grants the import slots in arrival order once free, ' +
      'and answers 429 to an upload that waited too long', async () => {
    const slots = new ImportSlots(1, 200);
    const first = await slots.slot();
    const order: string[] = [];
    const second = slots.slot().then((release) => { order.push('second'); return release; });
    const third = slots.slot().then((release) => { order.push('third'); return release; });
    expect(slots.state).toMatchObject({ running: 1, waiting: 2 });
    first();
    first(); // giving back twice frees one slot only
    (await second)();
    (await third)();
    expect(order).toEqual(['second', 'third']);
    expect(slots.state).toMatchObject({ running: 0, waiting: 0 });

    const held = await slots.slot();
    const late = slots.slot();
    await expect(late).rejects.toMatchObject({ status: 429 });
    expect(slots.state).toMatchObject({ running: 1, waiting: 0 });
    held();
    expect(slots.state.running).toBe(0);
  });

  it('admits one turn per account until it is given back', async () => {
    const turns = createTurns({ name: 'test', limit: 1, logger: silentLogger });
    const a = await turns.take('a');
    expect(a).toBeTypeOf('function');
    expect(await turns.take('a')).toBeUndefined();
    const b = await turns.take('b');
    a!();
    a!(); // giving back twice frees one turn only
    const again = await turns.take('a');
    expect(again).toBeTypeOf('function');
    expect(await turns.take('a')).toBeUndefined();
    again!();
    b!();
  });
});
