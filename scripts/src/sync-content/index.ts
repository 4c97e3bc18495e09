import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';
import { parseArgs } from 'node:util';
import { repoRoot } from '@lms/db';
import { CONTENT_KEY_LIST, parseContentPackage, readPackageJson } from '@lms/shared';
import { SyncContentError, mb, type Log } from './common';
import { curriculumMedia, describeSummary, mediaFromCentral, mediaFromSaved, type MediaSummary } from './media';

export { MANIFEST, curriculumMedia, mediaFromCentral, mediaFromSaved, readManifest, type MediaSummary } from './media';

/**
 * The client-side curriculum sync for a device or an operator: download the package from the central API
 * (`GET /sync/content`) and upload it to a classroom server (`PUT /import/master`), or upload a package
 * saved earlier when there is no link to central. The package is checked before it is sent, so a broken
 * download never reaches the classroom (which would refuse it anyway and keep its content).
 */

export interface SyncContentOptions {
  /** Central API base address; needed unless `file` is given. */
  central?: string;
  centralToken?: string;
  /** Or sign in to central (`POST /auth/login`) with a staff account. */
  centralUser?: string;
  centralPassword?: string;
  /** Or sign in to the classroom (`POST /auth/login`) with a staff school account. */
  classroomUser?: string;
  classroomPassword?: string;
  /** Classroom server base address; without it the package is only downloaded (to `save`). */
  classroom?: string;
  /** A staff token of the classroom server (accepted while it runs offline)… */
  classroomToken?: string;
  /** …or the SERVER_SYNC_KEY shared with the central API. */
  syncKey?: string;
  /** Upload this saved package instead of downloading one. */
  file?: string;
  /** Keep the downloaded package here. */
  save?: string;
  /** Longest silence on a connection (default 60 s). */
  idleTimeoutMs?: number;
  /** The classroom server's media folder (its MEDIA_DIR); without it the media step is skipped. */
  mediaDir?: string;
  /** Offline: copy the media from this saved folder or ZIP instead of downloading it. */
  mediaFrom?: string;
  /** Where media files are downloaded from: `<mediaUrl>/<file>` (default: the central API's `/media`). */
  mediaUrl?: string;
  /** Only these curricula's media (default: every live curriculum of the package). */
  curriculumids?: string[];
  /** Skip the media step. */
  noMedia?: boolean;
}


function transportOf(url: URL) {
  if (url.protocol === 'http:') return http;
  if (url.protocol === 'https:') return https;
  throw new SyncContentError(`${url.href}: only http and https addresses are supported`);
}

function joinUrl(base: string, route: string): URL {
  let url: URL;
  try {
    url = new URL(base.replace(/\/+$/, '') + route);
  } catch {
    throw new SyncContentError(`Not a valid address: ${base}`);
  }
  transportOf(url);
  return url;
}

/** Reports progress at most every half second, and once at the end. */
function progress(label: string, total: number | undefined, log: Log) {
  let seen = 0;
  let last = 0;
  const report = (final: boolean) => {
    const now = Date.now();
    if (!final && now - last < 500) return;
    last = now;
    log(total ? `${label} ${mb(seen)} of ${mb(total)} (${Math.floor((seen / total) * 100)}%)` : `${label} ${mb(seen)}`);
  };
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      seen += chunk.length;
      report(false);
      cb(null, chunk);
    },
    flush(cb) {
      report(true);
      cb();
    },
  });
  return counter;
}

function networkError(url: URL, err: NodeJS.ErrnoException): SyncContentError {
  const code = err.code ? ` (${err.code})` : '';
  if (err.code === 'ECONNREFUSED')
    return new SyncContentError(
      `Nothing answers at ${url.origin}${code}: is the server running, is the address right?`,
    );
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN')
    return new SyncContentError(`Cannot resolve ${url.hostname}${code}: check the address`);
  if (err.code === 'ETIMEDOUT') return new SyncContentError(`${url.origin} stopped answering${code}`);
  return new SyncContentError(`${url.origin}: ${err.message}${code}`);
}

