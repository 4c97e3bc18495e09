import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import knexFactory, { type Knex } from 'knex';
import type { TestDatabase } from '@lms/db';
import { ROLE_IDS } from '@lms/shared';
import { loadConfig } from '../src/config';
import { openReplica } from '../src/db';
import { serviceRoutes } from '../src/areas';
import { lsnOf, stalenessOf, type ReplicaReads } from '../src/replica';
import { closedPort, makeApp, silentLogger, testDatabase, type TestApp } from './helpers';
import { createStaff, staffLogin } from './accounts';
import { sample } from './metrics-text';
import { W, addAttempts, addLearners, seedWorld, type Learner } from './report-data';

/**
 * The reports on a PostgreSQL streaming replica (DATABASE_REPLICA_URL): what they read lags the primary, a
 * replica behind its bound or out of reach sends them back to the primary, and nothing else ever reads or
 * writes there. The replica is a real one, made by scripts/ci/ensure-pg-replica.sh (TEST_DATABASE_REPLICA_URL);
 * the test database is made on the primary and reaches the replica by replication.
 */
const replicaUrl = process.env.TEST_DATABASE_REPLICA_URL;
const onPostgres = !!process.env.TEST_DATABASE_URL && process.env.LMS_TEST_PASS !== 'sqlite';
const skipped = !onPostgres
  ? 'PostgreSQL only (this is the SQLite pass, or TEST_DATABASE_URL is unset)'
  : !replicaUrl
    ? 'TEST_DATABASE_REPLICA_URL is unset (scripts/ci/ensure-pg-replica.sh makes a replica and prints it)'
    : undefined;
if (process.env.CI && onPostgres && !replicaUrl) {
  throw new Error('the replica test needs TEST_DATABASE_REPLICA_URL in CI (scripts/ci/ensure-services.sh gives it)');
}

const PRIMARY = 'postgres://lms:secret@db.internal:5432/lms';

