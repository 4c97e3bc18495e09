import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FLEET_PROTOCOL, PROGRESS_KEYS, ROLE_IDS, boxAuthorization, createLogger, newBoxSecret, streamToBuffer,
  writeLogZipFromDocument, type LogDocument,
} from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { seedWorld, type World } from './people-fixtures';
import { makeApp as makeClassroomApp, type TestApp as ClassroomTestApp } from '../../classroom/test/helpers';
import { tokenFor } from '../../classroom/test/auth-helpers';
import { enrol } from '../../classroom/src/fleet/client';
import { saveIdentity } from '../../classroom/src/fleet/identity';
import { startSyncAgent, type SyncAgent } from '../../classroom/src/fleet/agent';

// The up path between the real central and the box's real agent code: results journaled on the box go up in
// pieces through a relay that cuts the link, once before central saw a piece and once after central imported
// one but before its answer came back. Every row arrives exactly once, a piece central acknowledged is never
// sent again, and rows whose times say 1971 or 2031 (a box clock far off) go up like any other.

const quiet = createLogger({ name: 'test', level: 'silent' });
let central: TestApp;
let box: ClassroomTestApp;
let w: World;
let superadmin: string;
const servers: http.Server[] = [];
let relayUrl = '';
/** What the relay does to the n-th piece it sees (1-based); 'pass' otherwise. */
const plan = new Map<number, 'cut-before' | 'drop-answer'>();
let piecesSeen = 0;
const pieceLog: string[] = [];

function listen(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () =>
    resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

/** A relay to central that misbehaves on the pieces the plan names. */
async function relayTo(target: string): Promise<string> {
  const t = new URL(target);
  return listen((req, res) => {
    const isPiece = req.url === '/fleet/box/log';
    const step = isPiece ? plan.get(++piecesSeen) ?? 'pass' : 'pass';
    if (isPiece) pieceLog.push(`${req.headers['x-fleet-first']}-${req.headers['x-fleet-last']}:${step}`);
    if (step === 'cut-before') {
      req.socket.destroy();
      return;
    }
    const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method,
      headers: req.headers }, (answer) => {
      const parts: Buffer[] = [];
      answer.on('data', (c: Buffer) => parts.push(c));
      answer.on('end', () => {
        // Central answered in full; the box never hears it.
        if (step === 'drop-answer') {
          req.socket.destroy();
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        res.end(Buffer.concat(parts));
      });
    });
    up.on('error', () => req.socket.destroy());
    req.pipe(up);
  });
}

async function sameLearnerAtCentral(studentid: string, schooluserid: string) {
  const schoolusername = `l${crypto.randomBytes(4).toString('hex')}`;
  await central.tdb.db('schoolusers').insert({ schooluserid, schoolusername, schooluserpasswordhash: 'x',
    schooluserrole: 4, schoolname: w.schoolA.schoolname });
  await central.tdb.db('students').insert({ studentid, schooluserid, studentfirstname: 'Ama', studentlastname: 'B',
    genderid: 1, city: 'Accra', country: 'Ghana', state: 'GA', schoolname: w.schoolA.schoolname,
    curriculumid: w.curriculum1, curriculumids: JSON.stringify([w.curriculum1]), isactive: true, type: 'offline' });
}

async function writeResults(studentid: string, schooluserid: string, n: number, year: number) {
  for (let i = 0; i < n; i++) {
    const id = crypto.randomUUID();
    const at = new Date(Date.UTC(year, 0, 1 + i, 8)).toISOString();
    await box.tdb.db('studentprogress').insert({ studentprogressid: id, studentid, ispass: i % 2 === 0,
      studentprogressreferenceid: crypto.randomUUID(), starttime: at, endtime: at, progresstype: 1, points: i,
      fullpoints: 10, marks: i, scores: i, resultpercentage: i * 10 });
    await box.tdb.db('studentprogressquestions').insert([0, 1].map((q) => ({ studentprogressid: id,
      studentprogressquestionid: crypto.randomUUID(), tries: q + 1, iscorrect: q === 0,
      referencequestionid: crypto.randomUUID() })));
  }
  await box.tdb.db('rpiuseraccess').insert({ rpiuseraccessid: crypto.randomUUID(), userid: schooluserid,
    logintime: new Date(Date.UTC(year, 5, 1)).toISOString(), ipaddress: '10.0.0.5', status: 1 });
}

const counts = async (db: typeof central.tdb.db, studentid: string) => ({
  results: Number((await db('studentprogress').where({ studentid }).count({ n: '*' }).first())?.n),
  questions: Number((await db('studentprogressquestions as q')
    .join('studentprogress as p', 'p.studentprogressid', 'q.studentprogressid')
    .where('p.studentid', studentid).count({ n: '*' }).first())?.n),
});

let agent: SyncAgent;
let learner: { studentid: string; schooluserid: string };
let boxid: string;