/** The `errormessage` of an error envelope, else the start of the body. */
function describeFailure(status: number, body: string): string {
  try {
    const parsed = JSON.parse(body) as { errormessage?: unknown };
    if (typeof parsed.errormessage === 'string') return `${status}: ${parsed.errormessage}`;
  } catch {
    // not JSON: quote it
  }
  return `${status}${body.trim() ? `: ${body.trim().slice(0, 200)}` : ''}`;
}

function readBody(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

/** POSTs JSON and answers the parsed success envelope's `data`; anything else is a SyncContentError. */
async function postJson(url: URL, body: unknown, what: string, idleTimeoutMs: number): Promise<unknown> {
  const bytes = Buffer.from(JSON.stringify(body));
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = transportOf(url).request(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length },
      timeout: idleTimeoutMs,
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err) => reject(networkError(url, err)));
    req.on('response', resolve);
    req.end(bytes);
  });
  const text = await readBody(res);
  if (res.statusCode !== 200)
    throw new SyncContentError(`${what} failed: ${describeFailure(res.statusCode ?? 0, text)}`);
  try {
    return (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    throw new SyncContentError(`${what} failed: the answer is not JSON`);
  }
}

/** A central access token for a staff account. */
export async function centralSignIn(
  central: string,
  user: string,
  password: string,
  idleTimeoutMs = 60_000,
): Promise<string> {
  const data = (await postJson(
    joinUrl(central, '/auth/login'),
    { lmsusername: user, lmsuserpassword: password },
    'Signing in to the central API',
    idleTimeoutMs,
  )) as { accessToken?: unknown } | undefined;
  if (typeof data?.accessToken !== 'string')
    throw new SyncContentError('Signing in to the central API failed: no access token in the answer');
  return data.accessToken;
}

/** A classroom access token for a school user (a staff one may upload while the classroom is offline). */
export async function classroomSignIn(
  classroom: string,
  user: string,
  password: string,
  idleTimeoutMs = 60_000,
): Promise<string> {
  const data = (await postJson(
    joinUrl(classroom, '/auth/login'),
    { studentusername: user, studentpassword: password },
    'Signing in to the classroom server',
    idleTimeoutMs,
  )) as { accessToken?: unknown } | undefined;
  if (typeof data?.accessToken !== 'string')
    throw new SyncContentError('Signing in to the classroom server failed: no access token in the answer');
  return data.accessToken;
}

/** Downloads `GET /sync/content` into `dest`. */
export async function downloadPackage(
  central: string,
  token: string,
  dest: string,
  log: Log,
  idleTimeoutMs = 60_000,
): Promise<void> {
  const url = joinUrl(central, '/sync/content');
  log(`Downloading the curriculum package from ${url.origin}`);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = transportOf(url).request(url, {
      method: 'GET',
      headers: { Authorization: `Bearer ${token}` },
      timeout: idleTimeoutMs,
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err) => reject(networkError(url, err)));
    req.on('response', resolve);
    req.end();
  });
  if (res.statusCode !== 200) {
    const body = await readBody(res);
    const hint = res.statusCode === 401 ? ' (sign in again: the central token is missing, expired or revoked)' : '';
    throw new SyncContentError(
      `Central API refused the download: ${describeFailure(res.statusCode ?? 0, body)}${hint}`,
    );
  }
  const length = Number(res.headers['content-length']);
  try {
    await pipeline(
      res,
      progress('Downloaded', Number.isFinite(length) && length > 0 ? length : undefined, log),
      fs.createWriteStream(dest),
    );
  } catch (err) {
    fs.rmSync(dest, { force: true });
    throw networkError(url, err as NodeJS.ErrnoException);
  }
}

/**
 * Checks that the file is a curriculum package a classroom server accepts (all 19 keys as arrays);
 * answers the ids of its live curricula (whose media the classroom needs).
 */
