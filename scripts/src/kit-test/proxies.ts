/**
 * The kit's two proxies as deploy/README.md runs them, in front of whatever serves on the given ports:
 * HAProxy with deploy/haproxy.cfg, then Caddy with deploy/Caddyfile and `tls internal` (its own local CA,
 * which the clients of the tests trust). And sync-log run through them as a teacher would.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DEMO_IDS } from '@lms/shared';
import { repoRoot } from '@lms/db';
import { plain, run, start, type Ran, type WaitFor } from './common';

export interface ProxiedKit {
  /** The run's folder: Caddy's data and HAProxy's socket go there. */
  tmp: string;
  logs: string;
  ports: {
    central: number[];
    classroom: number;
    /** Caddy's plain HTTP port (the sites themselves are on site and classroomSite). */
    http: number;
    haproxy: { central: number; classroom: number; stats: number };
    /** Caddy's metrics site (deploy/Caddyfile: 2020 unless given). */
    caddyMetrics: number;
  };
  /** https://localhost:<port> of the central site and of the classroom site. */
  site: string;
  classroomSite: string;
}

/** Caddy's local CA, which signs the sites' certificates. */
export const caddyRootCrt = (tmp: string) =>
  path.join(tmp, 'caddy', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');

/** HAProxy with deploy/haproxy.cfg in front of the given ports; resolves once it answers central's /readyz. */
export async function startHaproxy(
  kit: Pick<ProxiedKit, 'tmp' | 'logs'> & { ports: Pick<ProxiedKit['ports'], 'central' | 'classroom' | 'haproxy'> },
  waitFor: WaitFor,
  cwd = repoRoot,
): Promise<void> {
  const { tmp, logs, ports } = kit;
  const deploy = path.join(repoRoot, 'deploy');
  const haproxy = start('haproxy', ['haproxy', '-f', path.join(deploy, 'haproxy.cfg')], {
    PATH: process.env.PATH, HOME: tmp,
    LMS_HAPROXY_LOG: 'stdout', LMS_HAPROXY_SOCKET: path.join(tmp, 'haproxy.sock'),
    LMS_HAPROXY_STATS: `127.0.0.1:${ports.haproxy.stats}`,
    LMS_HAPROXY_CENTRAL: `127.0.0.1:${ports.haproxy.central}`,
    LMS_HAPROXY_CLASSROOM: `127.0.0.1:${ports.haproxy.classroom}`,
    LMS_CENTRAL_1: `127.0.0.1:${ports.central[0]}`, LMS_CENTRAL_2: `127.0.0.1:${ports.central[1]}`,
    LMS_CLASSROOM_1: `127.0.0.1:${ports.classroom}`,
  }, logs, cwd);
  await waitFor('HAProxy', 10_000, async () => {
    if (haproxy.child.exitCode !== null)
      throw new Error(`haproxy exited ${haproxy.child.exitCode}: ${fs.readFileSync(haproxy.log, 'utf8').slice(-400)}`);
    return (await plain(ports.haproxy.central, '/readyz')).status === 200;
  });
}

/** Starts HAProxy, then Caddy, each once the one before answers; resolves to Caddy's CA certificate. */
export async function startProxies(kit: ProxiedKit, waitFor: WaitFor, cwd = repoRoot): Promise<string> {
  const { tmp, logs, ports } = kit;
  const deploy = path.join(repoRoot, 'deploy');
  await startHaproxy(kit, waitFor, cwd);
  const xdg = path.join(tmp, 'caddy');
  start('caddy', ['caddy', 'run', '--config', path.join(deploy, 'Caddyfile'), '--adapter', 'caddyfile'], {
    PATH: process.env.PATH, HOME: tmp,
    XDG_DATA_HOME: path.join(xdg, 'data'), XDG_CONFIG_HOME: path.join(xdg, 'config'),
    LMS_SITE: kit.site, LMS_CLASSROOM_SITE: kit.classroomSite,
    LMS_CENTRAL_UPSTREAMS: `127.0.0.1:${ports.haproxy.central}`,
    LMS_CLASSROOM_UPSTREAMS: `127.0.0.1:${ports.haproxy.classroom}`,
    LMS_TLS: 'tls internal',
    LMS_CADDY_METRICS_PORT: String(ports.caddyMetrics),
    LMS_CADDY_GLOBAL: `skip_install_trust\nhttp_port ${ports.http}\nauto_https disable_redirects`,
  }, logs, cwd);
  const rootCrt = caddyRootCrt(tmp);
  await waitFor('Caddy\'s local CA', 30_000, async () => fs.existsSync(rootCrt));
  return fsp.readFile(rootCrt, 'utf8');
}

/** `npm run sync-log` as the demo teacher: the classroom's log, through Caddy, into central. */
export function syncLog(kit: Pick<ProxiedKit, 'tmp' | 'site' | 'classroomSite'>, out: string): Promise<Ran> {
  const argv = [process.execPath, 'scripts/dist/sync-log/index.js', '--classroom', kit.classroomSite,
    '--central', kit.site, '--user', DEMO_IDS.teacher.schoolusername, '--out', out];
  return run(argv, {
    PATH: process.env.PATH,
    HOME: kit.tmp,
    SYNC_LOG_PASSWORD: DEMO_IDS.password,
    NODE_EXTRA_CA_CERTS: caddyRootCrt(kit.tmp),
  });
}

/** Whether a TCP connection to host:port is refused (nothing listens there). */
export function refused(port: number, host = '127.0.0.1', localAddress?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host, localAddress });
    sock.setTimeout(3000);
    sock.once('connect', () => { sock.destroy(); resolve(false); });
    sock.once('timeout', () => { sock.destroy(); resolve(false); });
    sock.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** GET over plain HTTP from a chosen local address (127.0.0.2 is as much this host's as 127.0.0.1). */
export function getFrom(
  localAddress: string,
  port: number,
  p: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: p, localAddress, headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (d: Buffer) => { body += d.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

/**
 * What the running proxies expose besides the sites: Caddy's admin API refused (port 2019 closed), Caddy's
 * metrics answering on loopback and refused from any other address (`bind 127.0.0.1`).
 */
export async function proxyExposure(kit: Pick<ProxiedKit, 'ports'>): Promise<string> {
  if (!(await refused(2019))) throw new Error("Caddy's admin API answers on 127.0.0.1:2019 (admin off expected)");
  const m = await getFrom('127.0.0.1', kit.ports.caddyMetrics, '/metrics');
  if (m.status !== 200 || !/^caddy_http_requests_total/m.test(m.body))
    throw new Error(`Caddy's metrics on 127.0.0.1:${kit.ports.caddyMetrics} answered ${m.status} without its counters`);
  // Another address of this host: the metrics site listens on 127.0.0.1 alone.
  const others = os.networkInterfaces();
  const outside = Object.values(others).flat().find((a) => a && a.family === 'IPv4' && !a.internal)?.address;
  if (outside && !(await refused(kit.ports.caddyMetrics, outside)))
    throw new Error(`Caddy's metrics answer on ${outside}:${kit.ports.caddyMetrics}, not on loopback alone`);
  return (
    "Caddy's admin API refused (127.0.0.1:2019 closed); Caddy's metrics on " +
    `127.0.0.1:${kit.ports.caddyMetrics}${outside ? ` only (refused on ${outside})` : ''}`
  );
}
