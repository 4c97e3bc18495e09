/**
 * What `make deploy-test` (scripts/src/deploy-test) and `make image-test` (scripts/src/image-test) both do to
 * run the operator's kit on one machine: the checks and their table, free loopback ports, processes with a log
 * file each, commands run to their end, an HTTPS client trusting Caddy's local CA and plain HTTP on loopback.
 * Each test is a process of its own, so the checks and the children started are this module's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import { repoRoot } from '@lms/db';

export interface Check { name: string; ok: boolean; ms: number; detail: string }

export const checks: Check[] = [];
const children: ChildProcess[] = [];
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const say = (line: string) => process.stdout.write(`${line}\n`);

/** Runs one check: its line is printed when it ends, and its row waits for printTable(). */
export async function check(name: string, fn: () => Promise<string>): Promise<boolean> {
  const t0 = Date.now();
  let ok = true;
  let detail: string;
  try {
    detail = await fn();
  } catch (err) {
    ok = false;
    detail = err instanceof Error ? err.message : String(err);
  }
  const c = { name, ok, ms: Date.now() - t0, detail };
  checks.push(c);
  say(`${ok ? 'ok  ' : 'FAIL'} ${name} (${(c.ms / 1000).toFixed(1)} s): ${detail}`);
  return ok;
}

export const anyCheckFailed = () => checks.some((c) => !c.ok);

/** The table of the checks, as deploy/README.md shows it. */
export function printTable(): void {
  const rows = checks.map((c) => [
    c.ok ? 'ok' : 'FAILED',
    c.name,
    `${(c.ms / 1000).toFixed(1)} s`,
    c.detail.split('\n')[0],
  ]);
  const header = ['result', 'check', 'time', 'what was seen'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  say('');
  say(line(header));
  say(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const r of rows) say(line(r));
}

/** The exit code of main() is the process's; an uncaught error prints its stack and exits 1. */
export function exitWith(main: () => Promise<number>): void {
  main().then((code) => process.exit(code), (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

export const secret = () => crypto.randomBytes(36).toString('base64url');

/** KEY=value lines of an env file (comments and empty values left out). */
export function readEnvFile(file: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^([A-Z0-9_]+)=(.*)$/.exec(line.trim());
    if (m) env[m[1]] = m[2];
  }
  return env;
}

/** A Redis database of the run's own (rate-limit counters and revocation messages of this run only). */
export const redisOfRun = (base: string) => `${base.replace(/\/\d*$/, '')}/${8 + crypto.randomInt(8)}`;

/** s3rver standing in for the S3 store: its data under the run's folder, on a loopback port. */
export const s3rverArgv = (tmp: string, port: number) => [process.execPath,
  path.join(repoRoot, 'node_modules', 's3rver', 'bin', 's3rver.js'),
  '-d', path.join(tmp, 's3'), '-a', '127.0.0.1', '-p', String(port), '--silent'];

export interface Ran { code: number | null; stdout: string; stderr: string }

export function run(argv: string[], env: NodeJS.ProcessEnv = process.env, cwd = repoRoot): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface MustRunOptions {
  cwd?: string;
  /** The words of argv that name the command when it fails, [from, to) (the first four unless given). */
  named?: readonly [number, number];
  /** How much of its output a failure quotes: the first n characters, or the last -n (the last 600 unless given). */
  quoted?: number;
}

/** Runs a command to its end: its output, trimmed, or an error with its exit code and what it said. */
export async function mustRun(argv: string[], env: NodeJS.ProcessEnv = process.env, o: MustRunOptions = {}) {
  const r = await run(argv, env, o.cwd);
  if (r.code !== 0) {
    const [from, to] = o.named ?? [0, 4];
    const quoted = o.quoted ?? -600;
    const said = (r.stderr || r.stdout).trim();
    throw new Error(
      `${argv.slice(from, to).join(' ')} exited ${r.code}: ${quoted < 0 ? said.slice(quoted) : said.slice(0, quoted)}`,
    );
  }
  return r.stdout.trim();
}

export interface Proc { child: ChildProcess; exited: Promise<number | null>; log: string }

/** Starts a process with its output in `<logDir>/<name>.log`; stopChildren() ends it with the run. */
export function start(name: string, argv: string[], env: NodeJS.ProcessEnv, logDir: string, cwd = repoRoot): Proc {
  const log = path.join(logDir, `${name}.log`);
  const out = fs.openSync(log, 'a');
  const child = spawn(argv[0], argv.slice(1), { cwd, env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, log };
}

/** SIGTERM to every process started that still runs, SIGKILL to any still there half a second later. */
export async function stopChildren(): Promise<void> {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  await sleep(500);
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

export interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  json(): { error?: boolean; data?: unknown; errormessage?: string };
}
export type Client = (
  url: string,
  o?: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
) => Promise<Reply>;

/** One HTTPS client trusting Caddy's local CA, keeping connections alive as a browser would. */
export function client(ca: string): Client {
  const agent = new https.Agent({ keepAlive: true, ca, maxSockets: 16 });
  return (url, o = {}) =>
    new Promise((resolve, reject) => {
      const options = {
        method: o.method ?? 'GET', headers: o.headers, agent, servername: 'localhost', timeout: 30_000,
      };
      const req = https.request(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks);
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: () => JSON.parse(body.toString()) });
        });
        res.on('error', reject);
      });
      req.on('timeout', () => req.destroy(new Error('timed out')));
      req.on('error', reject);
      req.end(o.body);
    });
}