export async function checkPackage(file: string, log: Log): Promise<string[]> {
  if (!fs.existsSync(file)) throw new SyncContentError(`No such file: ${file}`);
  try {
    const { name, json } = await readPackageJson({ path: file });
    const pkg = parseContentPackage(json);
    const counted = Object.fromEntries(CONTENT_KEY_LIST.map((k) => [k, pkg[k].length]));
    log(
      `Package ${path.basename(file)} (${mb(fs.statSync(file).size)}, entry ${name}) holds ${counted.curriculums} ` +
        `curriculums, ${counted.lessons} lessons, ${counted.questions} questions`,
    );
    return pkg.curriculums
      .filter((c) => !c.isdeleted && typeof c.curriculumid === 'string')
      .map((c) => c.curriculumid as string);
  } catch (err) {
    throw new SyncContentError(`${file} is not a usable curriculum package: ${(err as Error).message}`);
  }
}

/** The media folder of the run (none: the media step is skipped). */
export function mediaDirOf(o: SyncContentOptions): string | undefined {
  return o.noMedia || !o.mediaDir ? undefined : path.resolve(o.mediaDir);
}

/**
 * Run as root into a media folder that belongs to another user (the classroom server's), the files would be
 * root's and the server's later restores and syncs would fail on them with EACCES: refuse before anything is
 * done, naming the owner. `uid` is the running process's.
 */
export function refuseRootOverOwner(dir: string, uid = process.getuid?.()): void {
  if (uid !== 0) return;
  let probe = path.resolve(dir);
  while (!fs.existsSync(probe) && path.dirname(probe) !== probe) probe = path.dirname(probe);
  const owner = fs.statSync(probe).uid;
  if (owner === 0) return;
  throw new SyncContentError(
    `${probe} belongs to uid ${owner}, not root: run as root, this would leave the media in ${dir} owned by root, ` +
      `where the classroom server cannot replace them. Run it as that user (e.g. sudo -u '#${owner}' …), or on a ` +
      `box installed from the package: lms-classroom sync-content`,
  );
}

/** The media step: after the package, the files its curricula use. */
async function syncMedia(
  o: SyncContentOptions,
  dir: string,
  token: string | undefined,
  curriculumids: string[],
  log: Log,
): Promise<MediaSummary> {
  let summary: MediaSummary;
  if (o.mediaFrom) summary = await mediaFromSaved({ source: o.mediaFrom, dir }, log);
  else {
    if (!o.central || !token)
      throw new SyncContentError('The media step needs --central (or --media-from a saved folder or ZIP offline)');
    const ids = o.curriculumids?.length ? o.curriculumids : curriculumids;
    const names = await curriculumMedia(o.central, token, ids, o.idleTimeoutMs);
    summary = await mediaFromCentral(
      { mediaUrl: o.mediaUrl ?? `${o.central.replace(/\/+$/, '')}/media`, names, dir, idleTimeoutMs: o.idleTimeoutMs },
      log,
    );
  }
  log(describeSummary(summary));
  if (summary.failed.length) {
    const list = summary.failed
      .slice(0, 10)
      .map((f) => `  ${f.name}: ${f.reason}`)
      .join('\n');
    throw new SyncContentError(
      `${summary.failed.length} media file${summary.failed.length === 1 ? '' : 's'} could not be brought (run again ` +
        `to resume):\n${list}`,
    );
  }
  return summary;
}

