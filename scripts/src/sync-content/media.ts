import crypto from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isMediaFileName, isMediaPath, withZip } from '@lms/shared';
import { SyncContentError, mb, type Log } from './common';

/**
 * The media step of the content sync: the pictures, audio and video a curriculum's lessons use, copied
 * into the classroom server's media folder (MEDIA_DIR), from the central API or, offline, from a folder
 * or ZIP saved earlier. Only files that are missing or changed are transferred; an interrupted download
 * resumes where it stopped; every file is verified before it takes its place; a manifest in the folder
 * (`.media.json`) remembers what each file is, so that the next run can ask for changes only.
 */

export const MANIFEST = '.media.json';
const PARTIAL_DIR = '.partial';

export interface ManifestEntry {
  size: number;
  /** MD5 of the file's bytes, hex. */
  md5: string;
  /** The entity tag central answered for it (when it came from central). */
  etag?: string;
}

export interface Manifest {
  version: 1;
  files: Record<string, ManifestEntry>;
}

export interface MediaSummary {
  files: number;
  transferred: number;
  bytes: number;
  unchanged: number;
  failed: Array<{ name: string; reason: string }>;
}

const unquote = (etag: string | undefined) => (etag ? etag.replace(/^W\//, '').replace(/"/g, '') : undefined);
const isMd5 = (etag: string | undefined) => !!etag && /^[0-9a-f]{32}$/i.test(etag);

export async function readManifest(dir: string): Promise<Manifest> {
  try {
    const parsed = JSON.parse(await fsp.readFile(path.join(dir, MANIFEST), 'utf8')) as Partial<Manifest>;
    if (parsed && parsed.version === 1 && parsed.files && typeof parsed.files === 'object')
      return { version: 1, files: parsed.files };
  } catch {
    // none yet, or unreadable: every file is then checked afresh
  }
  return { version: 1, files: {} };
}

/** Written beside and renamed over, so that an interruption never leaves half a manifest. */
async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const tmp = path.join(dir, `${MANIFEST}.${process.pid}.tmp`);
  await fsp.writeFile(tmp, JSON.stringify(manifest, null, 1));
  await fsp.rename(tmp, path.join(dir, MANIFEST));
}

/** Whether the folder already holds this exact file (its size as the manifest says; the manifest's digest). */
async function holds(dir: string, manifest: Manifest, name: string): Promise<ManifestEntry | undefined> {
  const entry = manifest.files[name];
  if (!entry) return undefined;
  const st = await fsp.stat(path.join(dir, name)).catch(() => undefined);
  return st?.isFile() && st.size === entry.size ? entry : undefined;
}

/** Counts bytes and feeds a digest as they pass; reports progress at most twice a second. */
function meter(md5: crypto.Hash, onBytes: (n: number) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      md5.update(chunk);
      onBytes(chunk.length);
      cb(null, chunk);
    },
  });
}

function progressReporter(log: Log, total: { files: number }) {
  let last = 0;
  return (index: number, name: string, done: number, size: number | undefined, final = false) => {
    const now = Date.now();
    if (!final && now - last < 500) return;
    last = now;
    const share = size ? ` of ${mb(size)} (${Math.floor((done / size) * 100)}%)` : '';
    log(`Media [${index}/${total.files}] ${name}: ${mb(done)}${share}`);
  };
}

/**
 * Where a file's download is kept until it is verified: one flat file per name, the name's folders
 * encoded (`demo%2Fclip.mp4`), so that two names never share a partial file.
 */
const partialOf = (dir: string, name: string) => path.join(dir, PARTIAL_DIR, encodeURIComponent(name));

/** Moves a verified file into place (fsync first, so that a power cut cannot leave a torn file under the name). */
async function install(partial: string, target: string): Promise<void> {
  await fsp.mkdir(path.dirname(target), { recursive: true });
  const handle = await fsp.open(partial, 'r+');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await fsp.rename(partial, target);
}

interface Fetched {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: http.IncomingMessage;
}

function get(url: URL, headers: Record<string, string>, idleTimeoutMs: number): Promise<Fetched> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = transport.request(url, { method: 'GET', headers, timeout: idleTimeoutMs });
    req.on('timeout', () =>
      req.destroy(Object.assign(new Error(`${url.origin} stopped answering`), { code: 'ETIMEDOUT' })),
    );
    req.on('error', reject);
    req.on('response', (res) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: res }));
    req.end();
  });
}

