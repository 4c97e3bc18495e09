import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * The teacher's device side of the classroom-to-cloud log path (spec "Data flows" 2): sign in on both
 * servers, download the classroom's GET /export/log to studentlog.zip, upload it to the central API's
 * PUT /log/import. A failed upload leaves the ZIP on disk so that it can be sent again with `zip`.
 */
export interface SyncOptions {
  classroom?: string;
  central: string;
  user: string;
  password: string;
  /** Where the download goes (default studentlog.zip). */
  out: string;
  /** Upload this ZIP instead of downloading (a retry after a failed upload). */
  zip?: string;
  offline: boolean;
  /** Keep the ZIP after a successful upload (by default it is removed once central holds it). */
  keep: boolean;
  /** Uploads sent again after an answer that says "try later" (default 5); a refusal of the file is never retried. */
  retries?: number;
  /** The longest wait between two tries, whatever Retry-After asks (default 300 s). */
  maxWaitSeconds?: number;
}

const DEFAULT_RETRIES = 5;
const DEFAULT_MAX_WAIT_SECONDS = 300;

export interface SyncIo {
  /** Progress and results for the person at the device. */
  log(line: string): void;
  /** A transfer's progress; `total` is 0 when the size is unknown. */
  progress(what: 'download' | 'upload', done: number, total: number): void;
}

export class SyncError extends Error {}

/** A refusal that says "not now" (an outage of the server's database or object store, too many imports at once). */
export class SyncUnavailable extends SyncError {
  constructor(message: string, readonly retryAfterSeconds: number) {
    super(message);
  }
}

/** Seconds to wait, from a Retry-After header (seconds or an HTTP date); undefined when it says nothing usable. */
export function retryAfterSeconds(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\d+$/.test(v.trim())) return Number(v.trim());
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export interface ImportSummary {
  syncid?: string;
  archive?: string;
  imported?: Record<string, number>;
  pending?: number;
  refused?: number;
  /** Rows new or different from central's; 0 when central already held the whole log. */
  changed?: number;
  logfiles?: number;
  logIniImported?: boolean;
}

const trimSlash = (u: string) => u.replace(/\/+$/, '');

async function signIn(url: string, body: Record<string, string>, where: string): Promise<string> {
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (err) {
    throw new SyncError(
      `cannot reach the ${where} at ${new URL(url).origin} ` +
        `(${(err as Error & { cause?: Error }).cause?.message ?? (err as Error).message})`,
    );
  }
  const json = (await res.json().catch(() => ({}))) as { data?: { accessToken?: string }; errormessage?: string };
  const token = json.data?.accessToken;
  if (res.status !== 200 || !token)
    throw new SyncError(`sign-in on the ${where} failed: ${json.errormessage ?? `HTTP ${res.status}`}`);
  return token;
}

function requester(url: URL): typeof http.request {
  return (url.protocol === 'https:' ? https.request : http.request) as typeof http.request;
}

function counter(what: 'download' | 'upload', total: number, io: SyncIo): Transform {
  let done = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      done += chunk.length;
      io.progress(what, done, total);
      cb(null, chunk);
    },
  });
}

async function readError(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    const j = JSON.parse(text) as { errormessage?: string };
    return j.errormessage ?? text.slice(0, 200);
  } catch {
    return text.slice(0, 200) || `HTTP ${res.statusCode}`;
  }
}

/** GET /export/log into `file` (through a .part file, so that a cut download never looks complete). */
async function download(classroom: string, token: string, file: string, io: SyncIo): Promise<number> {
  const url = new URL(`${trimSlash(classroom)}/export/log`);
  const part = `${file}.part`;
  try {
    await new Promise<void>((resolve, reject) => {
      const req = requester(url)(
        url,
        { method: 'GET', headers: { Authorization: `Bearer ${token}`, Accept: 'application/zip' } },
        (res) => {
          if (res.statusCode !== 200) {
            readError(res).then(
              (m) =>
                reject(new SyncError(`the classroom server refused the log export: ${m} (HTTP ${res.statusCode})`)),
              reject,
            );
            return;
          }
          const total = Number(res.headers['content-length'] ?? 0);
          pipeline(res, counter('download', total, io), fs.createWriteStream(part)).then(resolve, reject);
        },
      );
      req.on('error', (err) =>
        reject(new SyncError(`cannot download the log from the classroom server: ${err.message}`)),
      );
      req.end();
    });
    await fsp.rename(part, file);
  } catch (err) {
    await fsp.rm(part, { force: true });
    throw err;
  }
  return (await fsp.stat(file)).size;
}