/** Uploads a package to `PUT /import/master` as the multipart part `importfile`. */
export async function uploadPackage(
  classroom: string,
  auth: string,
  file: string,
  log: Log,
  idleTimeoutMs = 60_000,
): Promise<void> {
  const url = joinUrl(classroom, '/import/master');
  const size = fs.statSync(file).size;
  const boundary = `----lms-sync-content-${Date.now().toString(16)}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="importfile"; filename="importfile.zip"\r\nContent-Type: ` +
      `application/zip\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  log(`Uploading to ${url.origin}`);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = transportOf(url).request(url, {
      method: 'PUT',
      headers: {
        Authorization: auth,
        'Content-Type': `multipart/form-data; boundary=${boundary}`,
        'Content-Length': head.length + size + tail.length,
      },
      timeout: idleTimeoutMs,
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'ETIMEDOUT' })));
    req.on('error', (err) => reject(networkError(url, err)));
    req.on('response', resolve);
    req.write(head);
    pipeline(fs.createReadStream(file), progress('Uploaded', size, log), req, { end: false })
      .then(() => req.end(tail))
      .catch((err: Error) => req.destroy(err));
  });
  const body = await readBody(res);
  if (res.statusCode !== 200) {
    const hint =
      res.statusCode === 401 || res.statusCode === 403
        ? ' (a classroom staff token is accepted only while the classroom runs offline; otherwise use its ' +
          'SERVER_SYNC_KEY)'
        : '';
    throw new SyncContentError(
      `Classroom server refused the package: ${describeFailure(res.statusCode ?? 0, body)}${hint}. ` +
        `Its content is unchanged.`,
    );
  }
  log('Classroom server applied the package');
}

/** Runs the whole client-side sync; throws a SyncContentError with a message for a person. */
export async function syncContent(o: SyncContentOptions, log: Log = () => undefined): Promise<void> {
  if (!o.file && !o.central)
    throw new SyncContentError(
      'Give --central (with --central-token or --central-user) to download, or --file to upload a saved package',
    );
  if (!o.file && !o.centralToken && !(o.centralUser && o.centralPassword)) {
    throw new SyncContentError(
      '--central-token (or LMS_CENTRAL_TOKEN), or --central-user with LMS_CENTRAL_PASSWORD, is needed to download ' +
        'from the central API',
    );
  }
  if (!o.classroom && !o.save && !o.mediaDir)
    throw new SyncContentError(
      'Give --classroom to upload, --save to keep the download, or --media-dir to bring the media',
    );
  if (o.classroom && !o.classroomToken && !o.syncKey && !(o.classroomUser && o.classroomPassword)) {
    throw new SyncContentError(
      '--classroom-token, --classroom-user with LMS_CLASSROOM_PASSWORD, or --sync-key (or LMS_CLASSROOM_TOKEN / ' +
        'SERVER_SYNC_KEY) is needed to upload',
    );
  }

  let file = o.file;
  let temp: string | undefined;
  let token = o.centralToken;
  const mediaDir = mediaDirOf(o);
  if (mediaDir) refuseRootOverOwner(mediaDir);
  if (!mediaDir && !o.noMedia)
    log("Media: not brought this time (give --media-dir, the classroom server's MEDIA_DIR, to bring the lesson media)");
  try {
    if (!file) {
      if (o.save) file = o.save;
      else {
        temp = fs.mkdtempSync(path.join(os.tmpdir(), 'lms-sync-content-'));
        file = path.join(temp, 'sync-data.zip');
      }
      if (!token) {
        log(`Signing in to ${o.central} as ${o.centralUser}`);
        token = await centralSignIn(o.central!, o.centralUser!, o.centralPassword!, o.idleTimeoutMs);
      }
      await downloadPackage(o.central!, token, file, log, o.idleTimeoutMs);
      if (o.save) log(`Saved ${file}`);
    }
    const curriculumids = await checkPackage(file, log);
    if (o.classroom) {
      // The sync key goes raw, as the classroom's server gate expects; a person's token as a bearer token.
      let auth = o.syncKey;
      if (!auth) {
        let token = o.classroomToken;
        if (!token) {
          log(`Signing in to ${o.classroom} as ${o.classroomUser}`);
          token = await classroomSignIn(o.classroom, o.classroomUser!, o.classroomPassword!, o.idleTimeoutMs);
        }
        auth = `Bearer ${token}`;
      }
      await uploadPackage(o.classroom, auth, file, log, o.idleTimeoutMs);
    }
    if (mediaDir) await syncMedia(o, mediaDir, token, curriculumids, log);
  } finally {
    if (temp) fs.rmSync(temp, { recursive: true, force: true });
  }
}

const USAGE = `Usage: npm run sync-content -- [options]

  --central URL          central API address (downloads GET /sync/content)
  --central-token TOKEN  central access token (or LMS_CENTRAL_TOKEN)
  --central-user EMAIL   sign in to central instead; the password comes from LMS_CENTRAL_PASSWORD
  --classroom URL        classroom server address (uploads PUT /import/master)
  --classroom-token T    classroom staff token, accepted while the classroom runs offline (or LMS_CLASSROOM_TOKEN)
  --classroom-user NAME  sign in to the classroom instead; the password comes from LMS_CLASSROOM_PASSWORD
  --sync-key KEY         the SERVER_SYNC_KEY instead of a token (or SERVER_SYNC_KEY)
  --file PATH            upload this saved package instead of downloading (no central needed)
  --save PATH            keep the downloaded package here (alone: download only)
  --timeout SECONDS      longest silence on a connection (default 60)
  --media-dir DIR        the classroom server's media folder (its MEDIA_DIR, or MEDIA_DIR from the
                         environment): brings the files the package's curricula use (central
                         GET /export/documents/:id, then GET /media/<file>), only those missing or changed
  --media-from PATH      offline: copy the media from a saved media folder or a ZIP of one
  --media-url URL        download media from <URL>/<file> instead of <central>/media
  --curriculum ID        only this curriculum's media (repeatable)
  --no-media             skip the media step

