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
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { DEMO_IDS } from '@lms/shared';
import { repoRoot } from '@lms/db';
import {
  anyCheckFailed, check, client, exitWith, freePort, lastAnswer, mustRun, plain, printTable, readEnvFile,
  redisOfRun, run, s3rverArgv, say, secret, sleep, start, stopChildren, waiter, type Proc,
} from '../kit-test/common';
import { getFrom, proxyExposure, refused, startProxies, syncLog } from '../kit-test/proxies';
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

/**
 * A TCP relay (`node relay.js <listen port> <host> <port>`) on loopback: what the services take for their
 * PostgreSQL or Redis. Killed, the server is gone (refused, connections cut); stopped with SIGSTOP, it hangs
 * (connections open, nothing answers).
 */
const RELAY_SOURCE = `const net = require('node:net');
const [listen, host, port] = process.argv.slice(2);
net.createServer((c) => {
  const u = net.connect(Number(port), host);
  const end = () => { c.destroy(); u.destroy(); };
  c.pipe(u); u.pipe(c);
  for (const s of [c, u]) { s.on('error', end); s.on('close', end); }
}).listen(Number(listen), '127.0.0.1');
`;

/** The central instance's log lines (JSON) whose request URL contains `marker`. */
function loggedRequests(logFiles: string[], marker: string): Array<{ url: string; client: string }> {
  const out: Array<{ url: string; client: string }> = [];
  for (const f of logFiles) {
    if (!fs.existsSync(f)) continue;
    for (const line of fs.readFileSync(f, 'utf8').split('\n')) {
      if (!line.includes(marker)) continue;
      try {
        const j = JSON.parse(line) as { req?: { url?: string; client?: string } };
        if (j.req?.url?.includes(marker)) out.push({ url: j.req.url, client: String(j.req.client) });
      } catch {
        // not a JSON line
      }
    }
  }
  return out;
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
    caddyMetrics: await freePort(),
    // The services reach PostgreSQL and Redis through relays of the run's own, which the outage drills stop
    // (SIGKILL) or freeze (SIGSTOP): the machine's own servers are never touched.
    pgRelay: await freePort(), redisRelay: await freePort(),
  };

  try {
    // ---- the machine: databases, S3, Caddy's certificates ------------------------------------------------
    await admin.raw(`CREATE DATABASE ${tag}_central`);
    await admin.raw(`CREATE DATABASE ${tag}_classroom`);
    const s3rver = s3rverArgv(tmp, ports.s3);
    let s3 = start('s3rver', s3rver, process.env, logs, tmp);
    const relayJs = path.join(tmp, 'relay.js');
    await fsp.writeFile(relayJs, RELAY_SOURCE);
    const pgTarget = new URL(adminUrl);
    const redisTarget = new URL(redisBase);
    const relays = {
      pg: { port: ports.pgRelay, to: [pgTarget.hostname, pgTarget.port || '5432'] },
      redis: { port: ports.redisRelay, to: [redisTarget.hostname, redisTarget.port || '6379'] },
    };
    const relayProcs: Record<'pg' | 'redis', Proc | undefined> = { pg: undefined, redis: undefined };
    const startRelay = async (which: 'pg' | 'redis') => {
      const r = relays[which];
      relayProcs[which] = start(`${which}-relay`, [node, relayJs, String(r.port), ...r.to], process.env, logs, tmp);
      await waitFor(`the ${which} relay`, 5000, async () => !(await refused(r.port)));
    };
    await startRelay('pg');
    await startRelay('redis');
    const viaRelay = (url: string, port: number) => {
      const u = new URL(url);
      u.hostname = '127.0.0.1';
      u.port = String(port);
      return u.toString();
    };
    const redisUrl = viaRelay(redisOfRun(redisBase), ports.redisRelay);
    const relayedDb = (name: string) => viaRelay(dbUrl(name), ports.pgRelay);

    const centralEnv: Record<string, string> = {
      ...readEnvFile(path.join(deploy, 'central.env.example')),
      JWT_SECRET: secret(), APPLICATION_API_KEY: secret(), SERVER_SYNC_KEY: secret(), RPI_SECRET: secret(),
      DATABASE_URL: relayedDb(`${tag}_central`),
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
      DATABASE_URL: relayedDb(`${tag}_classroom`),
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

    await check('figures of deploy/README.md: idle memory of an instance, tables of each database', async () => {
      const rss = (pid: number | undefined) => {
        const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
        return m ? `${(Number(m[1]) / 1024).toFixed(0)} MB` : 'unknown';
      };
      const tables = async (name: string) => {
        const db = knexFactory({ client: 'pg', connection: dbUrl(name), pool: { min: 0, max: 1 } });
        try {
          const r = await db.raw(
            "select count(*)::int as n from information_schema.tables where table_schema = 'public' " +
              "and table_type = 'BASE TABLE' and table_name not like 'knex_%'",
          );
          return (r.rows as Array<{ n: number }>)[0].n;
        } finally {
          await db.destroy();
        }
      };
      return (
        `resident memory after start: central ${rss(centrals[0].child.pid)} and ${rss(centrals[1].child.pid)}, ` +
        `classroom ${rss(classroomProc?.child.pid)}; tables: central ${await tables(`${tag}_central`)}, ` +
        `classroom ${await tables(`${tag}_classroom`)} (the migrations' own bookkeeping left out)`
      );
    });

    await check("the proxies expose nothing else: Caddy's admin API off, its metrics on loopback", () =>
      proxyExposure({ ports }));

    await check('a forged X-Forwarded-For changes nothing: central sees the sender\'s own address', async () => {
      // From 127.0.0.2 (this host, but not Caddy's address), each with a forged header: straight to HAProxy,
      // then through Caddy. Central logs each request (a 404) with the address its rate limiters count.
      const marker = `xff${crypto.randomBytes(4).toString('hex')}`;
      const forged = { 'X-Forwarded-For': '203.0.113.7' };
      const direct = await getFrom('127.0.0.2', ports.haproxy.central, `/${marker}-haproxy`, forged);
      const viaCaddy = await new Promise<number>((resolve, reject) => {
        https.get(`${site}/${marker}-caddy`, {
          ca: caddyCa, servername: 'localhost', localAddress: '127.0.0.2', headers: forged, agent: false,
        }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode ?? 0)); }).on('error', reject);
      });
      if (direct.status !== 404 || viaCaddy !== 404)
        throw new Error(`the probes answered ${direct.status} (HAProxy) and ${viaCaddy} (Caddy), not 404`);
      const files = ports.central.map((p) => path.join(logs, `central-${p}.log`));
      let seen: Array<{ url: string; client: string }> = [];
      await waitFor('the probes in central\'s log', 5000, async () => {
        seen = loggedRequests(files, marker);
        return seen.length >= 2;
      });
      const wrong = seen.filter((r) => r.client !== '127.0.0.2');
      if (wrong.length)
        throw new Error(`central counted ${wrong.map((r) => `${r.url} as from ${r.client}`).join(', ')}`);
      return (
        `X-Forwarded-For: 203.0.113.7 sent from 127.0.0.2 to HAProxy and to Caddy: central saw 127.0.0.2 both ` +
        `times (TRUST_PROXY=${centralEnv.TRUST_PROXY})`
      );
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
    // A token in a query string, as the media links carry it: no log of the kit may keep it (checked at the end).
    const queryTokens: string[] = [];

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
      const linked = await get(`${site}/media/${doc1.name}?accesstoken=${encodeURIComponent(token)}`);
      if (linked.status !== 200) throw new Error(`GET /media/${doc1.name}?accesstoken=… answered ${linked.status}`);
      queryTokens.push(token);
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
      await c(`${classroomSite}/readyz?accesstoken=${encodeURIComponent(lt)}`);
      queryTokens.push(lt);
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
      const signalled = Date.now();
      classroom.child.kill('SIGTERM');
      const code = await classroom.exited;
      if (code !== 0) throw new Error(`the classroom server exited ${code} on SIGTERM`);
      const down = Date.now();
      const restarted = startClassroom();
      await ready(ports.classroom, restarted);
      const upAt = Date.now();
      await sleep(2000);
      await t.stop();
      if (t.failures.length) throw new Error(summary(t));
      const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
      return (
        `${summary(t)}; SIGTERM to ready again ${secs(upAt - signalled)} (stopping ${secs(down - signalled)}, ` +
        `starting ${secs(upAt - down)}), submissions sent meanwhile waited in HAProxy`
      );
    });

    // ---- outages of PostgreSQL and Redis (through the run's relays) under write traffic ------------------------
    // Central: every answer is 200 or 503 with Retry-After (an import waits and is sent again), and it answers
    // 200 again once the dependency is back. The classroom server's answers are counted and reported.
    const drill = async (what: string, o: { which: 'pg' | 'redis'; hang?: boolean; want503: boolean }) => {
      const t = traffic();
      await sleep(2000);
      const relay = relayProcs[o.which]!;
      const outageStart = Date.now();
      if (o.hang) relay.child.kill('SIGSTOP');
      else {
        relay.child.kill('SIGKILL');
        await relay.exited;
      }
      await sleep(4000);
      const readyz = await plain(ports.central[0], '/readyz').catch((e: Error) => ({ status: 0, body: e.message }));
      await sleep(6000);
      if (o.hang) relay.child.kill('SIGCONT');
      else await startRelay(o.which);
      const back = Date.now();
      // Back: central answers a write through the proxies within 30 s.
      let recovered = 0;
      await waitFor(`central after the ${what}`, 30_000, async () => {
        const r = await get(`${site}/auth/login`, {
          method: 'POST', headers: json, body: JSON.stringify(trafficSetup!.adminSignIn),
        });
        if (r.status === 200) recovered = Date.now();
        return r.status === 200;
      });
      // Then a quiet spell: the traffic after it must go through.
      await sleep(4000);
      const quietFrom = Date.now();
      await sleep(4000);
      await t.stop();
      const centralFailures = t.failures.filter((f) => f.op !== 'submit');
      const unclean = centralFailures.filter((f) => !(f.status === 503 && f.retryAfter));
      const after = centralFailures.filter((f) => f.at > quietFrom);
      const clean503 = centralFailures.length - unclean.length + t.waits;
      const classroomSaid = Object.entries(t.answers)
        .filter(([k]) => k.startsWith('submit '))
        .map(([k, n]) => `${n} ${k.slice('submit '.length)}`)
        .join(', ');
      const seen =
        `${describeTraffic(t)}; central: ${clean503} answer(s) 503 with Retry-After (imports waited ${t.waits}), ` +
        `${unclean.length} other failure(s); /readyz during: ${readyz.status} ${readyz.body.trim().slice(0, 70)}; ` +
        `write answered 200 ${((recovered - back) / 1000).toFixed(1)} s after ` +
        `${o.which === 'pg' ? 'the database' : 'Redis'} came back ` +
        `(out ${((back - outageStart) / 1000).toFixed(0)} s); ` +
        `classroom submissions: ${classroomSaid}`;
      if (unclean.length)
        throw new Error(`${seen}; not 503 with Retry-After: ${describeFailures(unclean)}`);
      if (after.length) throw new Error(`${seen}; still failing after recovery: ${describeFailures(after)}`);
      if (o.want503 && clean503 === 0) throw new Error(`${seen}; no 503 with Retry-After during the outage`);
      return seen;
    };
    await check('PostgreSQL stopped for 10 s under write traffic: central 503 with Retry-After, then 200', () =>
      drill('PostgreSQL outage', { which: 'pg', want503: true }));
    await check('PostgreSQL hanging for 10 s (not stopped) under write traffic: central 503 or waits, then 200', () =>
      drill('PostgreSQL hang', { which: 'pg', hang: true, want503: false }));
    await check('Redis stopped for 10 s under write traffic: central serves (or 503 with Retry-After)', () =>
      drill('Redis outage', { which: 'redis', want503: false }));

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

    await check('no token sent in a query string (?accesstoken=) is in any log of the kit', async () => {
      if (!queryTokens.length) throw new Error('no request with ?accesstoken= was sent');
      const files = (await fsp.readdir(logs)).filter((f) => f.endsWith('.log'));
      const found: string[] = [];
      for (const f of files) {
        const text = await fsp.readFile(path.join(logs, f), 'utf8');
        if (queryTokens.some((t) => text.includes(t))) found.push(f);
      }
      if (found.length) throw new Error(`a token sent as ?accesstoken= is in ${found.join(', ')}`);
      const sent = `${queryTokens.length} tokens sent as ?accesstoken= through Caddy and HAProxy`;
      return `${sent}; none in ${files.join(', ')}`;
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