/** PUT /log/import with the ZIP as multipart field `importfile`, streamed from disk with progress. */
async function upload(
  central: string,
  token: string,
  file: string,
  offline: boolean,
  io: SyncIo,
): Promise<ImportSummary> {
  const url = new URL(`${trimSlash(central)}/log/import?offline=${offline ? 'true' : 'false'}`);
  const size = (await fsp.stat(file)).size;
  const boundary = `----lms-sync-log-${crypto.randomBytes(12).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; filename="studentlog.zip"\r\nContent-Type: ` +
      `application/zip\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise<ImportSummary>((resolve, reject) => {
    const req = requester(url)(
      url,
      {
        method: 'PUT',
        headers: {
          Authorization: `Bearer ${token}`,
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': String(head.length + size + tail.length),
          Accept: 'application/json',
        },
      },
      (res) => {
        if (res.statusCode !== 200) {
          // Central answers an outage of its database or object store with its usual 400 plus Retry-After; a
          // proxy in front of a central that is down answers 502-504.
          const wait = retryAfterSeconds(res.headers['retry-after']);
          const gateway = res.statusCode === 502 || res.statusCode === 503 || res.statusCode === 504;
          readError(res).then((m) => {
            const text = `the central API ${wait !== undefined || gateway ? 'cannot take the log now' : 'refused the ' +
              'log'}: ${m} (HTTP ${res.statusCode})`;
            reject(wait !== undefined || gateway ? new SyncUnavailable(text, wait ?? 30) : new SyncError(text));
          }, reject);
          return;
        }
        const header = res.headers['x-log-import'];
        res.resume();
        res.on('end', () => {
          try {
            resolve(typeof header === 'string' ? (JSON.parse(header) as ImportSummary) : {});
          } catch {
            resolve({});
          }
        });
      },
    );
    req.on('error', (err) => reject(new SyncError(`cannot upload the log to the central API: ${err.message}`)));
    req.write(head);
    const body = fs.createReadStream(file);
    const count = counter('upload', size, io);
    body.on('error', (err) => req.destroy(err));
    body.pipe(count);
    count.on('data', (c: Buffer) => {
      if (!req.write(c)) {
        count.pause();
        req.once('drain', () => count.resume());
      }
    });
    count.on('end', () => req.end(tail));
  });
}

export function formatSummary(s: ImportSummary): string[] {
  const lines: string[] = [];
  if (!s.syncid) return ['central accepted the log'];
  lines.push(`central accepted the log (sync ${s.syncid}, archived as ${s.archive})`);
  if (s.logIniImported === false) lines.push('  log.ini held no complete activity log: no rows were imported');
  for (const [table, n] of Object.entries(s.imported ?? {}))
    lines.push(`  ${table.padEnd(28)} ${n.toLocaleString('en-US').padStart(9)} rows`);
  if (s.changed === 0 && s.logIniImported !== false)
    lines.push('  nothing changed: central already held every row of this log');
  if (s.refused)
    lines.push(`  ${s.refused.toLocaleString('en-US')} rows refused: their learner belongs to another school`);
  if (s.pending)
    lines.push(
      `  ${s.pending.toLocaleString('en-US')} rows wait in logimportpending: their learner is not in central yet`,
    );
  lines.push(`  ${s.logfiles ?? 0} server log file(s) recorded`);
  return lines;
}

export async function syncLog(o: SyncOptions, io: SyncIo): Promise<ImportSummary> {
  let file = o.zip;
  if (!file) {
    if (!o.classroom)
      throw new SyncError('--classroom URL is required (or --zip FILE to upload a ZIP already downloaded)');
    const classroomToken = await signIn(
      `${trimSlash(o.classroom)}/auth/login`,
      { studentusername: o.user, studentpassword: o.password },
      'classroom server',
    );
    io.log(`signed in on the classroom server as ${o.user}`);
    const bytes = await download(o.classroom, classroomToken, o.out, io);
    io.log(`downloaded the classroom log: ${o.out} (${(bytes / 1024).toFixed(1)} KB)`);
    file = o.out;
  } else if (!fs.existsSync(file)) {
    throw new SyncError(`no such file: ${file}`);
  }
  let summary!: ImportSummary;
  try {
    const centralToken = await signIn(
      `${trimSlash(o.central)}/auth/school/login`,
      { lmsusername: o.user, lmsuserpassword: o.password },
      'central API',
    );
    io.log(`signed in on the central API as ${o.user}`);
    const retries = o.retries ?? DEFAULT_RETRIES;
    const maxWait = o.maxWaitSeconds ?? DEFAULT_MAX_WAIT_SECONDS;
    for (let attempt = 1; ; attempt++) {
      try {
        summary = await upload(o.central, centralToken, file, o.offline, io);
        break;
      } catch (err) {
        if (!(err instanceof SyncUnavailable)) throw err;
        if (attempt > retries) throw new SyncError(`${err.message}\ngave up after ${attempt} tries`);
        const wait = Math.min(err.retryAfterSeconds, maxWait);
        io.log(`${err.message}; trying again in ${wait} s (try ${attempt + 1} of ${retries + 1})`);
        await new Promise((resolve) => setTimeout(resolve, wait * 1000));
      }
    }
  } catch (err) {
    const again = `npm run sync-log -- --central ${o.central} --user ${o.user} --zip ${file}`;
    throw new SyncError(`${(err as Error).message}\nthe log is kept in ${file}; send it again with: ${again}`);
  }
  for (const line of formatSummary(summary)) io.log(line);
  if (!o.keep) await fsp.rm(file, { force: true });
  return summary;
}