async function readJson(url: URL, token: string, idleTimeoutMs: number): Promise<unknown> {
  const res = await get(url, { Authorization: `Bearer ${token}`, Accept: 'application/json' }, idleTimeoutMs);
  const parts: Buffer[] = [];
  for await (const c of res.body) parts.push(c as Buffer);
  const text = Buffer.concat(parts).toString('utf8');
  if (res.status !== 200) {
    let message = text.slice(0, 200);
    try {
      message = (JSON.parse(text) as { errormessage?: string }).errormessage ?? message;
    } catch {
      // not JSON
    }
    throw new SyncContentError(`${url.pathname} answered ${res.status}: ${message}`);
  }
  return JSON.parse(text) as unknown;
}

/** The media file names the curricula use (central `GET /export/documents/:curriculumid`, a bare array), unique. */
export async function curriculumMedia(
  central: string,
  token: string,
  curriculumids: string[],
  idleTimeoutMs = 60_000,
): Promise<string[]> {
  const names = new Set<string>();
  for (const id of curriculumids) {
    const list = await readJson(
      new URL(`${central.replace(/\/+$/, '')}/export/documents/${encodeURIComponent(id)}`),
      token,
      idleTimeoutMs,
    );
    if (!Array.isArray(list)) throw new SyncContentError(`The media list of curriculum ${id} is not a list`);
    for (const n of list) if (typeof n === 'string' && n) names.add(n);
  }
  return [...names];
}

export interface FromCentralOptions {
  /** Where the files are read: `<mediaUrl>/<name>` (central's `/media`, or a public bucket or CDN). */
  mediaUrl: string;
  names: string[];
  dir: string;
  idleTimeoutMs?: number;
}

/**
 * Brings each named file from the media address into `dir`: a file the manifest knows is asked for with
 * its ETag (`If-None-Match`: nothing is sent when it has not changed); a download cut short continues
 * with `Range` and `If-Range` (the whole file again when it changed meanwhile); each download is checked
 * against its length and, where the ETag is an MD5, its digest before it replaces the old file.
 */