beforeAll(async () => {
  central = await makeApp({ LOGIN_RATE_LIMIT_MAX: '1000' });
  w = await seedWorld(central.tdb.db);
  await createStaff(central.tdb.db, { lmsusername: 'fleet-up@e2e.test', roleids: [ROLE_IDS.superadmin] });
  superadmin = `Bearer ${(await staffLogin(central.app, 'fleet-up@e2e.test')).accessToken}`;
  const centralUrl = await listen(central.app);
  relayUrl = await relayTo(centralUrl);
  box = await makeClassroomApp();
  const user = await tokenFor(box, 4, { schoolname: w.schoolA.schoolname });
  learner = { studentid: user.studentid!, schooluserid: user.schooluserid };
  await sameLearnerAtCentral(learner.studentid, learner.schooluserid);

  const reg = await request(central.app).post('/fleet/boxes').set('Authorization', superadmin)
    .send({ schoolid: w.schoolA.schoolid, name: 'Up box' });
  const secret = newBoxSecret();
  const answer = await enrol(relayUrl, reg.body.data.enrolmentcode as string, { secret, version: '1.0.0' },
    { timeoutMs: 10_000 });
  boxid = answer.boxid;
  await saveIdentity(box.tdb.db, { centralurl: relayUrl, boxid, schoolid: answer.schoolid, secret,
    enrolledat: answer.centraltime });
  agent = startSyncAgent(box.tdb.db, { intervalMs: 60_000, pieceRows: 5, requestTimeoutMs: 10_000,
    minBackoffMs: 60_000, maxBackoffMs: 60_000, dataDir: '/' },
  quiet, { start: false });
});

afterAll(async () => {
  agent?.stop();
  for (const s of servers) await new Promise((r) => s.close(r));
  await central?.tdb.dispose();
  await box?.tdb.dispose();
});

