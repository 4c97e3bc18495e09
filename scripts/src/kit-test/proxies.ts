/**
 * The kit's two proxies as deploy/README.md runs them, in front of whatever serves on the given ports:
 * HAProxy with deploy/haproxy.cfg, then Caddy with deploy/Caddyfile and `tls internal` (its own local CA,
 * which the clients of the tests trust). And sync-log run through them as a teacher would.
 */
import fs from 'node:fs';
import fsp from 'node:fs/promises';
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
  };
  /** https://localhost:<port> of the central site and of the classroom site. */
  site: string;
  classroomSite: string;
}

/** Caddy's local CA, which signs the sites' certificates. */
export const caddyRootCrt = (tmp: string) =>
  path.join(tmp, 'caddy', 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');

/** Starts HAProxy, then Caddy, each once the one before answers; resolves to Caddy's CA certificate. */
export async function startProxies(kit: ProxiedKit, waitFor: WaitFor, cwd = repoRoot): Promise<string> {
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
  const xdg = path.join(tmp, 'caddy');
  start('caddy', ['caddy', 'run', '--config', path.join(deploy, 'Caddyfile'), '--adapter', 'caddyfile'], {
    PATH: process.env.PATH, HOME: tmp,
    XDG_DATA_HOME: path.join(xdg, 'data'), XDG_CONFIG_HOME: path.join(xdg, 'config'),
    LMS_SITE: kit.site, LMS_CLASSROOM_SITE: kit.classroomSite,
    LMS_CENTRAL_UPSTREAMS: `127.0.0.1:${ports.haproxy.central}`,
    LMS_CLASSROOM_UPSTREAMS: `127.0.0.1:${ports.haproxy.classroom}`,
    LMS_TLS: 'tls internal',
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
