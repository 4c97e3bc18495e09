import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from '@lms/db';
import {
  FLEET_PROTOCOL,
  HttpError,
  boxAuthorization,
  isMediaPath,
  parseContentPackage,
  parseStudentsPackage,
  parseTeachersPackage,
  readPackageJson,
  type FleetMediaFile,
} from '@lms/shared';
import { applyContent, applyStudents, applyTeachers } from '../areas/import/store';
import { FleetError, type ClientOptions } from './client';
import type { FleetIdentity } from './identity';

/**
 * The down path (docs/fleet-protocol.md, "Down"): one small poll for the version tags of the school's package
 * and rosters; a body whose tag differs from the one applied (and from the one refused) is downloaded into a
 * temporary file in the data directory, resumed with Range after a cut, checked against its tag (SHA-256),
 * and applied by the functions `PUT /import/master`, `/import/students` and `/import/teachers` use, each in
 * one transaction. A body the box refuses is reported to central and not fetched again until its tag changes.
 */
export type DownKind = 'package' | 'students' | 'teachers';
const KINDS: readonly DownKind[] = ['package', 'students', 'teachers'];
const PATHS: Record<DownKind, string> = {
  package: '/fleet/box/package', students: '/fleet/box/roster/students', teachers: '/fleet/box/roster/teachers',
};
/** The query of a learner roster that carries every learner's progress as central holds it (a fresh box). */
const RESTORE = '?restore=1';
/** The progress tables a restoring roster writes (`studentprogresses` of `PUT /import/students`). */
const RESTORED_TABLES = ['studentprogress', 'studentlearningsprogress', 'studentgradesprogress',
  'studentlevelsprogress', 'studentlessonsprogress'];
const WHAT: Record<DownKind, string> = { package: 'curriculum package', students: 'learner roster',
  teachers: 'teacher roster' };
/** As `PUT /import/*` caps a package read in memory. */
const LIMITS = { maxEntries: 50, maxEntryBytes: 256 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 };

export interface DownResult {
  applied: Array<DownKind | 'media'>;
  refused: DownKind[];
  unchanged: Array<DownKind | 'media'>;
  /** Media files fetched and removed in this run. */
  media: { fetched: string[]; removed: string[] };
  /** Bytes downloaded in this run (bodies and media). */
  bytes: number;
}

interface DownRow { kind: string; appliedtag: string | null; refusedtag: string | null; refusal: string | null }