let lastBody = '';
/** The start of the body of the last answer plain() read: what a service said while it was not ready. */
export const lastAnswer = () => lastBody;

export interface PlainRequest { method?: string; body?: string; headers?: Record<string, string> }

/** Plain HTTP on loopback, straight to a service (no proxy, no TLS): status, head and body. */
export function plain(port: number, p: string, o: PlainRequest = {}) {
  return new Promise<{ status: number; body: string; head: string }>((resolve, reject) => {
    const sock = net.connect(port, '127.0.0.1', () => {
      const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      // A request without a body says nothing of its length (RFC 9110, 8.6).
      const length = o.body === undefined ? '' : `Content-Length: ${Buffer.byteLength(o.body)}\r\n`;
      const head = `${o.method ?? 'GET'} ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}${length}`;
      sock.write(`${head}\r\n${o.body ?? ''}`);
    });
    let all = '';
    sock.on('data', (d: Buffer) => { all += d.toString(); });
    sock.on('end', () => {
      const body = all.split('\r\n\r\n')[1] ?? '';
      lastBody = body.slice(0, 300);
      resolve({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(all)?.[1] ?? 0), body, head: all.split('\r\n\r\n')[0] });
    });
    sock.on('error', reject);
  });
}

export type WaitFor = (what: string, ms: number, probe: () => Promise<boolean>) => Promise<void>;

export interface Patience {
  /** Milliseconds between two probes. */
  every: number;
  /** A probe's error that ends the wait at once (a process that exited will not answer), not just this probe. */
  fatal?: RegExp;
  /** Whether the error after the time is up quotes lastAnswer(). */
  quoteLastAnswer?: boolean;
}

/** waitFor(what, ms, probe): probes until one answers true, or throws `<what>: not ready within …`. */
export function waiter(o: Patience): WaitFor {
  return async (what, ms, probe) => {
    const until = Date.now() + ms;
    for (;;) {
      try {
        if (await probe()) return;
      } catch (err) {
        if (o.fatal?.test((err as Error).message)) throw err;
      }
      if (Date.now() > until)
        throw new Error(`${what}: not ready within ${ms / 1000} s${o.quoteLastAnswer ? ` ${lastAnswer()}` : ''}`);
      await sleep(o.every);
    }
  };
}
