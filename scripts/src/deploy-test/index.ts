/**
 * `make deploy-test`: the operator's kit in deploy/ run on one machine, as processes on loopback. Caddy
 * (deploy/Caddyfile, with `tls internal`) and HAProxy (deploy/haproxy.cfg) in front of two central instances
 * (started as
 * deploy/systemd/lms-central@.service starts them, with deploy/central.env.example's settings) and one
 * classroom server, on PostgreSQL, Redis and an S3-compatible store (s3rver). Everything goes through Caddy
 * over TLS. Write traffic (log imports by two teachers, enrolment, sign-ins, quiz submissions) runs through
 * the proxies while one instance is killed, the object store stops, and the instances restart; afterwards
 * every acknowledged write is looked up in the databases. Prints a table of the checks and exits 1 when any
 * failed.
 *
 * Needs DEPLOY_TEST_DATABASE_URL (or TEST_DATABASE_URL): a PostgreSQL role allowed to create databases;
 * DEPLOY_TEST_REDIS_URL (or TEST_REDIS_URL); `caddy` and `haproxy` on the PATH (scripts/ci/ensure-caddy.sh,
 * scripts/ci/ensure-haproxy.sh).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { DEMO_IDS } from '@lms/shared';
import { repoRoot } from '@lms/db';
import {
  anyCheckFailed, check, client, exitWith, freePort, lastAnswer, mustRun, plain, printTable, readEnvFile,
  redisOfRun, run, s3rverArgv, say, secret, sleep, start, stopChildren, waiter, type Proc,
} from '../kit-test/common';
import { startProxies, syncLog } from '../kit-test/proxies';
import { buildRelease, newestRelease, removeRelease, type Release } from './release';
import {
  describeFailures, describeTraffic, multipart, newLedger, startTraffic, type Send, type Traffic,
} from './traffic';

// A process that exits ends the wait at once, and a wait that runs out says what the service last answered.
const waitFor = waiter({ every: 100, fatal: /exited/, quoteLastAnswer: true });
const plainGet = async (port: number, p: string) => (await plain(port, p)).status;
// A failed CLI run is named by its script and command (not node's path) and quotes the start of what it said.
const cli = { named: [1, 3], quoted: 400 } as const;

/** The Environment= lines and the ExecStart= of a systemd unit, with %i replaced. */
function readUnit(file: string, instance: string): { env: Record<string, string>; argv: string[]; envFile: string } {
  const env: Record<string, string> = {};
  let argv: string[] = [];
  let envFile = '';
  for (const raw of fs.readFileSync(file, 'utf8').split('\n')) {
    const line = raw.trim().replace(/%i/g, instance);
    if (line.startsWith('Environment=')) {
      const [k, ...v] = line.slice('Environment='.length).split('=');
      env[k] = v.join('=');
    } else if (line.startsWith('ExecStart=')) {
      argv = line.slice('ExecStart='.length).split(/\s+/);
    } else if (line.startsWith('EnvironmentFile=')) {
      envFile = line.slice('EnvironmentFile='.length);
    }
  }
  return { env, argv, envFile };
}