async function request(base: string, p: string, box: FleetIdentity, o: ClientOptions, init: RequestInit = {}) {
  const f = o.fetch ?? fetch;
  try {
    return await f(`${base}${p}`, {
      ...init,
      headers: { Authorization: boxAuthorization(box.boxid, box.secret), ...(init.headers ?? {}) },
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    throw new FleetError(0, `Central at ${base} could not be reached (${(err as Error).message})`);
  }
}

async function failure(res: Response): Promise<FleetError> {
  let words = `central answered ${res.status} ${res.statusText}`;
  try {
    words = ((await res.json()) as { errormessage?: string }).errormessage ?? words;
  } catch {
    // not an envelope
  }
  const retry = Number(res.headers.get('retry-after'));
  return new FleetError(res.status, words, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

type StateTags = Record<DownKind, string | null> & { media?: string | null; studentsplain?: string | null };

export async function pollState(box: FleetIdentity, o: ClientOptions, restore = false): Promise<StateTags> {
  const res = await request(box.centralurl, `/fleet/box/state${restore ? RESTORE : ''}`, box, o,
    { headers: { Accept: 'application/json' } });
  if (!res.ok) throw await failure(res);
  return ((await res.json()) as { data: StateTags }).data;
}

async function digestOf(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The temporary file of a body's download (kept across runs, so that a cut download resumes). */
export const partFile = (dataDir: string, kind: DownKind) => path.join(dataDir, `fleet-down-${kind}.part`);

/**
 * Downloads one body into its temporary file, resuming what an earlier cut left (If-Range: a body that changed
 * meanwhile comes whole), and answers the file once its SHA-256 is the tag; a mismatch removes it.
 */
export async function download(box: FleetIdentity, kind: DownKind, tag: string, dataDir: string, o: ClientOptions,
  counter: { bytes: number } = { bytes: 0 }, restore = false): Promise<string> {
  return fetchVerified(box, `${PATHS[kind]}${restore ? RESTORE : ''}`, kind, partFile(dataDir, kind), tag, o, counter,
    (got) => `The ${kind} downloaded from central does not match its version ${tag.slice(0, 12)} ` +
      `(got ${got.slice(0, 12)}); it was not applied and is fetched again on the next sync`);
}

/**
 * Fetches `p` into `file`, resuming what an earlier cut left (If-Range with the SHA-256 central tags it with:
 * what changed meanwhile comes whole), and answers the file once its SHA-256 is `sha256`; a mismatch removes it.
 */
async function fetchVerified(box: FleetIdentity, p: string, what: string, file: string, sha256: string,
  o: ClientOptions, counter: { bytes: number }, mismatch: (got: string) => string): Promise<string> {
  const have = fs.existsSync(file) ? fs.statSync(file).size : 0;
  const headers: Record<string, string> = have ? { Range: `bytes=${have}-`, 'If-Range': `"${sha256}"` } : {};
  const res = await request(box.centralurl, p, box, o, { headers });
  let append = false;
  if (res.status === 206) append = true;
  else if (res.status === 416) {
    // Already whole (or longer than the body): checked below, removed if wrong.
    await res.body?.cancel();
    append = true;
  } else if (!res.ok) throw await failure(res);
  if (res.status !== 416 && res.body) {
    // Each piece is on disk as it arrives, so that a cut keeps what came and the next run asks for the rest.
    const fd = fs.openSync(file, append ? 'a' : 'w');
    try {
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) {
        fs.writeSync(fd, chunk);
        counter.bytes += chunk.length;
      }
    } catch (err) {
      throw new FleetError(0, `The ${what} download from central was cut (${(err as Error).message}); ` +
        'the next sync resumes it');
    } finally {
      fs.closeSync(fd);
    }
  }
  const got = await digestOf(file);
  if (got !== sha256) {
    fs.rmSync(file, { force: true });
    throw new FleetError(0, mismatch(got));
  }
  return file;
}

async function apply(db: Knex, kind: DownKind, file: string, restore = false): Promise<void> {
  const { json } = await readPackageJson({ path: file }, LIMITS);
  if (kind === 'package') await applyContent(db, parseContentPackage(json));
  else if (kind === 'students' && restore) await restoreStudents(db, parseStudentsPackage(json));
  else if (kind === 'students') await applyStudents(db, parseStudentsPackage(json));
  else await applyTeachers(db, parseTeachersPackage(json));
}

/**
 * The roster with central's progress, on a box that has none. The progress rows it writes are central's own:
 * their journal entries are removed in the same transaction, so that they are not sent back up. SQLite has
 * one writer, so every entry after `before` inside this transaction is the import's.
 */
async function restoreStudents(db: Knex, pkg: ReturnType<typeof parseStudentsPackage>): Promise<void> {
  await db.transaction(async (trx) => {
    const top = (await trx('fleetchanges').max({ n: 'seq' }).first()) as { n: number | string | null } | undefined;
    const before = Number(top?.n ?? 0);
    await applyStudents(trx, pkg);
    await trx('fleetchanges').where('seq', '>', before).whereIn('tablename', RESTORED_TABLES).delete();
  });
}

/** A box holding no learner progress at all: a new box, or one whose card was replaced. */
async function holdsNoProgress(db: Knex): Promise<boolean> {
  for (const table of RESTORED_TABLES) {
    if (await db(table).first(db.raw('1 as one'))) return false;
  }
  return true;
}

async function report(box: FleetIdentity, body: Record<string, unknown>, o: ClientOptions): Promise<void> {
  const res = await request(box.centralurl, '/fleet/box/report', box, o, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body),
  });
  if (!res.ok) throw await failure(res);
  await res.body?.cancel();
}

/** What the box applied and refused, by body. */
export async function downRows(db: Knex): Promise<Map<string, DownRow>> {
  const rows = (await db('fleetdown').select()) as DownRow[];
  return new Map(rows.map((r) => [r.kind, r]));
}

async function record(db: Knex, kind: DownKind | 'media', fields: Partial<DownRow> & Record<string, unknown>) {
  await db('fleetdown').insert({ kind, appliedtag: null, refusedtag: null, refusal: null, ...fields })
    .onConflict('kind').merge(Object.keys(fields));
}

/** The refusal still standing (the box's words for central), if any. */
export async function standingRefusal(db: Knex): Promise<string | null> {
  const refused = [...(await downRows(db)).values()].filter((r) => r.refusedtag && r.refusal);
  return refused.length ? refused.map((r) => r.refusal).join('; ') : null;
}

const MEDIA_PARTIAL_DIR = '.partial';
/**
 * Where a media file's download waits until verified: the media folder's `.partial/` (never served: the media
 * route refuses hidden folders; left out of backups), one flat file per name.
 */
export const mediaPartFile = (mediaDir: string, name: string) =>
  path.join(mediaDir, MEDIA_PARTIAL_DIR, `fleet-${encodeURIComponent(name)}`);

async function listMedia(box: FleetIdentity, o: ClientOptions):
  Promise<{ tag: string | null; files: FleetMediaFile[] }> {
  const res = await request(box.centralurl, '/fleet/box/media', box, o, { headers: { Accept: 'application/json' } });
  if (!res.ok) throw await failure(res);
  return ((await res.json()) as { data: { tag: string | null; files: FleetMediaFile[] } }).data;
}

/** Moves a verified file into place, synced first, so that a power cut never leaves a torn file under the name. */
function install(part: string, target: string): void {
  const fd = fs.openSync(part, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.mkdirSync(path.dirname(target), { recursive: true });
  fs.renameSync(part, target);
}

interface MediaRow { name: string; sha256: string; size: number }

/**
 * Brings the media files of central's list that the box lacks or holds in another version (by SHA-256) into
 * the media folder; each is verified before it takes its name, so a tablet is never served half a file.
 * A file already there with the listed digest (copied by `sync-content`) is taken as it is. Answers the names
 * fetched and the failures (the rest is fetched meanwhile; a failed file is tried again next run).
 */
async function fetchMedia(db: Knex, box: FleetIdentity, mediaDir: string, files: FleetMediaFile[],
  o: ClientOptions, counter: { bytes: number }): Promise<{ fetched: string[]; failed: string[] }> {
  const held = new Map(((await db('fleetmedia').select()) as MediaRow[]).map((r) => [r.name, r]));
  const out = { fetched: [] as string[], failed: [] as string[] };
  fs.mkdirSync(path.join(mediaDir, MEDIA_PARTIAL_DIR), { recursive: true });
  for (const f of files) {
    if (!isMediaPath(f.name) || !/^[0-9a-f]{64}$/.test(f.sha256)) {
      out.failed.push(`${f.name}: not a media file name the box writes`);
      continue;
    }
    const target = path.join(mediaDir, ...f.name.split('/'));
    const size = fs.existsSync(target) ? fs.statSync(target).size : -1;
    const row = held.get(f.name);
    if (row && row.sha256 === f.sha256 && size === f.size) continue;
    try {
      if (size !== f.size || (await digestOf(target)) !== f.sha256) {
        const part = await fetchVerified(box, `/fleet/box/media/file?name=${encodeURIComponent(f.name)}`, f.name,
          mediaPartFile(mediaDir, f.name), f.sha256, o, counter,
          (got) => `The media file ${f.name} downloaded from central does not match its SHA-256 ` +
            `${f.sha256.slice(0, 12)} (got ${got.slice(0, 12)}); it is fetched again on the next sync`);
        install(part, target);
        out.fetched.push(f.name);
      }
      await db('fleetmedia')
        .insert({ name: f.name, sha256: f.sha256, size: f.size, fetchedat: new Date().toISOString() })
        .onConflict('name').merge(['sha256', 'size', 'fetchedat']);
    } catch (err) {
      out.failed.push((err as Error).message);
    }
  }
  return out;
}

/** Removes the media files this path fetched that central's list no longer names (never other files). */
async function pruneMedia(db: Knex, mediaDir: string, files: FleetMediaFile[]): Promise<string[]> {
  const keep = new Set(files.map((f) => f.name));
  const gone = ((await db('fleetmedia').select('name')) as Array<{ name: string }>).map((r) => r.name)
    .filter((n) => !keep.has(n));
  for (const name of gone) {
    if (isMediaPath(name)) fs.rmSync(path.join(mediaDir, ...name.split('/')), { force: true });
    await db('fleetmedia').where({ name }).delete();
  }
  return gone;
}

type Applied = { kind: DownKind | 'media'; tag: string };

/**
 * Keeps on the box what it applied and the bytes that took, until central heard of it: a link cut between
 * applying and reporting (or a later download of the same run failing) loses no report.
 */
async function keepApplied(db: Knex, now: Applied, bytes: number): Promise<void> {
  const row = (await db('fleetdownreport').where({ name: 'pending' }).first()) as
    | { applied: string; bytes: number | string }
    | undefined;
  const byKind = new Map<string, Applied>((row ? (JSON.parse(row.applied) as Applied[]) : []).map((a) => [a.kind, a]));
  byKind.set(now.kind, now);
  await db('fleetdownreport')
    .insert({ name: 'pending', applied: JSON.stringify([...byKind.values()]), bytes: Number(row?.bytes ?? 0) + bytes })
    .onConflict('name').merge(['applied', 'bytes']);
}

/** Tells central what the box applied (its record of the box's last down); sending it twice records the same. */
async function sendApplied(db: Knex, box: FleetIdentity, o: ClientOptions): Promise<void> {
  const row = (await db('fleetdownreport').where({ name: 'pending' }).first()) as
    | { applied: string; bytes: number | string }
    | undefined;
  if (!row) return;
  const res = await request(box.centralurl, '/fleet/box/applied', box, o, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ protocol: FLEET_PROTOCOL, applied: JSON.parse(row.applied) as Applied[],
      bytes: Math.round(Number(row.bytes)) }),
  });
  if (!res.ok) throw await failure(res);
  await res.body?.cancel();
  await db('fleetdownreport').where({ name: 'pending' }).delete();
}