export async function mediaFromCentral(o: FromCentralOptions, log: Log = () => undefined): Promise<MediaSummary> {
  const idle = o.idleTimeoutMs ?? 60_000;
  await fsp.mkdir(path.join(o.dir, PARTIAL_DIR), { recursive: true });
  const manifest = await readManifest(o.dir);
  const summary: MediaSummary = { files: 0, transferred: 0, bytes: 0, unchanged: 0, failed: [] };
  const safe = o.names.filter((n) => {
    if (isMediaPath(n)) return true;
    summary.failed.push({ name: n, reason: 'not a media file name this tool writes to disk' });
    return false;
  });
  summary.files = safe.length;
  log(`Media: ${safe.length} file${safe.length === 1 ? '' : 's'} used by the curriculum, from ${o.mediaUrl}`);
  const report = progressReporter(log, summary);

  for (const [i, name] of safe.entries()) {
    try {
      const had = await holds(o.dir, manifest, name);
      const partial = partialOf(o.dir, name);
      const partialMeta = `${partial}.json`;
      const resume = await fsp.stat(partial).then((st) => st.size, () => 0);
      const resumeEtag = resume
        ? (JSON.parse(await fsp.readFile(partialMeta, 'utf8').catch(() => '{}')) as { etag?: string }).etag
        : undefined;
      const headers: Record<string, string> = {};
      // A file copied in offline has no ETag of central's; its MD5 is the ETag of a folder store or a plain S3 upload.
      if (had) headers['If-None-Match'] = `"${had.etag ?? had.md5}"`;
      if (resume && resumeEtag) {
        headers.Range = `bytes=${resume}-`;
        headers['If-Range'] = `"${resumeEtag}"`;
      }
      const res = await get(new URL(`${o.mediaUrl.replace(/\/+$/, '')}/${encodeURIComponent(name)}`), headers, idle);
      if (res.status === 304) {
        res.body.resume();
        summary.unchanged += 1;
        continue;
      }
      if (res.status !== 200 && res.status !== 206) {
        res.body.resume();
        summary.failed.push({ name, reason: `the media address answered ${res.status}` });
        continue;
      }
      const etag = unquote(res.headers.etag as string | undefined);
      const appending = res.status === 206;
      const range = appending ? /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(res.headers['content-range'] ?? '')) : null;
      if (appending && (!range || Number(range[1]) !== resume)) {
        res.body.resume();
        await fsp.rm(partial, { force: true });
        summary.failed.push({
          name,
          reason: 'the media address answered a range that does not continue the saved part; run again',
        });
        continue;
      }
      const size = appending ? Number(range![3]) : Number(res.headers['content-length'] ?? NaN);
      await fsp.writeFile(partialMeta, JSON.stringify({ etag }));
      const md5 = crypto.createHash('md5');
      if (appending) for await (const c of fs.createReadStream(partial)) md5.update(c as Buffer);
      let done = appending ? resume : 0;
      if (appending) log(`Media [${i + 1}/${safe.length}] ${name}: resuming after ${mb(resume)}`);
      await pipeline(
        res.body,
        meter(md5, (n) => { done += n; summary.bytes += n; report(i + 1, name, done, size || undefined); }),
        fs.createWriteStream(partial, { flags: appending ? 'a' : 'w' }),
      );
      report(i + 1, name, done, size || undefined, true);
      const written = (await fsp.stat(partial)).size;
      const digest = md5.digest('hex');
      if ((Number.isFinite(size) && written !== size) || (isMd5(etag) && digest !== etag!.toLowerCase())) {
        await fsp.rm(partial, { force: true });
        await fsp.rm(partialMeta, { force: true });
        summary.failed.push({
          name,
          reason: `the download does not match what the server announced (${written} bytes, digest ${digest}); ` +
            `run again`,
        });
        continue;
      }
      await install(partial, path.join(o.dir, name));
      await fsp.rm(partialMeta, { force: true });
      manifest.files[name] = { size: written, md5: digest, etag };
      await writeManifest(o.dir, manifest);
      summary.transferred += 1;
    } catch (err) {
      // The saved part stays for the next run.
      summary.failed.push({ name, reason: (err as Error).message });
    }
  }
  return summary;
}

/** A file of a saved folder or ZIP: its name, size, digest when the source's manifest knows it, and its bytes. */
interface SourceFile {
  name: string;
  size: number;
  md5?: string;
  open(): Promise<Readable>;
}

/**
 * The media files of a folder and its sub-folders (names relative to it, `/`-separated), never hidden ones or links.
 */
async function folderSource(dir: string): Promise<SourceFile[]> {
  const manifest = await readManifest(dir);
  const out: SourceFile[] = [];
  const walk = async (prefix: string, depth: number): Promise<void> => {
    for (const entry of await fsp.readdir(path.join(dir, prefix), { withFileTypes: true })) {
      const name = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) {
        if (depth < 8) await walk(name, depth + 1);
        continue;
      }
      if (!entry.isFile() || !isMediaPath(name)) continue;
      const file = path.join(dir, ...name.split('/'));
      const size = (await fsp.stat(file)).size;
      const known = manifest.files[name];
      out.push({
        name,
        size,
        md5: known && known.size === size ? known.md5 : undefined,
        open: async () => fs.createReadStream(file),
      });
    }
  };
  await walk('', 0);
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Copies one source file into place through a partial file, verifying its digest. */
async function copyIn(
  file: SourceFile,
  dir: string,
  stream: Readable,
  onBytes: (n: number) => void,
): Promise<ManifestEntry> {
  const partial = partialOf(dir, file.name);
  const md5 = crypto.createHash('md5');
  await pipeline(stream, meter(md5, onBytes), fs.createWriteStream(partial));
  const digest = md5.digest('hex');
  const size = (await fsp.stat(partial)).size;
  if (size !== file.size || (file.md5 && file.md5 !== digest)) {
    await fsp.rm(partial, { force: true });
    throw new SyncContentError(`${file.name} does not match its source (${size} bytes, digest ${digest})`);
  }
  await install(partial, path.join(dir, file.name));
  return { size, md5: digest };
}

/**
 * The same step offline: from a folder (a media folder filled by an earlier run, on a USB stick) or a ZIP
 * of one. A file whose size and digest already match is left alone; where the source carries no manifest
 * its files are read to compare them, and only those that differ are written.
 */
