/**
 * `make image-test`: the container image and the compose kit (deploy/image, deploy/compose) on one machine.
 * Makes the base images locally (no image registry is reachable: scripts/ci/base-image.sh), builds the
 * image, runs migrations and set-password as one-off containers, starts the app services of
 * deploy/compose/compose.yaml with podman-compose (host networking, free ports), puts Caddy with
 * deploy/Caddyfile in front, signs in, imports a classroom log through Caddy, restarts one central container
 * under a loop of writes, backs up from a one-off container and stops everything. Prints a table of the
 * checks with the image's size and each service's resident memory beside the host install's.
 *
 * What runs where: central ×2 and the classroom server are containers of the image; PostgreSQL, Redis and
 * Caddy are the host's (Debian packages: their images cannot be pulled here) and the S3 store is s3rver
 * standing in for MinIO.
 * Needs root, DEPLOY_TEST_DATABASE_URL (or TEST_DATABASE_URL: a role allowed to create databases),
 * DEPLOY_TEST_REDIS_URL (or TEST_REDIS_URL) and caddy on the PATH; `make image-test` sets them.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import knexFactory from 'knex';
import { DEMO_IDS } from '@lms/shared';
import { repoRoot } from '@lms/db';
import {
  anyCheckFailed, check, client, exitWith, freePort, mustRun, plain, printTable, readEnvFile, redisOfRun, run,
  s3rverArgv, say, secret, sleep, start, stopChildren, waiter, type Reply,
} from '../kit-test/common';
import { proxyExposure, startProxies, syncLog } from '../kit-test/proxies';

interface Figure {
  what: string;
  value: string;
}

const figures: Figure[] = [];
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
// Every error of a probe means "not yet", whatever it says.
const waitFor = waiter({ every: 200 });

function writeEnvFile(file: string, env: Record<string, string>): void {
  fs.writeFileSync(
    file,
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
    { mode: 0o600 },
  );
}

function loadLoop(send: (i: number) => Promise<Reply>, concurrency: number) {
  let stopped = false;
  let sent = 0;
  const ok: number[] = [];
  const failures: string[] = [];
  const workers = Array.from({ length: concurrency }, async (_, w) => {
    let i = w;
    while (!stopped) {
      sent += 1;
      try {
        const r = await send(i);
        if (r.status === 200) ok.push(i);
        else failures.push(`HTTP ${r.status} ${r.body.toString().slice(0, 120)}`);
      } catch (err) {
        failures.push((err as Error).message);
      }
      i += concurrency;
    }
  });
  return {
    get sent() {
      return sent;
    },
    ok,
    failures,
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

/** Resident memory of a process, from the host's /proc (a container's PID 1 is a host process too). */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!m) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(m[1]) * 1024;
}

/** The figures measured, in a table of their own after the checks'. */
function printFigures(): void {
  if (figures.length) {
    const fw = Math.max(...figures.map((f) => f.what.length), 6);
    say('');
    say(`| ${'figure'.padEnd(fw)} | value |`);
    say(`|${'-'.repeat(fw + 2)}|-------|`);
    for (const f of figures) say(`| ${f.what.padEnd(fw)} | ${f.value} |`);
  }
}

/** deploy/compose/compose.yaml as JSON (PyYAML: a dependency of podman-compose, so present wherever it is). */
async function readCompose(file: string): Promise<{ services: Record<string, Record<string, unknown>> }> {
  const py = 'import json,sys,yaml; json.dump(yaml.safe_load(open(sys.argv[1])), sys.stdout)';
  return JSON.parse(await mustRun(['python3', '-c', py, file])) as {
    services: Record<string, Record<string, unknown>>;
  };
}

/**
 * compose.yaml's `${VAR}`, `${VAR:-default}` and `${VAR:?message}` resolved against an operator's .env: the
 * values of deploy/compose/env.example, each password left empty there given a random hex one, as its
 * comment says.
 */
function operatorEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of fs.readFileSync(path.join(repoRoot, 'deploy', 'compose', 'env.example'), 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) out[m[1]] = m[2] || crypto.randomBytes(24).toString('hex');
  }
  return out;
}
const interpolate = (v: string, env: Record<string, string>) =>
  v.replace(/\$\{([A-Z0-9_]+)(?::([-?])([^}]*))?\}/g, (_, name: string, op?: string, arg?: string) => {
    if (env[name]) return env[name];
    if (op === '?') throw new Error(`compose.yaml needs ${name} (${arg})`);
    return op === '-' ? (arg ?? '') : '';
  });