export async function syncDown(db: Knex, box: FleetIdentity, dataDir: string, o: ClientOptions,
  mediaDir?: string): Promise<DownResult> {
  const done = await downRows(db);
  // Only a box that never applied a roster and holds no progress takes central's progress: on any other,
  // central's copy could be older than what the box has not sent yet.
  const restore = !done.get('students')?.appliedtag && await holdsNoProgress(db);
  const tags = await pollState(box, o, restore);
  const out: DownResult = { applied: [], refused: [], unchanged: [], media: { fetched: [], removed: [] }, bytes: 0 };
  const counter = { bytes: 0 };
  let kept = 0;
  const keep = async (a: Applied) => {
    await keepApplied(db, a, counter.bytes - kept);
    kept = counter.bytes;
  };
  const failures: string[] = [];
  // Media first: a lesson of the new package finds its pictures when it appears. Files are only added or
  // replaced here; the ones the package no longer names go once the package applied (below).
  let mediaTag = tags.media ?? null;
  let media: FleetMediaFile[] | undefined;
  if (mediaDir && mediaTag !== (done.get('media')?.appliedtag ?? null)) {
    // The list's own tag is what is recorded: content that changed since the poll is then fetched next run.
    const list = mediaTag ? await listMedia(box, o) : { tag: null, files: [] };
    media = list.files;
    mediaTag = list.tag;
    const got = await fetchMedia(db, box, mediaDir, media, o, counter);
    out.media.fetched = got.fetched;
    failures.push(...got.failed);
  } else if (mediaDir) out.unchanged.push('media');
  for (const kind of KINDS) {
    const tag = tags[kind];
    const row = done.get(kind);
    if (!tag || tag === row?.appliedtag || tag === row?.refusedtag) {
      out.unchanged.push(kind);
      continue;
    }
    const file = await download(box, kind, tag, dataDir, o, counter, restore && kind === 'students');
    try {
      await apply(db, kind, file, restore && kind === 'students');
    } catch (err) {
      // The classroom's own refusal (409: learners on a lesson the package drops; 400: a package it cannot
      // take): reported once, kept, and not tried again until central's version changes.
      if (!(err instanceof HttpError)) throw err;
      // Worded as central words the report, since each contact carries it as the box's last error.
      const refusal = `The box refused the ${WHAT[kind]} (version ${tag.slice(0, 12)}, ${err.status}): ` +
        `${err.message}. It keeps its previous one and fetches again once the version changes.`;
      await report(box, { kind, tag, status: err.status, message: err.message }, o);
      await record(db, kind, { refusedtag: tag, refusal });
      out.refused.push(kind);
      continue;
    } finally {
      fs.rmSync(file, { force: true });
    }
    // After a restore, the plain roster it contained is what the box holds: recorded as applied, so that the
    // next poll fetches nothing.
    const applied = restore && kind === 'students' && tags.studentsplain ? tags.studentsplain : tag;
    await record(db, kind, { appliedtag: applied, appliedat: new Date().toISOString(), refusedtag: null,
      refusal: null });
    out.applied.push(kind);
    await keep({ kind, tag });
  }
  if (media && mediaDir && !failures.length) {
    // Files the old package used stay while the box still runs it (a refused or not yet applied package).
    const packageNow = (await downRows(db)).get('package')?.appliedtag ?? null;
    if (packageNow === (tags.package ?? null)) {
      out.media.removed = await pruneMedia(db, mediaDir, media);
      await record(db, 'media', { appliedtag: mediaTag, appliedat: new Date().toISOString() });
      out.applied.push('media');
      if (mediaTag) await keep({ kind: 'media', tag: mediaTag });
    }
  }
  out.bytes = counter.bytes;
  await sendApplied(db, box, o);
  if (failures.length) {
    throw new FleetError(0, `${failures.length} media file${failures.length === 1 ? '' : 's'} could not be ` +
      `fetched from central (${failures[0]}); the next sync tries again`);
  }
  return out;
}