async function main(): Promise<number> {
  const adminUrl = process.env.DEPLOY_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const redisBase = process.env.DEPLOY_TEST_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (!adminUrl || !redisBase) {
    process.stderr.write(
      'deploy-test needs DEPLOY_TEST_DATABASE_URL (or TEST_DATABASE_URL) and DEPLOY_TEST_REDIS_URL ' +
        '(or TEST_REDIS_URL); `make deploy-test` sets them\n',
    );
    return 2;
  }
  const deploy = path.join(repoRoot, 'deploy');
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-deploy-test-'));
  const logs = path.join(tmp, 'logs');
  await fsp.mkdir(logs);
  const tag = `lms_dt_${crypto.randomBytes(4).toString('hex')}`;
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  const dbUrl = (name: string) => { const u = new URL(adminUrl); u.pathname = `/${name}`; return u.toString(); };
  const node = process.execPath;
  let failed = false;
  const ports = {
    central: [await freePort(), await freePort()], classroom: await freePort(), s3: await freePort(),
    site: await freePort(), classroomSite: await freePort(), http: await freePort(),
    haproxy: { central: await freePort(), classroom: await freePort(), stats: await freePort() },
  };

  try {
    // ---- the machine: databases, S3, Caddy's certificates ------------------------------------------------
    await admin.raw(`CREATE DATABASE ${tag}_central`);
    await admin.raw(`CREATE DATABASE ${tag}_classroom`);
    const s3rver = s3rverArgv(tmp, ports.s3);
    let s3 = start('s3rver', s3rver, process.env, logs, tmp);
    const redisUrl = redisOfRun(redisBase);

    const centralEnv: Record<string, string> = {
      ...readEnvFile(path.join(deploy, 'central.env.example')),
      JWT_SECRET: secret(), APPLICATION_API_KEY: secret(), SERVER_SYNC_KEY: secret(), RPI_SECRET: secret(),
      DATABASE_URL: dbUrl(`${tag}_central`),
      S3_ENDPOINT: `http://127.0.0.1:${ports.s3}`, S3_ACCESS_KEY: 'S3RVER', S3_SECRET_KEY: 'S3RVER',
      // s3rver takes only its own fixed key, far below the rule for an issued key.
      ALLOW_WEAK_S3_SECRET_KEY: '1',
      REDIS_URL: redisUrl,
      PUBLIC_URL: `https://localhost:${ports.site}`,
      UI_URL: `https://localhost:${ports.site}`,
      RPI_CLOUD: `https://localhost:${ports.classroomSite}`,
      // One client address makes every request of the load loops: the per-address limit would count them all.
      RATE_LIMIT_MAX: '1000000',
      METRICS_TOKEN: secret(),
      LOG_LEVEL: 'info',
    };
    const classroomEnv: Record<string, string> = {
      ...readEnvFile(path.join(deploy, 'classroom.env.example')),
      JWT_SECRET: secret(), SERVER_SYNC_KEY: centralEnv.SERVER_SYNC_KEY,
      DATABASE_URL: dbUrl(`${tag}_classroom`),
      RPI_PORT: String(ports.classroom),
      MEDIA_DIR: path.join(tmp, 'media'), LOG_DIR: path.join(tmp, 'classroom-logs'),
      REDIS_URL: redisUrl, RATE_LIMIT_MAX: '1000000', LOG_LEVEL: 'info',
    };
    const envOf = (e: Record<string, string>) => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, ...e });
    const centralCli = (args: string[], extra: Record<string, string> = {}, root = repoRoot) =>
      mustRun([node, 'central/dist/cli.js', ...args], envOf({ ...centralEnv, ...extra }), { ...cli, cwd: root });
    const classroomCli = (args: string[], extra: Record<string, string> = {}, root = repoRoot) =>
      mustRun([node, 'classroom/dist/cli.js', ...args], envOf({ ...classroomEnv, ...extra }), { ...cli, cwd: root });

    // The previous release, built from git: the kit starts on it and is upgraded to this tree under traffic.
    let release: Release | undefined;
    let noRelease = '';
    await check('the previous release, built from git', async () => {
      const found = await newestRelease(repoRoot);
      if (typeof found === 'string') {
        noRelease = found;
        return `none: ${found}; the upgrade below restarts this tree's build`;
      }
      const t0 = Date.now();
      const built = await buildRelease(repoRoot, found, path.join(tmp, 'release'));
      release = built;
      return (
        `${found.name} (${found.commit.slice(0, 7)}) checked out and built in ` +
        `${((Date.now() - t0) / 1000).toFixed(0)} s, ${built.how}`
      );
    });
    // Where each service's running code comes from: the release until the upgrade, this tree after it.
    const codeOf = {
      central: [release?.root ?? repoRoot, release?.root ?? repoRoot],
      classroom: release?.root ?? repoRoot,
    };

    const unitFile = path.join(deploy, 'systemd', 'lms-central@.service');
    const centrals: Proc[] = [];
    const startCentral = (i: number) => {
      const unit = readUnit(unitFile, String(ports.central[i]));
      const argv = unit.argv.map((a) => (a === '/usr/bin/node' ? node : a));
      centrals[i] = start(
        `central-${ports.central[i]}`,
        argv,
        envOf({ ...centralEnv, ...unit.env }),
        logs,
        codeOf.central[i],
      );
    };
    const ready = (port: number, proc?: Proc) => waitFor(`the instance on ${port}`, 30_000, async () => {
      if (proc && proc.child.exitCode !== null)
        throw new Error(
          `the process on ${port} exited ${proc.child.exitCode}: ` +
            `${fs.readFileSync(proc.log, 'utf8').trim().slice(-400)}`,
        );
      return (await plainGet(port, '/readyz')) === 200;
    });

    let classroomProc: Proc | undefined;
    const startClassroom = () => {
      classroomProc = start('classroom', [node, 'classroom/dist/server.js'],
        envOf({ ...classroomEnv, MALLOC_MMAP_THRESHOLD_: '1048576' }), logs, codeOf.classroom);
      return classroomProc;
    };
    let caddyCa = '';
    const site = `https://localhost:${ports.site}`;
    const classroomSite = `https://localhost:${ports.classroomSite}`;

    const up = await check('services start: PostgreSQL, Redis, S3, 2 central, 1 classroom, ' +
        'HAProxy, Caddy', async () => {
      const root = release?.root ?? repoRoot;
      const migrated = [await centralCli(['migrate'], {}, root), await classroomCli(['migrate'], {}, root)];
      // Demo accounts and curriculum (the seed runs only outside production; the services below run in production).
      await centralCli(['seed-demo'], { NODE_ENV: 'test' }, root);
      await classroomCli(['seed-demo'], { NODE_ENV: 'test' }, root);
      startCentral(0);
      startCentral(1);
      const classroom = startClassroom();
      await Promise.all([
        ready(ports.central[0], centrals[0]), ready(ports.central[1], centrals[1]), ready(ports.classroom, classroom),
      ]);
      caddyCa = await startProxies({ tmp, logs, ports, site, classroomSite }, waitFor, tmp);
      const on = release ? `${release.name}: ` : '';
      return on + migrated.map((m) => `${m.split(':')[0]}: ${m.split(',').length} migrations applied`).join(', ');
    });
    if (!up) throw new Error('the services did not start');
    const get = client(caddyCa);
    const teacher = DEMO_IDS.teacher.schoolusername;
    const learner = DEMO_IDS.learners[0];

    let token = '';
    const auth = () => ({ Authorization: `Bearer ${token}` });
    await check('TLS through Caddy, both central instances healthy', async () => {
      await waitFor('central through Caddy', 20_000, async () => (await get(`${site}/readyz`)).status === 200);
      await waitFor(
        'classroom through Caddy',
        20_000,
        async () => (await get(`${classroomSite}/readyz`)).status === 200,
      );
      return `${site}/readyz 200 and ${classroomSite}/readyz 200 over TLS (Caddy's internal CA)`;
    });

    const password = `Deploy-${crypto.randomBytes(6).toString('hex')}-A1`;
    await check('first sign-in: set-password, then POST /auth/login', async () => {
      const printed = await centralCli(['set-password', 'superadmin@superadmin.com', password]);
      const r = await get(`${site}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: password }),
      });
      if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
      token = (r.json().data as { accessToken: string }).accessToken;
      return `${printed.split('\n')[0]}; signed in`;
    });

    const doc1 = {
      name: 'deploytest_one.pdf',
      bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), crypto.randomBytes(50_000)]),
    };
    const doc2 = {
      name: 'deploytest_two.pdf',
      bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), crypto.randomBytes(20_000)]),
    };
    const upload = async (d: typeof doc1) => {
      const m = multipart('file', d.name, 'application/pdf', d.bytes);
      const r = await get(`${site}/document/upload`, {
        method: 'POST',
        headers: { ...auth(), 'Content-Type': m.contentType },
        body: m.body,
      });
      if (r.status !== 200)
        throw new Error(`upload of ${d.name} answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
    };
    const readBack = async (d: typeof doc1) => {
      const r = await get(`${site}/media/${d.name}`);
      return r.status === 200 && r.body.equals(d.bytes) ? 'same' : `HTTP ${r.status}`;
    };
    await check('upload a document, read it back', async () => {
      await upload(doc1);
      const back = await readBack(doc1);
      if (back !== 'same') throw new Error(`GET /media/${doc1.name}: ${back}`);
      return `POST /document/upload (${doc1.bytes.length} bytes, S3), GET /media/${doc1.name}: the same bytes`;
    });

    const starttime = Date.now() - 60_000;
    const attempts = async () => {
      const r = await get(`${site}/student/stats/${learner.studentid}/quiz`, { headers: auth() });
      if (r.status !== 200) throw new Error(`GET /student/stats answered ${r.status}`);
      return JSON.stringify(r.json().data);
    };
    await check('import a classroom log, read it back', async () => {
      const c = client(caddyCa);
      const login = await c(`${classroomSite}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password }),
      });
      if (login.status !== 200) throw new Error(`learner sign-in on the classroom answered ${login.status}`);
      const lt = (login.json().data as { accessToken: string }).accessToken;
      const lesson = DEMO_IDS.lessons[0];
      const result = lesson.lessonquizquestionids.map((lq, i) => ({
        iscorrect: true,
        lessonquizid: lesson.lessonquizid,
        lessonquizquestionid: lq,
        questionid: lesson.questionids[i],
      }));
      const submit = await c(`${classroomSite}/result/lesson/quiz/${lesson.lessonquizid}`, {
        method: 'POST', headers: { Authorization: `Bearer ${lt}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ starttime, endtime: starttime + 50_000, result }),
      });
      if (submit.status !== 200)
        throw new Error(`quiz submission answered ${submit.status}: ${submit.body.toString().slice(0, 200)}`);
      const before = await attempts();
      const sync = await syncLog({ tmp, site, classroomSite }, path.join(tmp, 'studentlog.zip'));
      if (sync.code !== 0)
        throw new Error(`sync-log exited ${sync.code}: ${(sync.stderr || sync.stdout).trim().slice(0, 300)}`);
      const after = await attempts();
      const mark = new Date(starttime).toISOString();
      if (before.includes(mark) || !after.includes(mark))
        throw new Error(
          `the attempt of ${mark} is not in GET /student/stats/${learner.studentid}/quiz after the import`,
        );
      const rows = (sync.stdout.split('\n').find((l) => /studentprogress\s/.test(l)) ?? '').trim().replace(/\s+/g, ' ');
      return (
        `quiz taken on the classroom; sync-log through Caddy imported ${rows || 'the log'}; ` +
        "the attempt is in central's /student/stats"
      );
    });

    // ---- availability under write traffic ------------------------------------------------------------------
    const json = { 'Content-Type': 'application/json' };
    const teacher2 = {
      schoolusername: `dteach${crypto.randomBytes(3).toString('hex')}`,
      password: `T${crypto.randomBytes(6).toString('hex')}`,
    };
    const trafficClient = client(caddyCa);
    const send: Send = (url, o) => trafficClient(url, o);
    const ledger = newLedger();
    let trafficSetup: Parameters<typeof startTraffic>[0] | undefined;
    await check('write traffic through the proxies: two teachers, an administrator, a learner', async () => {
      const made = await get(`${site}/teacher/create`, {
        method: 'POST',
        headers: { ...json, ...auth() },
        body: JSON.stringify({
          schoolname: DEMO_IDS.schoolname,
          teachers: [{ schoolusername: teacher2.schoolusername, schooluserpasswordhash: teacher2.password }],
        }),
      });
      if (made.status !== 200)
        throw new Error(`POST /teacher/create answered ${made.status}: ${made.body.toString().slice(0, 200)}`);
      const schoolSignIn = async (lmsusername: string, lmsuserpassword: string) => {
        const r = await get(`${site}/auth/school/login`, {
          method: 'POST',
          headers: json,
          body: JSON.stringify({ lmsusername, lmsuserpassword }),
        });
        if (r.status !== 200) throw new Error(`school sign-in of ${lmsusername} answered ${r.status}`);
        return (r.json().data as { accessToken: string }).accessToken;
      };
      const learnerLogin = await get(`${classroomSite}/auth/login`, {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password }),
      });
      if (learnerLogin.status !== 200)
        throw new Error(`learner sign-in on the classroom answered ${learnerLogin.status}`);
      trafficSetup = {
        site,
        classroomSite,
        send,
        ledger,
        teacherTokens: [
          await schoolSignIn(teacher, DEMO_IDS.password),
          await schoolSignIn(teacher2.schoolusername, teacher2.password),
        ],
        adminToken: token,
        adminSignIn: { lmsusername: 'superadmin@superadmin.com', lmsuserpassword: password },
        learnerToken: (learnerLogin.json().data as { accessToken: string }).accessToken,
        learner,
        lesson: DEMO_IDS.lessons[1],
        mediaPath: `/media/${doc1.name}`,
        enrol: {
          schoolid: DEMO_IDS.schoolid,
          standardid: DEMO_IDS.standardid,
          curriculumid: DEMO_IDS.curriculumid,
          countryname: DEMO_IDS.countryname,
        },
      };
      const t = startTraffic(trafficSetup);
      await sleep(5000);
      await t.stop();
      if (t.failures.length) throw new Error(`${describeTraffic(t)}, ${describeFailures(t.failures)}`);
      return `${describeTraffic(t)} in 5 s, 0 failed`;
    });
    const traffic = (o: { reads?: boolean } = {}): Traffic => {
      if (!trafficSetup) throw new Error('the write traffic could not be set up');
      return startTraffic(trafficSetup, o);
    };
    const summary = (t: Traffic) =>
      `${describeTraffic(t)}, ${describeFailures(t.failures)}` +
      `${t.waits ? `, ${t.waits} import(s) asked to wait (Retry-After) and sent again` : ''}`;

    await check('upgrade from the previous release under write traffic: migrate, then restart one by one', async () => {
      const t = traffic();
      await sleep(2000);
      // deploy/README.md, "Upgrading": the new build's migrations first, while the previous release serves.
      const migrated = [await centralCli(['migrate']), await classroomCli(['migrate'])];
      await sleep(2000);
      for (const i of [0, 1]) {
        centrals[i].child.kill('SIGTERM');
        const code = await centrals[i].exited;
        if (code !== 0) throw new Error(`instance ${ports.central[i]} exited ${code} on SIGTERM`);
        codeOf.central[i] = repoRoot;
        startCentral(i);
        await ready(ports.central[i], centrals[i]);
        await sleep(2000);
      }
      classroomProc!.child.kill('SIGTERM');
      if ((await classroomProc!.exited) !== 0) throw new Error('the classroom server did not exit 0 on SIGTERM');
      codeOf.classroom = repoRoot;
      await ready(ports.classroom, startClassroom());
      await sleep(2000);
      await t.stop();
      if (t.failures.length) throw new Error(summary(t));
      const from = release ? `${release.name} to this tree` : `this tree restarted (${noRelease})`;
      return `${from}; ${migrated.map((m) => m.split('\n')[0]).join('; ')}; ${summary(t)}`;
    });

    await check('kill -9 of one central instance under write traffic', async () => {
      const t = traffic();
      await sleep(3000);
      const inFlight = t.inFlight;
      centrals[0].child.kill('SIGKILL');
      await centrals[0].exited;
      await sleep(2000);
      startCentral(0);
      await ready(ports.central[0], centrals[0]);
      await sleep(3000);
      await t.stop();
      if (t.failures.length > inFlight) {
        throw new Error(`${summary(t)}: more than the ${inFlight} request(s) in flight at the kill`);
      }
      return `${summary(t)} (at most the ${inFlight} in flight at the kill may fail)`;
    });

    await check('object store stopped for 10 s under write traffic: sign-ins and enrolment answer 200', async () => {
      const t = traffic({ reads: false });
      await sleep(2000);
      s3.child.kill('SIGTERM');
      await s3.exited;
      const readyz = await plainGet(ports.central[0], '/readyz');
      const during = lastAnswer();
      await sleep(10_000);
      s3 = start('s3rver', s3rver, process.env, tmp, logs);
      await waitFor('the object store', 20_000, async () => (await plainGet(ports.s3, '/')) > 0);
      // An import that waited during the outage goes through once the store is back (Retry-After ≤ 10 s).
      await sleep(12_000);
      await t.stop();
      if (readyz !== 200) throw new Error(`/readyz of an instance answered ${readyz} during the outage: ${during}`);
      if (t.failures.length) throw new Error(summary(t));
      if (!t.sent['sign-in'] || !t.sent.enrol) throw new Error(`no sign-in or enrolment was sent: ${summary(t)}`);
      return `${summary(t)}; /readyz 200 during the outage (${during.trim().slice(0, 80)})`;
    });

    await check('rolling restart of the central instances under write traffic', async () => {
      const t = traffic();
      await sleep(2000);
      for (const i of [0, 1]) {
        centrals[i].child.kill('SIGTERM');
        const code = await centrals[i].exited;
        if (code !== 0) throw new Error(`instance ${ports.central[i]} exited ${code} on SIGTERM`);
        startCentral(i);
        await ready(ports.central[i], centrals[i]);
        // HAProxy takes it back after two good checks (0.5 s apart).
        await sleep(2000);
      }
      await sleep(1000);
      await t.stop();
      if (t.failures.length) throw new Error(summary(t));
      return `both instances restarted one by one: ${summary(t)}`;
    });

    await check('restart of the classroom server under write traffic: no submission refused', async () => {
      const t = traffic();
      await sleep(2000);
      const classroom = classroomProc!;
      classroom.child.kill('SIGTERM');
      const code = await classroom.exited;
      if (code !== 0) throw new Error(`the classroom server exited ${code} on SIGTERM`);
      const down = Date.now();
      const restarted = startClassroom();
      await ready(ports.classroom, restarted);
      const downMs = Date.now() - down;
      await sleep(2000);
      await t.stop();
      if (t.failures.length) throw new Error(summary(t));
      return `${summary(t)}; down ${(downMs / 1000).toFixed(1)} s, submissions sent meanwhile waited in HAProxy`;
    });

    await check('every acknowledged write is in the databases, no refused one is', async () => {
      const central = knexFactory({ client: 'pg', connection: centralEnv.DATABASE_URL, pool: { min: 0, max: 1 } });
      const classroomDb = knexFactory({
        client: 'pg',
        connection: classroomEnv.DATABASE_URL,
        pool: { min: 0, max: 1 },
      });
      try {
        const present = async (db: typeof central, table: string, column: string, values: string[]) => {
          const found = new Set<string>();
          for (let k = 0; k < values.length; k += 500) {
            for (const r of await db(table)
              .whereIn(column, values.slice(k, k + 500))
              .select(column))
              found.add(String(r[column]));
          }
          return found;
        };
        const problems: string[] = [];
        const rows = ledger.importRows;
        const rowsIn = await present(central, 'studentactives', 'studentactiveid', [...rows.acked, ...rows.refused]);
        const learnersIn = await present(central, 'schoolusers', 'schoolusername', [
          ...ledger.learners.acked,
          ...ledger.learners.refused,
        ]);
        const startedIn = new Set(
          (await classroomDb('studentprogress').where({ studentid: learner.studentid }).select('starttime')).map(
            (r: { starttime: Date | string }) => new Date(r.starttime).getTime(),
          ),
        );
        const missing = (acked: Array<string | number>, found: Set<string | number>) =>
          acked.filter((v) => !found.has(v)).length;
        const extra = (refused: Array<string | number>, found: Set<string | number>) =>
          refused.filter((v) => found.has(v)).length;
        const tally = [
          ['import rows', rows.acked, rows.refused, rows.doubt, rowsIn],
          ['learners enrolled', ledger.learners.acked, ledger.learners.refused, ledger.learners.doubt, learnersIn],
          [
            'quiz submissions',
            ledger.submissions.acked,
            ledger.submissions.refused,
            ledger.submissions.doubt,
            startedIn,
          ],
        ] as const;
        const said: string[] = [];
        for (const [what, acked, refused, doubt, found] of tally) {
          const m = missing([...acked], found as Set<string | number>);
          const x = extra([...refused], found as Set<string | number>);
          if (m) problems.push(`${m} acknowledged ${what} missing`);
          if (x) problems.push(`${x} refused ${what} written`);
          said.push(
            `${what}: ${acked.length.toLocaleString('en-US')} acknowledged, all present; ` +
              `${refused.length} refused, none written${doubt.length ? `; ${doubt.length} cut off (either)` : ''}`,
          );
        }
        if (problems.length) throw new Error(problems.join('; '));
        return said.join('; ');
      } finally {
        await central.destroy();
        await classroomDb.destroy();
      }
    });

    await check('monitoring: /readyz and /metrics of each instance and of HAProxy, ' +
        'no /metrics through Caddy', async () => {
      const headers = { Authorization: `Bearer ${centralEnv.METRICS_TOKEN}` };
      const seen: string[] = [];
      for (const port of ports.central) {
        if ((await plainGet(port, '/readyz')) !== 200) throw new Error(`/readyz of ${port}: ${lastAnswer()}`);
        const m = await new Promise<{ status: number; body: string }>((resolve, reject) => {
          http.get({ host: '127.0.0.1', port, path: '/metrics', headers }, (res) => {
            let body = '';
            res.on('data', (d: Buffer) => { body += d.toString(); });
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          }).on('error', reject);
        });
        if (m.status !== 200 || !m.body.includes('# TYPE')) throw new Error(`/metrics of ${port} answered ${m.status}`);
        seen.push(`${m.body.split('\n').filter((l) => l.startsWith('# TYPE')).length} metrics`);
      }
      const outside = await get(`${site}/metrics`, { headers });
      if (outside.status !== 404) throw new Error(`${site}/metrics answered ${outside.status}`);
      const proxy = await new Promise<string>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: ports.haproxy.stats, path: '/metrics' }, (res) => {
          let body = '';
          res.on('data', (d: Buffer) => { body += d.toString(); });
          res.on('end', () => resolve(body));
        }).on('error', reject);
      });
      const counter = (name: string) =>
        new RegExp(`^haproxy_backend_${name}_total\\{proxy="central"\\} (\\d+)`, 'm').exec(proxy)?.[1];
      // A connection that failed is retried; with `option redispatch 1` each retry goes to another instance and
      // HAProxy counts it as a redispatch, not as a retry on the same one.
      const retried = counter('retry_warnings');
      const redispatched = counter('redispatch_warnings');
      const own5xx = /^haproxy_frontend_http_responses_total\{proxy="central",code="5xx"\} (\d+)/m.exec(proxy)?.[1];
      if (retried === undefined || redispatched === undefined || own5xx === undefined)
        throw new Error("HAProxy's /metrics lacks its retry, redispatch and 5xx counters");
      return (
        `both instances ready; /metrics with the token: ${seen.join(', ')}; ${site}/metrics: 404; ` +
        `HAProxy /metrics: ${redispatched} failed connection(s) sent to another instance, ${retried} retried ` +
        `on the same one, ${own5xx} 5xx answers on the central site`
      );
    });

    await check('back up, change data, restore (refused while serving): exactly the backed-up data', async () => {
      const dir = path.join(tmp, 'backup');
      await centralCli(['backup', '--to', path.join(dir, 'central')]);
      await classroomCli(['backup', '--to', path.join(dir, 'classroom')]);
      const statsAtBackup = await attempts();
      // Changes: a second document, a second classroom attempt imported, a learner's account row on the classroom.
      await upload(doc2);
      const lesson = DEMO_IDS.lessons[1];
      const c = client(caddyCa);
      const login = await c(`${classroomSite}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password }),
      });
      const lt = (login.json().data as { accessToken: string }).accessToken;
      const later = Date.now() - 30_000;
      const result = lesson.lessonquizquestionids.map((lq, i) => ({
        iscorrect: false,
        lessonquizid: lesson.lessonquizid,
        lessonquizquestionid: lq,
        questionid: lesson.questionids[i],
      }));
      await c(`${classroomSite}/result/lesson/quiz/${lesson.lessonquizid}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${lt}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ starttime: later, endtime: later + 20_000, result }),
      });
      const sync = await syncLog({ tmp, site, classroomSite }, path.join(tmp, 'studentlog2.zip'));
      if (sync.code !== 0) throw new Error(`second sync-log exited ${sync.code}`);
      if ((await attempts()) === statsAtBackup || (await readBack(doc2)) !== 'same')
        throw new Error('the changes after the backup did not show');

      const refused = await run(
        [node, 'central/dist/cli.js', 'restore', '--from', path.join(dir, 'central')],
        envOf(centralEnv),
      );
      if (refused.code !== 2) throw new Error(`restore without --yes exited ${refused.code}`);
      const live = await run(
        [node, 'central/dist/cli.js', 'restore', '--from', path.join(dir, 'central'), '--yes'],
        envOf(centralEnv),
      );
      if (live.code !== 3) throw new Error(`restore --yes while the instances serve exited ${live.code}, not 3`);
      if ((await attempts()) === statsAtBackup) throw new Error('a refused restore changed the data');
      // deploy/README.md: the instances are stopped for a restore, and started again after it.
      for (const i of [0, 1]) centrals[i].child.kill('SIGTERM');
      classroomProc!.child.kill('SIGTERM');
      await Promise.all([centrals[0].exited, centrals[1].exited, classroomProc!.exited]);
      const restored = await centralCli(['restore', '--from', path.join(dir, 'central'), '--yes']);
      await classroomCli(['restore', '--from', path.join(dir, 'classroom'), '--yes']);
      startCentral(0);
      startCentral(1);
      const classroom = startClassroom();
      await Promise.all([
        ready(ports.central[0], centrals[0]),
        ready(ports.central[1], centrals[1]),
        ready(ports.classroom, classroom),
      ]);
      await waitFor('central through the proxies', 10_000, async () => (await get(`${site}/readyz`)).status === 200);
      const statsNow = await attempts();
      const one = await readBack(doc1);
      const two = await get(`${site}/media/${doc2.name}`);
      if (statsNow !== statsAtBackup) throw new Error('the learner\'s attempts differ from those at the backup');
      if (one !== 'same') throw new Error(`${doc1.name} after the restore: ${one}`);
      if (two.status !== 404)
        throw new Error(`${doc2.name}, uploaded after the backup, answers ${two.status} after the restore`);
      return (
        'refused while the instances served (exit 3); with them stopped: ' +
        `${restored.split('\n').filter((l) => l.includes('restored'))[0] ?? 'restored'}; ` +
        `attempts as at the backup, ${doc1.name} the same, ${doc2.name} gone (404)`
      );
    });
  } catch (err) {
    failed = true;
    say(`deploy-test stopped: ${(err as Error).message}`);
  } finally {
    await stopChildren();
    await sleep(200);
    await removeRelease(repoRoot, path.join(tmp, 'release'));
    try {
      await admin.raw(`DROP DATABASE IF EXISTS ${tag}_central WITH (FORCE)`);
      await admin.raw(`DROP DATABASE IF EXISTS ${tag}_classroom WITH (FORCE)`);
    } finally {
      await admin.destroy();
    }
    if (anyCheckFailed() || failed) say(`logs of every process: ${logs}`);
    else await fsp.rm(tmp, { recursive: true, force: true });
  }
  printTable();
  return failed || anyCheckFailed() ? 1 : 0;
}

exitWith(main);