/** A RESP command's first reply line, on a fresh connection. */
function redisSays(port: number, ...commands: string[][]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      for (const c of commands) {
        const words = c.map((w) => `$${Buffer.byteLength(w)}\r\n${w}\r\n`).join('');
        sock.write(`*${c.length}\r\n${words}`);
      }
    });
    let all = '';
    sock.on('data', (d: Buffer) => {
      all += d.toString();
      const lines = all.split('\r\n').filter(Boolean);
      if (lines.length >= commands.length) {
        sock.destroy();
        resolve(lines.slice(0, commands.length));
      }
    });
    sock.on('error', reject);
    sock.setTimeout(5000, () => { sock.destroy(); reject(new Error('Redis did not answer')); });
  });
}

async function main(): Promise<number> {
  const adminUrl = process.env.DEPLOY_TEST_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const redisBase = process.env.DEPLOY_TEST_REDIS_URL ?? process.env.TEST_REDIS_URL;
  if (!adminUrl || !redisBase) {
    process.stderr.write('image-test needs TEST_DATABASE_URL and TEST_REDIS_URL; `make image-test` sets them\n');
    return 2;
  }
  const t0 = Date.now();
  const tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'lms-image-test-'));
  const logs = path.join(tmp, 'logs');
  await fsp.mkdir(logs);
  const tag = `lms_it_${crypto.randomBytes(4).toString('hex')}`;
  const project = tag.replace(/_/g, '-');
  // One tag per machine: a second run reuses the layers of the first (only what changed is built again).
  const image = 'localhost/lms:image-test';
  const admin = knexFactory({ client: 'pg', connection: adminUrl, pool: { min: 0, max: 1 } });
  const dbUrl = (name: string) => {
    const u = new URL(adminUrl);
    u.pathname = `/${name}`;
    return u.toString();
  };
  const node = process.execPath;
  const ports = {
    central: [await freePort(), await freePort()],
    classroom: await freePort(),
    s3: await freePort(),
    site: await freePort(),
    classroomSite: await freePort(),
    http: await freePort(),
    hostCentral: await freePort(),
    hostClassroom: await freePort(),
    haproxy: { central: await freePort(), classroom: await freePort(), stats: await freePort() },
    caddyMetrics: await freePort(),
    redis: await freePort(),
  };
  const env: NodeJS.ProcessEnv = { ...process.env };
  const composeFile = path.join(tmp, 'compose.json');
  // podman-compose 1.0 puts every service on its project network too, even one with network_mode: host, which
  // podman refuses; this machine has no other network than the host's, so the project network is left out.
  const podmanHost = path.join(tmp, 'podman-host-network');
  await fsp.writeFile(
    podmanHost,
    '#!/bin/bash\nargs=(); skip=0\nfor a in "$@"; do\n' +
      '  if [ $skip = 1 ]; then skip=0; continue; fi\n' +
      '  case "$a" in --net|--network-alias) skip=1; continue ;; esac\n' +
      '  args+=("$a")\ndone\nexec podman "${args[@]}"\n',
    { mode: 0o755 },
  );
  const compose = (args: string[]) =>
    mustRun(['podman-compose', '--podman-path', podmanHost, '-p', project, '-f', composeFile, ...args], env);
  let composeUp = false;
  let failed = false;

  try {
    await check('podman, buildah, runc, podman-compose (scripts/ci/ensure-podman.sh)', async () => {
      const out = await mustRun(['bash', 'scripts/ci/ensure-podman.sh']);
      for (const l of out.split('\n')) {
        const m = /^([A-Z_]+)=(.*)$/.exec(l);
        if (m) env[m[1]] = m[2];
      }
      const v = await mustRun(['podman', 'version', '--format', '{{.Client.Version}}'], env);
      return `podman ${v}, runc, cgroupfs, host network (CONTAINERS_CONF=${env.CONTAINERS_CONF})`;
    });

    let base = '';
    let buildBase = '';
    await check('base images made locally (scripts/ci/base-image.sh: debootstrap + Node 20 from npm)', async () => {
      const out = await mustRun(['bash', 'scripts/ci/base-image.sh'], env);
      base = /BASE_IMAGE=(\S+)/.exec(out)?.[1] ?? '';
      buildBase = /BUILD_IMAGE=(\S+)/.exec(out)?.[1] ?? '';
      const size = await mustRun(['podman', 'image', 'inspect', '--format', '{{.Size}}', base], env);
      const nodeV = await mustRun(['podman', 'run', '--rm', '--network', 'host', base, 'node', '--version'], env);
      figures.push({ what: 'runtime base (Debian 12 minbase + Node.js)', value: mb(Number(size)) });
      return `${base} (${mb(Number(size))}, node ${nodeV}), ${buildBase}`;
    });

    let commit = 'unknown';
    await check('image built (deploy/image/Containerfile)', async () => {
      commit = (await run(['git', 'rev-parse', '--short', 'HEAD'])).stdout.trim() || 'unknown';
      // Docker's image format: the OCI format has no HEALTHCHECK (podman drops it there).
      await mustRun(
        [
          'nice',
          'podman',
          'build',
          '--format',
          'docker',
          '--network',
          'host',
          '-f',
          'deploy/image/Containerfile',
          '--build-arg',
          `BASE_IMAGE=${base}`,
          '--build-arg',
          `BUILD_IMAGE=${buildBase}`,
          '--build-arg',
          `LMS_COMMIT=${commit}`,
          '-t',
          image,
          '.',
        ],
        env,
      );
      const inspect = JSON.parse(await mustRun(['podman', 'image', 'inspect', image], env)) as Array<{
        Size: number;
        Healthcheck?: { Test?: string[] };
        Config: { User?: string; Env?: string[]; StopSignal?: string };
      }>;
      const cfg = { ...inspect[0].Config, Healthcheck: inspect[0].Healthcheck };
      if (cfg.User !== '10001:10001') throw new Error(`the image runs as ${cfg.User ?? 'root'}`);
      if (!cfg.Env?.includes('NODE_ENV=production')) throw new Error('NODE_ENV=production is not set');
      if (!cfg.Healthcheck?.Test?.join(' ').includes('healthcheck.js')) throw new Error('no HEALTHCHECK');
      const leaked = cfg.Env.filter((e) => /SECRET|KEY|PASSWORD|TOKEN/.test(e.split('=')[0]));
      if (leaked.length) throw new Error(`secrets in the image's environment: ${leaked.join(', ')}`);
      figures.push({ what: 'image (both services, production dependencies, pg_dump)', value: mb(inspect[0].Size) });
      return (
        `${image}: ${mb(inspect[0].Size)}, user 10001, NODE_ENV=production, HEALTHCHECK /healthz, ` +
        'no secret in its env'
      );
    });

    // ---- compose.yaml as an operator's .env makes it: networks, the services' accounts ----------------------------
    const opEnv = operatorEnv();
    const composed = await readCompose(path.join(repoRoot, 'deploy', 'compose', 'compose.yaml'));
    const envOfService = (name: string) =>
      Object.fromEntries(
        Object.entries((composed.services[name].environment ?? {}) as Record<string, string>).map(([k, v]) => [
          k,
          interpolate(String(v), opEnv),
        ]),
      );
    let redisPassword = '';
    await check('compose.yaml: HAProxy on the internal network only, the services not MinIO\'s root', async () => {
      const svc = composed.services;
      const nets = (composed as { networks?: Record<string, { internal?: boolean } | null> }).networks ?? {};
      if (nets.internal?.internal !== true) throw new Error('the network `internal` is not `internal: true`');
      const published = Object.keys(svc).filter((n) => svc[n].ports);
      if (published.join() !== 'caddy') throw new Error(`services with published ports: ${published.join(', ')}`);
      const haproxyNets = JSON.stringify(svc.haproxy.networks);
      if (haproxyNets !== '["internal"]') throw new Error(`HAProxy is on the networks ${haproxyNets}`);
      for (const n of Object.keys(svc).filter((k) => k !== 'caddy')) {
        const on = (svc[n].networks ?? ['default']) as string[];
        if (on.includes('edge') || on.includes('default')) throw new Error(`${n} is on the network ${on.join(', ')}`);
      }
      const minio = envOfService('minio');
      const said: string[] = [];
      for (const name of ['central-1', 'central-2']) {
        const e = envOfService(name);
        if (!e.S3_ACCESS_KEY || e.S3_ACCESS_KEY === minio.MINIO_ROOT_USER)
          throw new Error(`${name} runs with MinIO's root user (${e.S3_ACCESS_KEY})`);
        if (!e.S3_SECRET_KEY || e.S3_SECRET_KEY === minio.MINIO_ROOT_PASSWORD)
          throw new Error(`${name} runs with MinIO's root password`);
        said.push(`${name} as ${e.S3_ACCESS_KEY}`);
      }
      const init = envOfService('minio-init');
      if (init.LMS_S3_ACCESS_KEY !== envOfService('central-1').S3_ACCESS_KEY)
        throw new Error('minio-init creates another account than the services use');
      const urls = ['central-1', 'central-2', 'classroom'].map((n) => new URL(envOfService(n).REDIS_URL));
      if (urls.some((u) => !u.password)) throw new Error('a service\'s REDIS_URL carries no password');
      redisPassword = decodeURIComponent(urls[0].password);
      return (
        `HAProxy and its exporter on \`internal\` (internal: true) only, Caddy the one service with ports; ` +
        `${said.join(', ')} (MinIO's root: ${minio.MINIO_ROOT_USER}, minio-init's only); REDIS_URL with a password`
      );
    });

    // Redis as compose.yaml runs it (its command, on the host's redis-server): the containers use it below.
    await check('Redis as compose.yaml runs it: a client without the password is refused', async () => {
      const args = (composed.services.redis.command as string[]).map((a) => interpolate(a, opEnv));
      if (args[0] !== 'redis-server') throw new Error(`redis's command is ${args[0]}`);
      const dir = path.join(tmp, 'redis');
      await fsp.mkdir(dir);
      start('redis', ['redis-server', ...args.slice(1), '--port', String(ports.redis), '--bind', '127.0.0.1',
        '--dir', dir], process.env, logs);
      await waitFor('Redis', 10_000, async () => (await redisSays(ports.redis, ['PING'])).length === 1);
      const [anon] = await redisSays(ports.redis, ['PING']);
      if (!anon.startsWith('-NOAUTH')) throw new Error(`PING without the password answered ${anon}`);
      const [auth, pong] = await redisSays(ports.redis, ['AUTH', redisPassword], ['PING']);
      if (auth !== '+OK' || pong !== '+PONG') throw new Error(`with the password: ${auth}, ${pong}`);
      return `PING without the password: ${anon.slice(1, 40)}; with the services' REDIS_URL password: PONG`;
    });

    // ---- the machine's side: databases, S3, env files ---------------------------------------------------------
    await admin.raw(`CREATE DATABASE ${tag}_central`);
    await admin.raw(`CREATE DATABASE ${tag}_classroom`);
    start('s3rver', s3rverArgv(tmp, ports.s3), process.env, logs);
    // The Redis above, as the services' REDIS_URL names it (with its password); the machine's otherwise.
    const redisUrl = redisPassword
      ? `redis://:${encodeURIComponent(redisPassword)}@127.0.0.1:${ports.redis}/0`
      : redisOfRun(redisBase);
    const site = `https://localhost:${ports.site}`;
    const classroomSite = `https://localhost:${ports.classroomSite}`;
    const centralEnv: Record<string, string> = {
      ...readEnvFile(path.join(repoRoot, 'deploy', 'central.env.example')),
      JWT_SECRET: secret(),
      APPLICATION_API_KEY: secret(),
      SERVER_SYNC_KEY: secret(),
      RPI_SECRET: secret(),
      // /version gives the build only to a caller with this token.
      METRICS_TOKEN: secret(),
      PUBLIC_URL: site,
      UI_URL: site,
      RPI_CLOUD: classroomSite,
      // Every request of the loops comes from one address: the per-address limit would count them all.
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'info',
    };
    const classroomEnv: Record<string, string> = {
      ...readEnvFile(path.join(repoRoot, 'deploy', 'classroom.env.example')),
      JWT_SECRET: secret(),
      SERVER_SYNC_KEY: centralEnv.SERVER_SYNC_KEY,
      RATE_LIMIT_MAX: '1000000',
      LOG_LEVEL: 'info',
    };
    // What compose.yaml's `environment:` gives the services, with this machine's addresses (host network).
    const centralHere = {
      DATABASE_URL: dbUrl(`${tag}_central`),
      REDIS_URL: redisUrl,
      HOST: '127.0.0.1',
      S3_ENDPOINT: `http://127.0.0.1:${ports.s3}`,
      S3_ACCESS_KEY: 'S3RVER',
      S3_SECRET_KEY: 'S3RVER',
      // s3rver takes only its own fixed key, far below the rule for an issued key.
      ALLOW_WEAK_S3_SECRET_KEY: '1',
    };
    const classroomHere = {
      DATABASE_URL: dbUrl(`${tag}_classroom`),
      REDIS_URL: redisUrl,
      HOST: '127.0.0.1',
      RPI_PORT: String(ports.classroom),
    };
    const centralEnvFile = path.join(tmp, 'central.env');
    const classroomEnvFile = path.join(tmp, 'classroom.env');
    writeEnvFile(centralEnvFile, centralEnv);
    writeEnvFile(classroomEnvFile, classroomEnv);
    const backups = path.join(tmp, 'backups');
    await fsp.mkdir(backups, { mode: 0o777 });
    await fsp.chmod(backups, 0o777);
    const flags = (o: Record<string, string>) => Object.entries(o).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    const oneOff = (service: 'central' | 'classroom', args: string[], extra: Record<string, string> = {}) =>
      mustRun(
        [
          'podman',
          'run',
          '--rm',
          '--network',
          'host',
          '--env-file',
          service === 'central' ? centralEnvFile : classroomEnvFile,
          ...flags({ ...(service === 'central' ? centralHere : classroomHere), ...extra }),
          '-v',
          `${backups}:/var/backups/lms`,
          image,
          service,
          ...args,
        ],
        env,
      );

    await check('migrations as one-off containers (podman run --rm … central migrate)', async () => {
      const c = await oneOff('central', ['migrate']);
      const k = await oneOff('classroom', ['migrate']);
      // The demo data set gives the learner and the teacher (the seed is refused in production).
      await oneOff('central', ['seed-demo'], { NODE_ENV: 'test' });
      await oneOff('classroom', ['seed-demo'], { NODE_ENV: 'test' });
      return `${c.split('\n')[0].slice(0, 90)}; ${k.split('\n')[0]}; demo data loaded`;
    });

    await check('compose stack up: podman-compose, central ×2 and the classroom server of compose.yaml', async () => {
      const source = await readCompose(path.join(repoRoot, 'deploy', 'compose', 'compose.yaml'));
      const services: Record<string, Record<string, unknown>> = {};
      const adapt = (name: string, envFile: string, here: Record<string, string>) => {
        const s = { ...source.services[name] };
        const environment = { ...(s.environment as Record<string, string>), ...here };
        delete s.depends_on;
        // Host networking here: compose.yaml's networks are the engine's to make, not this machine's.
        delete s.networks;
        // Named volumes of this run only; the backups folder of the test.
        s.volumes = (s.volumes as string[]).map((v) => (v.startsWith('$') ? `${backups}:/var/backups/lms` : v));
        services[name] = { ...s, image, env_file: [envFile], environment, network_mode: 'host' };
      };
      adapt('central-1', centralEnvFile, { ...centralHere, PORT: String(ports.central[0]) });
      adapt('central-2', centralEnvFile, { ...centralHere, PORT: String(ports.central[1]) });
      adapt('classroom', classroomEnvFile, classroomHere);
      const volumes = Object.fromEntries(
        Object.keys((source as { volumes?: object }).volumes ?? {}).map((v) => [v, {}]),
      );
      await fsp.writeFile(composeFile, JSON.stringify({ services, volumes }, null, 2));
      composeUp = true;
      const up = await run(
        ['podman-compose', '--podman-path', podmanHost, '-p', project, '-f', composeFile, 'up', '-d'],
        env,
      );
      // podman-compose 1.0 exits 0 even when a `podman run` failed.
      const said = up.stdout + up.stderr;
      if (up.code !== 0 || /exit code: [1-9]/.test(said)) {
        throw new Error(
          `podman-compose up: ${said
            .split('\n')
            .filter((l) => /Error/.test(l))
            .join('; ')
            .slice(0, 400)}`,
        );
      }
      // podman-compose 1.0.3 exits 0 when a container could not start (podman's 125 is only printed): the
      // containers' own states say whether each runs.
      const states = async () => {
        const names = (
          await mustRun(
            ['podman', 'ps', '-a', '--format', '{{.Names}}', '--filter', `label=io.podman.compose.project=${project}`],
            env,
          )
        ).split('\n').filter(Boolean);
        return Promise.all(
          names.map(async (n) => {
            const state = ['podman', 'inspect', '--format', '{{.State.Status}} {{.State.ExitCode}}', n];
            return `${n} ${await mustRun(state, env)}`;
          }),
        );
      };
      const notRunning = async () => {
        const all = await states();
        const bad = all.filter((l) => l.split(' ')[1] !== 'running');
        if (all.length !== 3 || bad.length)
          throw new Error(`containers not running: ${(bad.length ? bad : all).join('; ') || 'none created'}`);
      };
      await sleep(1000);
      await notRunning();
      const ready = (port: number) =>
        waitFor(`the container on ${port}`, 60_000, async () => (await plain(port, '/readyz')).status === 200);
      await Promise.all([ready(ports.central[0]), ready(ports.central[1]), ready(ports.classroom)]);
      await notRunning();
      const ids = await mustRun(['podman', 'ps', '-q', '--filter', `label=io.podman.compose.project=${project}`], env);
      const users = await Promise.all(ids.split('\n').map((id) => mustRun(['podman', 'exec', id, 'id', '-u'], env)));
      if (users.some((u) => u !== '10001')) throw new Error(`processes run as ${users.join(', ')}`);
      const health = await Promise.all(
        ids.split('\n').map(async (id) => (await run(['podman', 'healthcheck', 'run', id], env)).code),
      );
      if (health.some((c) => c !== 0)) throw new Error(`podman healthcheck run: exit codes ${health.join(', ')}`);
      const version = await plain(ports.central[0], '/version', {
        headers: { Authorization: `Bearer ${centralEnv.METRICS_TOKEN}` },
      });
      const build = /^X-Build: (\S+)/im.exec(version.head)?.[1] ?? '';
      if (!build.startsWith(`${commit}@`)) throw new Error(`GET /version reports build ${build}, not ${commit}@…`);
      return `${ids.split('\n').length} containers ready, user 10001, HEALTHCHECK healthy on each; /version: ${build}`;
    });

    let ca = '';
    const proxies = 'HAProxy and Caddy (deploy/haproxy.cfg, deploy/Caddyfile, host packages) before the containers';
    await check(proxies, async () => {
      ca = await startProxies({ tmp, logs, ports, site, classroomSite }, waitFor);
      const get = client(ca);
      await waitFor('central through Caddy', 20_000, async () => (await get(`${site}/readyz`)).status === 200);
      await waitFor(
        'classroom through Caddy',
        20_000,
        async () => (await get(`${classroomSite}/readyz`)).status === 200,
      );
      return `${site}/readyz and ${classroomSite}/readyz: 200 over TLS`;
    });
    await check("the proxies expose nothing else: Caddy's admin API off, its metrics on loopback", () =>
      proxyExposure({ ports }));
    const get = client(ca);

    let token = '';
    const password = `Image-${crypto.randomBytes(6).toString('hex')}-A1`;
    await check('first sign-in: set-password as a one-off container, POST /auth/login through Caddy', async () => {
      const printed = await oneOff('central', ['set-password', 'superadmin@superadmin.com', password]);
      const r = await get(`${site}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: password }),
      });
      if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${r.body.toString().slice(0, 200)}`);
      token = (r.json().data as { accessToken: string }).accessToken;
      return `${printed.split('\n')[0]}; signed in`;
    });
    const auth = { Authorization: `Bearer ${token}` };

    const learner = DEMO_IDS.learners[0];
    await check('import a classroom log through Caddy (sync-log), read it back', async () => {
      const starttime = Date.now() - 60_000;
      const login = await get(`${classroomSite}/auth/login`, {
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
      const submit = await get(`${classroomSite}/result/lesson/quiz/${lesson.lessonquizid}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${lt}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ starttime, endtime: starttime + 50_000, result }),
      });
      if (submit.status !== 200) throw new Error(`quiz submission answered ${submit.status}`);
      const sync = await syncLog({ tmp, site, classroomSite }, path.join(tmp, 'studentlog.zip'));
      if (sync.code !== 0)
        throw new Error(`sync-log exited ${sync.code}: ${(sync.stderr || sync.stdout).trim().slice(0, 300)}`);
      const stats = await get(`${site}/student/stats/${learner.studentid}/quiz`, { headers: auth });
      const mark = new Date(starttime).toISOString();
      if (stats.status !== 200 || !stats.body.toString().includes(mark))
        throw new Error(`the attempt of ${mark} is not in /student/stats`);
      const rows = (sync.stdout.split('\n').find((l) => /studentprogress\s/.test(l)) ?? '').trim().replace(/\s+/g, ' ');
      return (
        `quiz on the classroom container, imported into central's containers (${rows || 'the log'}); ` +
        'the attempt is in /student/stats'
      );
    });

    await check('resident memory: containers beside the host install, same warm-up', async () => {
      // The host install: the same node, flags and settings as the systemd units, on the same databases.
      const hostCentral = start(
        'host-central',
        [node, '--enable-source-maps', '--max-semi-space-size=4', '--max-old-space-size=256', 'central/dist/server.js'],
        {
          PATH: process.env.PATH,
          HOME: tmp,
          ...centralEnv,
          ...centralHere,
          PORT: String(ports.hostCentral),
          MALLOC_MMAP_THRESHOLD_: '1048576',
          NODE_ENV: 'production',
        },
        logs,
      ).child;
      const hostClassroom = start(
        'host-classroom',
        [node, '--max-semi-space-size=1', '--max-old-space-size=160', 'classroom/dist/server.js'],
        {
          PATH: process.env.PATH,
          HOME: tmp,
          ...classroomEnv,
          ...classroomHere,
          RPI_PORT: String(ports.hostClassroom),
          MEDIA_DIR: path.join(tmp, 'media'),
          LOG_DIR: path.join(tmp, 'classroom-logs'),
          MALLOC_MMAP_THRESHOLD_: '1048576',
        },
        logs,
      ).child;
      const ready = (port: number) =>
        waitFor(`the process on ${port}`, 60_000, async () => (await plain(port, '/readyz')).status === 200);
      await Promise.all([ready(ports.hostCentral), ready(ports.hostClassroom)]);
      // The same requests on each: a staff sign-in and 50 reads on central, a learner sign-in and 50 reads on
      // the classroom.
      const warmCentral = async (port: number) => {
        const r = await plain(port, '/auth/login', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ lmsusername: 'superadmin@superadmin.com', lmsuserpassword: password }),
        });
        const t = (JSON.parse(r.body) as { data: { accessToken: string } }).data.accessToken;
        for (let i = 0; i < 50; i += 1)
          await plain(port, `/student/stats/${learner.studentid}/quiz`, { headers: { Authorization: `Bearer ${t}` } });
      };
      const warmClassroom = async (port: number) => {
        await plain(port, '/auth/login', {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ studentusername: learner.schoolusername, studentpassword: DEMO_IDS.password }),
        });
        for (let i = 0; i < 50; i += 1) await plain(port, '/readyz');
      };
      await warmCentral(ports.central[1]);
      await warmCentral(ports.hostCentral);
      await warmClassroom(ports.classroom);
      await warmClassroom(ports.hostClassroom);
      await sleep(2000);
      const pidOf = async (service: string) =>
        Number(await mustRun(['podman', 'inspect', '--format', '{{.State.Pid}}', `${project}_${service}_1`], env));
      const rss = {
        central: rssOf(await pidOf('central-2')),
        hostCentral: rssOf(hostCentral.pid ?? 0),
        classroom: rssOf(await pidOf('classroom')),
        hostClassroom: rssOf(hostClassroom.pid ?? 0),
      };
      hostCentral.kill('SIGTERM');
      hostClassroom.kill('SIGTERM');
      figures.push({
        what: 'central RSS: container / host install',
        value: `${mb(rss.central)} / ${mb(rss.hostCentral)}`,
      });
      figures.push({
        what: 'classroom RSS: container / host install',
        value: `${mb(rss.classroom)} / ${mb(rss.hostClassroom)}`,
      });
      const ratio = (a: number, b: number) => (a / b).toFixed(2);
      // The same node and code: a container may not cost much more than the host install.
      if (rss.central > rss.hostCentral * 1.25 || rss.classroom > rss.hostClassroom * 1.25) {
        throw new Error(
          `more than 1.25 × the host install: central ${ratio(rss.central, rss.hostCentral)}, ` +
            `classroom ${ratio(rss.classroom, rss.hostClassroom)}`,
        );
      }
      return (
        `central ${mb(rss.central)} (host ${mb(rss.hostCentral)}, ×${ratio(rss.central, rss.hostCentral)}), ` +
        `classroom ${mb(rss.classroom)} (host ${mb(rss.hostClassroom)}, ×${ratio(rss.classroom, rss.hostClassroom)})`
      );
    });

    await check('restart one central container under a loop of writes', async () => {
      // Tag names are 3 to 8 characters: w1000, w1001, … (the demo data has no such name).
      const loop = loadLoop(
        (i) =>
          get(`${site}/documenttag/create`, {
            method: 'POST',
            headers: { ...auth, 'Content-Type': 'application/json' },
            body: JSON.stringify({ documenttagname: `w${1000 + i}` }),
          }),
        4,
      );
      await sleep(2000);
      const t = Date.now();
      await compose(['restart', '-t', '45', 'central-1']);
      const stopMs = Date.now() - t;
      await waitFor(
        'central-1 after the restart',
        60_000,
        async () => (await plain(ports.central[0], '/readyz')).status === 200,
      );
      // Caddy's 1 s active check takes the instance back before the loop ends.
      await sleep(2500);
      await loop.stop();
      const log = await run(['podman', 'logs', `${project}_central-1_1`], env);
      const drained = /"msg":"stopped"/.test(log.stdout + log.stderr);
      const rows = await knexFactory({ client: 'pg', connection: dbUrl(`${tag}_central`), pool: { min: 0, max: 1 } });
      let stored = 0;
      try {
        stored = Number((await rows('documenttags').whereRaw("documenttagname ~ '^w[0-9]+$'").count({ n: '*' }))[0].n);
      } finally {
        await rows.destroy();
      }
      if (loop.failures.length)
        throw new Error(`${loop.failures.length} of ${loop.sent} failed: ${loop.failures.slice(0, 3).join('; ')}`);
      if (!drained) throw new Error('central-1 did not log a graceful stop ("stopped") before its restart');
      if (stored !== loop.ok.length) throw new Error(`${loop.ok.length} writes answered 200, ${stored} rows stored`);
      return (
        `${loop.sent} POST /documenttag/create, 0 failed, ${stored} rows stored; ` +
        `central-1 drained and stopped on SIGTERM (restart ${(stopMs / 1000).toFixed(1)} s)`
      );
    });

    await check('backup as a one-off container (pg_dump of the image)', async () => {
      const out = await oneOff('central', ['backup', '--to', '/var/backups/lms/central']);
      const manifest = JSON.parse(await fsp.readFile(path.join(backups, 'central', 'manifest.json'), 'utf8')) as object;
      if (!manifest) throw new Error('no manifest');
      return out.split('\n').pop() ?? 'backup written';
    });

    await check('stop everything: SIGTERM to every container, each exits 0', async () => {
      await compose(['stop', '-t', '45']);
      const codes = await Promise.all(
        ['central-1', 'central-2', 'classroom'].map(
          async (s) =>
            `${s} ${await mustRun(['podman', 'inspect', '--format', '{{.State.ExitCode}}', `${project}_${s}_1`], env)}`,
        ),
      );
      if (codes.some((c) => !c.endsWith(' 0'))) throw new Error(`exit codes: ${codes.join(', ')}`);
      return `exit codes: ${codes.join(', ')}`;
    });
  } catch (err) {
    failed = true;
    say(`image-test stopped: ${(err as Error).message}`);
  } finally {
    if (composeUp) {
      const logsOf = await run(
        ['podman', 'ps', '-a', '--format', '{{.Names}}', '--filter', `label=io.podman.compose.project=${project}`],
        env,
      );
      for (const name of logsOf.stdout.trim().split('\n').filter(Boolean)) {
        const l = await run(['podman', 'logs', name], env);
        await fsp.writeFile(path.join(logs, `${name}.log`), l.stdout + l.stderr);
      }
      await run(
        ['podman-compose', '--podman-path', podmanHost, '-p', project, '-f', composeFile, 'down', '-t', '45'],
        env,
      );
      await run(['podman', 'network', 'rm', `${project}_default`], env);
      const vols = await run(
        ['podman', 'volume', 'ls', '-q', '--filter', `label=io.podman.compose.project=${project}`],
        env,
      );
      for (const v of vols.stdout.trim().split('\n').filter(Boolean))
        await run(['podman', 'volume', 'rm', '-f', v], env);
    }
    await stopChildren();
    try {
      await admin.raw(`DROP DATABASE IF EXISTS ${tag}_central WITH (FORCE)`);
      await admin.raw(`DROP DATABASE IF EXISTS ${tag}_classroom WITH (FORCE)`);
    } finally {
      await admin.destroy();
    }
    if (failed || anyCheckFailed()) say(`logs of every process and container: ${logs}`);
    else await fsp.rm(tmp, { recursive: true, force: true });
  }
  figures.push({ what: 'image-test in all', value: `${((Date.now() - t0) / 1000).toFixed(0)} s` });
  printTable();
  printFigures();
  return failed || anyCheckFailed() ? 1 : 0;
}

exitWith(main);