Passwords are read from the environment only, never from the command line (which other users of the
machine can see).

Examples:
  LMS_CENTRAL_PASSWORD=… LMS_CLASSROOM_PASSWORD=… npm run sync-content -- --central https://lms.example.org/api \\
    --central-user admin@example.org --classroom http://10.0.0.2:3001 --classroom-user teacher1 --save today.zip
  npm run sync-content -- --file today.zip --classroom http://10.0.0.2:3001
  npm run sync-content -- --central https://lms.example.org/api --central-user admin@example.org --save ` +
    `usb/today.zip --media-dir usb/media
  npm run sync-content -- --file usb/today.zip --classroom http://127.0.0.1:3001 --media-from usb/media
`;

export async function main(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
  err: (text: string) => void = (t) => {
    process.stderr.write(t);
  },
): Promise<number> {
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        central: { type: 'string' },
        'central-token': { type: 'string' },
        'central-user': { type: 'string' },
        'classroom-user': { type: 'string' },
        classroom: { type: 'string' },
        'classroom-token': { type: 'string' },
        'sync-key': { type: 'string' },
        file: { type: 'string' },
        save: { type: 'string' },
        timeout: { type: 'string' },
        'media-dir': { type: 'string' },
        'media-from': { type: 'string' },
        'media-url': { type: 'string' },
        curriculum: { type: 'string', multiple: true },
        'no-media': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    err(`${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  const timeout = str(values.timeout) ? Number(values.timeout) : undefined;
  if (timeout !== undefined && !(timeout > 0)) {
    err('--timeout must be a positive number of seconds\n');
    return 2;
  }
  try {
    await syncContent(
      {
        central: str(values.central),
        centralToken: str(values['central-token']) ?? str(env.LMS_CENTRAL_TOKEN),
        centralUser: str(values['central-user']),
        centralPassword: str(env.LMS_CENTRAL_PASSWORD),
        classroomUser: str(values['classroom-user']),
        classroomPassword: str(env.LMS_CLASSROOM_PASSWORD),
        classroom: str(values.classroom),
        classroomToken: str(values['classroom-token']) ?? str(env.LMS_CLASSROOM_TOKEN),
        syncKey: str(values['sync-key']) ?? str(env.SERVER_SYNC_KEY),
        file: str(values.file),
        save: str(values.save),
        idleTimeoutMs: timeout ? timeout * 1000 : undefined,
        // MEDIA_DIR as the classroom server reads it: relative to the repository root.
        mediaDir: str(values['media-dir']) ?? (str(env.MEDIA_DIR) ? path.resolve(repoRoot, env.MEDIA_DIR!) : undefined),
        mediaFrom: str(values['media-from']),
        mediaUrl: str(values['media-url']),
        curriculumids: Array.isArray(values.curriculum) ? values.curriculum : undefined,
        noMedia: values['no-media'] === true,
      },
      (line) => err(`${line}\n`),
    );
    return 0;
  } catch (e) {
    err(`sync-content: ${e instanceof SyncContentError ? e.message : ((e as Error).stack ?? String(e))}\n`);
    return 1;
  }
}

if (typeof require !== 'undefined' && require.main === module) {
  main(process.argv.slice(2)).then((code) => { process.exitCode = code; });
}