describe('DATABASE_REPLICA_URL and REPLICA_MAX_LAG_SECONDS', () => {
  const load = (env: Record<string, string>) => () => loadConfig({ NODE_ENV: 'test', ...env });

  it('are refused with SQLite, with the primary\'s own server and database, and with no PostgreSQL URL', () => {
    expect(load({ DATABASE_URL: 'sqlite:data/x.sqlite', DATABASE_REPLICA_URL: 'postgres://r:5432/lms' }))
      .toThrow('DATABASE_REPLICA_URL needs a PostgreSQL DATABASE_URL');
    // The default DATABASE_URL is SQLite too.
    expect(load({ DATABASE_REPLICA_URL: 'postgres://r:5432/lms' })).toThrow('DATABASE_REPLICA_URL needs a PostgreSQL');
    const sameDatabase = [
      PRIMARY, 'postgresql://reader:other@DB.internal/lms', 'postgres://lms@db.internal:5432/lms?sslmode=require',
    ];
    for (const same of sameDatabase) {
      expect(load({ DATABASE_URL: PRIMARY, DATABASE_REPLICA_URL: same }))
        .toThrow('names the same server and database as DATABASE_URL');
    }
    expect(load({ DATABASE_URL: PRIMARY, DATABASE_REPLICA_URL: 'sqlite:data/y.sqlite' }))
      .toThrow('must start with postgres://');
    expect(load({ DATABASE_URL: PRIMARY, DATABASE_REPLICA_URL: 'postgres://x', REPLICA_MAX_LAG_SECONDS: '0' }))
      .toThrow('REPLICA_MAX_LAG_SECONDS');
  });

  it('name the replica and the bound (30 s by default); unset, there is no replica', () => {
    const replica = 'postgres://lms:secret@db-replica.internal:5432/lms';
    expect(loadConfig({ NODE_ENV: 'test', DATABASE_URL: PRIMARY, DATABASE_REPLICA_URL: replica }).replica)
      .toEqual({ url: replica, maxLagSeconds: 30, checkEveryMs: 5000 });
    // The same server, another port: another PostgreSQL (the replica of the tests is one).
    const onPort = 'postgres://lms:secret@db.internal:5433/lms';
    const bounded = { DATABASE_URL: PRIMARY, DATABASE_REPLICA_URL: onPort, REPLICA_MAX_LAG_SECONDS: '5' };
    expect(loadConfig({ NODE_ENV: 'test', ...bounded }).replica).toMatchObject({ url: onPort, maxLagSeconds: 5 });
    expect(loadConfig({ NODE_ENV: 'test', DATABASE_URL: PRIMARY }).replica).toBeUndefined();
  });

  it('the lag is the smaller bound: the newest WAL mark of the primary replayed, or the age of the last commit', () => {
    const now = 1_000_000;
    const marks = [
      { at: now - 20_000, lsn: lsnOf('0/100') },
      { at: now - 10_000, lsn: lsnOf('0/200') },
      { at: now - 100, lsn: lsnOf('0/200') },
    ];
    // An idle primary: nothing committed for an hour, its WAL position unchanged, all of it replayed.
    expect(stalenessOf(marks, lsnOf('0/200'), 3600, now)).toBeCloseTo(0.1);
    // Replay stopped at the first mark, its last commit long ago.
    expect(stalenessOf(marks, lsnOf('0/1A0'), 3600, now)).toBeCloseTo(20);
    // A busy primary whose position moved on since every mark: the last replayed commit is a second old.
    expect(stalenessOf(marks, lsnOf('0/FF'), 1, now)).toBe(1);
    expect(stalenessOf(marks, lsnOf('0/FF'), null, now)).toBeUndefined();
    expect(lsnOf('16/B374D848')).toBe(0x16B374D848n);
  });

  it('only report routes that read what others wrote are declared to read from the replica', () => {
    const onReplica = serviceRoutes.filter((r) => r.reads === 'replica');
    expect(onReplica.length).toBeGreaterThanOrEqual(20);
    for (const r of onReplica) expect(`${r.method} ${r.path}`).toMatch(/^(GET|POST) \/report\//);
    // The online reports ask the classroom server; they read nothing of central's database.
    expect(onReplica.filter((r) => r.path.includes('/online'))).toEqual([]);
    expect(onReplica.map((r) => r.path)).toEqual(expect.arrayContaining([
      '/report/studentlastcompletedquiz', '/report/studentlastcompletedquiz/download', '/report/student-grade-progress',
    ]));
  });
});

const METRICS_TOKEN = 'replica-test-metrics-token-0123456789abcdef';

describe.skipIf(!!skipped)(`reports on a streaming replica${skipped ? ` (skipped: ${skipped})` : ''}`, () => {
  let tdb: TestDatabase;
  /** A superuser connection to the replica: pauses and resumes its replay. */
  let replicaAdmin: Knex;
  const opened: ReplicaReads[] = [];
  let ben: Learner;
  let superAuth: string;

  /** The replica's URL in the test database's schema. */
  const replicaOfTest = (url = replicaUrl!): string => {
    const u = new URL(url);
    u.searchParams.set('options', `-c search_path=${tdb.target.schema}`);
    return u.toString();
  };

  /** An app whose reports may read from the replica at `url`, with its replica checked once (no timer). */
  async function appOnReplica(env: Record<string, string> = {}, url = replicaOfTest()) {
    const all = { DATABASE_URL: tdb.url, DATABASE_REPLICA_URL: url, METRICS_TOKEN, RATE_LIMIT_MAX: '100000', ...env };
    const config = loadConfig({ NODE_ENV: 'test', RPI_CLOUD: 'http://127.0.0.1:9', ...all });
    const replica = openReplica(config, tdb.db, silentLogger)!;
    opened.push(replica);
    const queries: string[] = [];
    replica.pool.on('query', (q: { sql: string }) => queries.push(q.sql));
    await replica.check();
    const t: TestApp = await makeApp(all, tdb, { replica });
    return { ...t, replica, queries };
  }

  /** Waits until the replica has replayed all the primary has written so far. */
  async function caughtUp(): Promise<void> {
    const { rows: [{ lsn }] } = await tdb.db.raw('select pg_current_wal_flush_lsn()::text as lsn');
    for (let i = 0; i < 200; i += 1) {
      const { rows: [{ behind }] } = await replicaAdmin.raw(
        'select pg_wal_lsn_diff(?::pg_lsn, pg_last_wal_replay_lsn()) > 0 as behind', [lsn]);
      if (!behind) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('the replica did not catch up within 10 s');
  }

  /** Runs `body` with the replica's replay paused; replay always resumes. */
  async function paused(body: () => Promise<void>): Promise<void> {
    await replicaAdmin.raw('select pg_wal_replay_pause()');
    try {
      await body();
    } finally {
      await replicaAdmin.raw('select pg_wal_replay_resume()');
    }
  }

  const sunrise = { pageindex: 1, pagesize: 10, filter: [{ key: 'standard', value: W.class.sunrise }] };
  const currentLevel = (app: TestApp['app'], path = '/report/studentlastcompletedquiz') =>
    request(app).post(path).set('Authorization', superAuth).send(sunrise);
  /** The quiz ben reached last, as the current-level report shows it. */
  const bensQuiz = async (app: TestApp['app']): Promise<string | undefined> => {
    const res = await currentLevel(app);
    expect(res.status).toBe(200);
    const row = (res.body.data.data as Array<Record<string, any>>).find((r) => r.schooluser.schoolusername === 'ben');
    return row?.laststudentprogress?.studentprogressreferenceid;
  };
  const metrics = async (app: TestApp['app']) =>
    (await request(app).get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)).text;
  /** A result of ben's at a lesson quiz, written on the primary. */
  const result = (quiz: string, ispass: boolean, pct: number, at: string) =>
    addAttempts(tdb.db, [{ studentid: ben.studentid, reference: quiz, ispass, pct, at }]);

  beforeAll(async () => {
    tdb = await testDatabase();
    replicaAdmin = knexFactory({ client: 'pg', connection: replicaUrl, pool: { min: 0, max: 1 } });
    // A replica left paused by an interrupted run would hold every test here.
    await replicaAdmin.raw('select pg_wal_replay_resume()');
    await seedWorld(tdb.db);
    [ben] = await addLearners(tdb.db, [{ school: 'sunrise', username: 'ben', created_at: '2026-02-01T00:00:00Z' }]);
    await result(W.quiz.ls1, false, 70, '2026-06-01T08:00:00Z');
    await createStaff(tdb.db, { lmsusername: 'super@replica.test', roleids: [ROLE_IDS.superadmin] });
    const plain = await makeApp({}, tdb);
    superAuth = `Bearer ${(await staffLogin(plain.app, 'super@replica.test')).accessToken}`;
    await caughtUp();
  });
  afterAll(async () => {
    await replicaAdmin?.raw('select pg_wal_replay_resume()').catch(() => undefined);
    for (const r of opened) await r.stop();
    await replicaAdmin?.destroy();
    await tdb?.dispose();
  });

  it('the current-level report reads the replica: a result written on the primary shows once replayed', async () => {
    const t = await appOnReplica();
    expect(t.replica.snapshot()).toMatchObject({ inUse: true, reason: undefined });
    expect(await bensQuiz(t.app)).toBe(W.quiz.ls1);
    await paused(async () => {
      await result(W.quiz.ls2, true, 90, '2026-06-02T08:00:00Z');
      expect(await tdb.db('studentprogress').where({ studentid: ben.studentid }).count({ n: '*' }).first())
        .toEqual({ n: 2 });
      const before = t.queries.length;
      // The replica has not replayed the new result: the report shows the old one.
      expect(await bensQuiz(t.app)).toBe(W.quiz.ls1);
      expect(t.queries.length).toBeGreaterThan(before);
    });
    await caughtUp();
    expect(await bensQuiz(t.app)).toBe(W.quiz.ls2);
    // Its CSV download reads there too.
    const csv = await currentLevel(t.app, '/report/studentlastcompletedquiz/download');
    expect(csv.status).toBe(200);
    expect(t.queries.some((q) => /^declare lms_rows_/i.test(q))).toBe(true);
    expect(sample(await metrics(t.app), 'lms_replica_in_use')).toBe(1);
    expect(sample(await metrics(t.app), 'lms_replica_lag_seconds')).toBeLessThan(30);
    await caughtUp();
  });

  it('a replica beyond REPLICA_MAX_LAG_SECONDS: reports read the primary, counted; /readyz names it', async () => {
    const t = await appOnReplica({ REPLICA_MAX_LAG_SECONDS: '1' });
    expect(t.replica.snapshot().inUse).toBe(true);
    await paused(async () => {
      await result(W.quiz.ls3, true, 95, '2026-06-03T08:00:00Z');
      // Within the bound the report still reads the replica, which has not replayed the result.
      expect(await bensQuiz(t.app)).toBe(W.quiz.ls2);
      await new Promise((r) => setTimeout(r, 1500));
      await t.replica.check();
      expect(t.replica.snapshot()).toMatchObject({ inUse: false, reason: 'lagging' });
      expect(t.replica.snapshot().lagSeconds).toBeGreaterThan(1);
      const before = t.queries.length;
      expect(await bensQuiz(t.app)).toBe(W.quiz.ls3);
      expect(t.queries.length).toBe(before);
      const text = await metrics(t.app);
      expect(sample(text, 'lms_replica_fallback_reads_total', { reason: 'lagging' })).toBe(1);
      expect(sample(text, 'lms_replica_in_use')).toBe(0);
      expect(sample(text, 'lms_replica_lag_seconds')).toBeGreaterThan(1);
      const ready = await request(t.app).get('/readyz');
      expect([ready.status, ready.body]).toEqual([200, { status: 'ready', degraded: ['replica'] }]);
    });
    await caughtUp();
    await t.replica.check();
    expect(t.replica.snapshot()).toMatchObject({ inUse: true, reason: undefined });
    const before = t.queries.length;
    expect(await bensQuiz(t.app)).toBe(W.quiz.ls3);
    expect(t.queries.length).toBeGreaterThan(before);
    expect((await request(t.app).get('/readyz')).body).toEqual({ status: 'ready' });
  });

  it('a replica out of reach: reports answer from the primary, /readyz stays 200 naming it', async () => {
    const down = new URL(replicaOfTest());
    down.port = String(await closedPort());
    const t = await appOnReplica({}, down.toString());
    expect(t.replica.snapshot()).toMatchObject({ inUse: false, reason: 'unreachable', lagSeconds: undefined });
    await paused(async () => {
      await result(W.quiz.ls4, true, 99, '2026-06-04T08:00:00Z');
      expect(await bensQuiz(t.app)).toBe(W.quiz.ls4);
    });
    const csv = await currentLevel(t.app, '/report/studentlastcompletedquiz/download');
    expect(csv.status).toBe(200);
    const ready = await request(t.app).get('/readyz');
    expect([ready.status, ready.body]).toEqual([200, { status: 'ready', degraded: ['replica'] }]);
    const text = await metrics(t.app);
    expect(sample(text, 'lms_replica_fallback_reads_total', { reason: 'unreachable' })).toBe(2);
    expect(sample(text, 'lms_replica_lag_seconds')).toBeNaN();
    await caughtUp();
  });

  it('a write route, and the read of what it wrote, never go to the replica', async () => {
    const t = await appOnReplica();
    expect(t.replica.snapshot().inUse).toBe(true);
    await paused(async () => {
      const before = t.queries.length;
      const created = await request(t.app).post('/country/create').set('Authorization', superAuth)
        .send({ countryname: 'Uganda', expectedusage: 12 });
      expect(created.status).toBe(200);
      const id = created.body.data.countryid as string;
      // Read back at once, while the replica replays nothing: the primary answers.
      const read = await request(t.app).get(`/country/${id}`).set('Authorization', superAuth);
      expect([read.status, read.body.data?.countryname]).toEqual([200, 'Uganda']);
      const renamed = await request(t.app).put(`/country/${id}`).set('Authorization', superAuth)
        .send({ countryname: 'Uganda Rep' });
      expect(renamed.status).toBe(200);
      expect(t.queries.length).toBe(before);
      expect(await tdb.db('countries').where({ countryid: id }).first()).toMatchObject({ countryname: 'Uganda Rep' });
    });
    await caughtUp();
  });
});