describe('the up path over a link that is cut', () => {
  it('resumes after the last acknowledged piece: every row once, no acknowledged piece sent again', async () => {
    // Written while the box's clock said 1971, then 2031: the journal's counter, not the clock, says what is new.
    await writeResults(learner.studentid, learner.schooluserid, 6, 1971);
    await writeResults(learner.studentid, learner.schooluserid, 6, 2031);
    const onBox = await counts(box.tdb.db, learner.studentid);
    expect(onBox).toEqual({ results: 12, questions: 24 });
    const waiting = Number((await box.tdb.db('fleetchanges').count({ n: '*' }).first())?.n);
    expect(waiting).toBe(12 + 24 + 2);

    // The second piece never reaches central; the run stops with the first acknowledged.
    plan.set(2, 'cut-before');
    await expect(agent.syncNow()).rejects.toThrow(/could not be reached/);
    const afterCut = await box.tdb.db('fleetidentity').first('ackedseq', 'lasterror');
    expect(Number(afterCut.ackedseq)).toBe(5);
    expect(afterCut.lasterror).toMatch(/could not be reached/);
    const atCentral1 = await central.tdb.db('boxes').where({ boxid }).first('ackedseq');
    expect(Number(atCentral1.ackedseq)).toBe(5);

    // Next run: central imports the piece, but its answer is lost on the way back.
    plan.set(3, 'drop-answer');
    await expect(agent.syncNow()).rejects.toThrow();
    expect(Number((await box.tdb.db('fleetidentity').first('ackedseq')).ackedseq)).toBe(5);
    expect(Number((await central.tdb.db('boxes').where({ boxid }).first('ackedseq')).ackedseq)).toBe(10);

    // The link holds: the contact tells the box central has up to 10, so 6-10 is not sent again.
    const done = await agent.syncNow();
    expect(done?.ackedseq).toBe(waiting);
    expect(pieceLog.slice(0, 4)).toEqual(['1-5:pass', '6-10:cut-before', '6-10:drop-answer', '11-15:pass']);
    expect(pieceLog.filter((p) => p.startsWith('6-10'))).toHaveLength(2);
    expect(new Set(pieceLog.map((p) => p.split(':')[0])).size).toBe(Math.ceil(waiting / 5));
    expect(await counts(central.tdb.db, learner.studentid)).toEqual(onBox);
    // The rows are the box's, field for field.
    const mine = await box.tdb.db('studentprogress').where({ studentid: learner.studentid })
      .orderBy('studentprogressid').select('studentprogressid', 'marks', 'points', 'starttime');
    const theirs = await central.tdb.db('studentprogress').where({ studentid: learner.studentid })
      .orderBy('studentprogressid').select('studentprogressid', 'marks', 'points', 'starttime');
    const norm = (rows: Array<Record<string, unknown>>) => rows.map((r) => ({ ...r,
      starttime: new Date(r.starttime as string).toISOString() }));
    expect(norm(theirs)).toEqual(norm(mine));
    expect(Number((await central.tdb.db('rpiuseraccess').where({ userid: learner.schooluserid })
      .count({ n: '*' }).first())?.n)).toBe(2);
    // One sync row per piece central imported: none twice.
    const syncs = Number((await central.tdb.db('syncs').where({ created_by: boxid }).count({ n: '*' }).first())?.n);
    expect(syncs).toBe(Math.ceil(waiting / 5));
    // The acknowledged journal is gone from the box; nothing waits.
    expect(Number((await box.tdb.db('fleetchanges').count({ n: '*' }).first())?.n)).toBe(0);
    // The cut is no longer the box's last error (what stands is the down path's refusal of a package that
    // drops the box's own demo content: this central holds none of it).
    expect((await box.tdb.db('fleetidentity').first('lasterror')).lasterror ?? '').not.toMatch(/could not be reached/);
    expect(await agent.syncNow()).toMatchObject({ pieces: 0, entries: 0, ackedseq: waiting });
  }, 60_000);

  it('answers a piece central has already with "already have it", importing nothing', async () => {
    const before = Number((await central.tdb.db('syncs').count({ n: '*' }).first())?.n);
    const identity = await box.tdb.db('fleetidentity').first();
    const res = await request(central.app).post('/fleet/box/log')
      .set('Authorization', boxAuthorization(boxid, identity.secret))
      .set('X-Fleet-First', '1').set('X-Fleet-Last', '5')
      .attach('importfile', Buffer.from('not even a zip'), 'piece.zip');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ ackedseq: Number(identity.ackedseq), already: true });
    expect(Number((await central.tdb.db('syncs').count({ n: '*' }).first())?.n)).toBe(before);
    const bad = await request(central.app).post('/fleet/box/log')
      .set('Authorization', boxAuthorization(boxid, identity.secret))
      .set('X-Fleet-First', '9').set('X-Fleet-Last', '3')
      .attach('importfile', Buffer.from('x'), 'piece.zip');
    expect(bad.status).toBe(400);
    // A staff token is no box.
    expect((await request(central.app).post('/fleet/box/log').set('Authorization', superadmin)
      .set('X-Fleet-First', '1').set('X-Fleet-Last', '1')).status).toBe(401);
    expect(FLEET_PROTOCOL).toBe(1);
  });

  it("imports a piece for the box's own school only, and refuses an oversize piece", async () => {
    const identity = await box.tdb.db('fleetidentity').first();
    const acked = Number(identity.ackedseq);
    // A learner of school B, known at central: a box of school A cannot write its results.
    const other = { studentid: crypto.randomUUID(), schooluserid: crypto.randomUUID() };
    await central.tdb.db('schoolusers').insert({ schooluserid: other.schooluserid, schoolusername: 'learnerOfB',
      schooluserpasswordhash: 'x', schooluserrole: 4, schoolname: w.schoolB.schoolname });
    await central.tdb.db('students').insert({ studentid: other.studentid, schooluserid: other.schooluserid,
      studentfirstname: 'Oumar', studentlastname: 'K', genderid: 1, city: 'Bamako', country: 'Mali', state: 'B',
      schoolname: w.schoolB.schoolname, curriculumid: w.curriculum1, curriculumids: JSON.stringify([w.curriculum1]),
      isactive: true, type: 'offline' });
    const resultid = crypto.randomUUID();
    const doc = { log: { result: [{ studentprogressid: resultid, studentid: other.studentid, ispass: true,
      studentprogressreferenceid: crypto.randomUUID(), starttime: '2026-01-01T00:00:00.000Z',
      endtime: '2026-01-01T00:01:00.000Z', progresstype: 1, points: 1, fullpoints: 1, marks: 1, scores: 1,
      resultpercentage: 100, studentprogressquestions: [] }],
    progress: Object.fromEntries(PROGRESS_KEYS.map((k) => [k, []])), access: [] } } as unknown as LogDocument;
    const zip = await streamToBuffer(writeLogZipFromDocument(doc));
    const res = await request(central.app).post('/fleet/box/log')
      .set('Authorization', boxAuthorization(boxid, identity.secret))
      .set('X-Fleet-First', String(acked + 1)).set('X-Fleet-Last', String(acked + 1))
      .attach('importfile', zip, 'piece.zip');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ ackedseq: acked + 1, already: false, refused: 1 });
    expect(await central.tdb.db('studentprogress').where({ studentprogressid: resultid }).first()).toBeUndefined();

    const small = await makeApp({ MAX_UPLOAD_MB: '1' }, central.tdb);
    const syncsBefore = Number((await central.tdb.db('syncs').count({ n: '*' }).first())?.n);
    const big = await request(small.app).post('/fleet/box/log')
      .set('Authorization', boxAuthorization(boxid, identity.secret))
      .set('X-Fleet-First', String(acked + 2)).set('X-Fleet-Last', String(acked + 2))
      .attach('importfile', crypto.randomBytes(2 * 1024 * 1024), 'piece.zip');
    expect(big.status).toBe(413);
    expect(Number((await central.tdb.db('boxes').where({ boxid }).first('ackedseq')).ackedseq)).toBe(acked + 1);
    expect(Number((await central.tdb.db('syncs').count({ n: '*' }).first())?.n)).toBe(syncsBefore);
  });
});