export async function mediaFromSaved(
  o: { source: string; dir: string },
  log: Log = () => undefined,
): Promise<MediaSummary> {
  const st = await fsp.stat(o.source).catch(() => undefined);
  if (!st) throw new SyncContentError(`No such folder or ZIP: ${o.source}`);
  await fsp.mkdir(path.join(o.dir, PARTIAL_DIR), { recursive: true });
  const manifest = await readManifest(o.dir);
  const summary: MediaSummary = { files: 0, transferred: 0, bytes: 0, unchanged: 0, failed: [] };
  const report = progressReporter(log, summary);

  const handle = async (file: SourceFile, index: number, open: () => Promise<Readable>) => {
    const had = await holds(o.dir, manifest, file.name);
    if (had && file.md5 && had.md5 === file.md5) {
      summary.unchanged += 1;
      return;
    }
    if (had && !file.md5) {
      // No manifest in the source: read it to compare, and write only when it differs.
      const md5 = crypto.createHash('md5');
      for await (const c of await open()) md5.update(c as Buffer);
      file.md5 = md5.digest('hex');
      if (file.md5 === had.md5 && file.size === had.size) {
        summary.unchanged += 1;
        return;
      }
    }
    let done = 0;
    manifest.files[file.name] = await copyIn(file, o.dir, await open(), (n) => {
      done += n;
      summary.bytes += n;
      report(index, file.name, done, file.size);
    });
    report(index, file.name, done, file.size, true);
    await writeManifest(o.dir, manifest);
    summary.transferred += 1;
  };

  if (st.isDirectory()) {
    const files = await folderSource(o.source);
    summary.files = files.length;
    log(`Media: ${files.length} file${files.length === 1 ? '' : 's'} in ${o.source}`);
    for (const [i, f] of files.entries()) {
      try {
        await handle(f, i + 1, f.open);
      } catch (err) {
        summary.failed.push({ name: f.name, reason: (err as Error).message });
      }
    }
    return summary;
  }

  // A ZIP: its manifest (if it carries one) first, then each media entry. The folder holding the manifest
  // is the media folder (a ZIP of `media/` holds `media/.media.json`): names are taken below it, with their
  // sub-folders. Without a manifest, names are the entries' whole paths.
  const zipManifest: Manifest = { version: 1, files: {} };
  let root = '';
  const limits = { maxEntries: 100_000, maxTotalBytes: 64 * 1024 ** 3, maxEntryBytes: 4 * 1024 ** 3, maxRatio: 1000 };
  await withZip({ path: o.source }, limits, async (zip) => {
    for await (const e of zip.entries()) {
      if (e.name === MANIFEST || e.name.endsWith(`/${MANIFEST}`)) {
        root = e.name.slice(0, e.name.length - MANIFEST.length);
        Object.assign(zipManifest.files, (JSON.parse(await e.readText()) as Manifest).files ?? {});
      }
    }
  });
  await withZip({ path: o.source }, limits, async (zip) => {
    const entries = [];
    for await (const e of zip.entries()) {
      if (e.isDirectory || !e.name.startsWith(root)) continue;
      const name = e.name.slice(root.length);
      if (!isMediaPath(name) || !isMediaFileName(name.split('/').pop() ?? '')) continue;
      entries.push({ e, name });
    }
    summary.files = entries.length;
    log(`Media: ${entries.length} file${entries.length === 1 ? '' : 's'} in ${o.source}`);
    for (const [i, { e, name }] of entries.entries()) {
      const known = zipManifest.files[name];
      const file: SourceFile = {
        name,
        size: e.size,
        md5: known && known.size === e.size ? known.md5 : undefined,
        open: () => e.open(),
      };
      try {
        await handle(file, i + 1, file.open);
      } catch (err) {
        summary.failed.push({ name, reason: (err as Error).message });
      }
    }
  });
  return summary;
}

export function describeSummary(s: MediaSummary): string {
  const failed = s.failed.length ? `, ${s.failed.length} failed` : '';
  return `Media: ${s.transferred} file${s.transferred === 1 ? '' : 's'} transferred (${mb(s.bytes)}), ` +
    `${s.unchanged} unchanged${failed}`;
}
