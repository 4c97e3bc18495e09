import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Knex } from '@lms/db';
import {
  HttpError,
  boxAuthorization,
  parseContentPackage,
  parseStudentsPackage,
  parseTeachersPackage,
  readPackageJson,
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
const WHAT: Record<DownKind, string> = { package: 'curriculum package', students: 'learner roster',
  teachers: 'teacher roster' };
/** The query of a learner roster that carries every learner's progress as central holds it (a fresh box). */
const RESTORE = '?restore=1';
/** The progress tables a restoring roster writes (`studentprogresses` of `PUT /import/students`). */
const RESTORED_TABLES = ['studentprogress', 'studentlearningsprogress', 'studentgradesprogress',
  'studentlevelsprogress', 'studentlessonsprogress'];
/** As `PUT /import/*` caps a package read in memory. */
const LIMITS = { maxEntries: 50, maxEntryBytes: 256 * 1024 * 1024, maxTotalBytes: 256 * 1024 * 1024 };

export interface DownResult {
  applied: DownKind[];
  refused: DownKind[];
  unchanged: DownKind[];
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

export async function pollState(box: FleetIdentity, o: ClientOptions, restore = false):
  Promise<Record<DownKind, string | null> & { studentsplain?: string | null }> {
  const res = await request(box.centralurl, `/fleet/box/state${restore ? RESTORE : ''}`, box, o,
    { headers: { Accept: 'application/json' } });
  if (!res.ok) throw await failure(res);
  return ((await res.json()) as { data: Record<DownKind, string | null> & { studentsplain?: string | null } }).data;
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
  restore = false): Promise<string> {
  const file = partFile(dataDir, kind);
  const have = fs.existsSync(file) ? fs.statSync(file).size : 0;
  const headers: Record<string, string> = have ? { Range: `bytes=${have}-`, 'If-Range': `"${tag}"` } : {};
  const res = await request(box.centralurl, `${PATHS[kind]}${restore ? RESTORE : ''}`, box, o, { headers });
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
      for await (const chunk of res.body as AsyncIterable<Uint8Array>) fs.writeSync(fd, chunk);
    } catch (err) {
      throw new FleetError(0, `The ${kind} download from central was cut (${(err as Error).message}); ` +
        'the next sync resumes it');
    } finally {
      fs.closeSync(fd);
    }
  }
  const got = await digestOf(file);
  if (got !== tag) {
    fs.rmSync(file, { force: true });
    throw new FleetError(0, `The ${kind} downloaded from central does not match its version ${tag.slice(0, 12)} ` +
      `(got ${got.slice(0, 12)}); it was not applied and is fetched again on the next sync`);
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

async function record(db: Knex, kind: DownKind, fields: Partial<DownRow> & Record<string, unknown>) {
  await db('fleetdown').insert({ kind, appliedtag: null, refusedtag: null, refusal: null, ...fields })
    .onConflict('kind').merge(Object.keys(fields));
}

/** The refusal still standing (the box's words for central), if any. */
export async function standingRefusal(db: Knex): Promise<string | null> {
  const refused = [...(await downRows(db)).values()].filter((r) => r.refusedtag && r.refusal);
  return refused.length ? refused.map((r) => r.refusal).join('; ') : null;
}

export async function syncDown(db: Knex, box: FleetIdentity, dataDir: string, o: ClientOptions): Promise<DownResult> {
  const done = await downRows(db);
  // Only a box that never applied a roster and holds no progress takes central's progress: on any other,
  // central's copy could be older than what the box has not sent yet.
  const restore = !done.get('students')?.appliedtag && await holdsNoProgress(db);
  const tags = await pollState(box, o, restore);
  const out: DownResult = { applied: [], refused: [], unchanged: [] };
  for (const kind of KINDS) {
    const tag = tags[kind];
    const row = done.get(kind);
    if (!tag || tag === row?.appliedtag || tag === row?.refusedtag) {
      out.unchanged.push(kind);
      continue;
    }
    const file = await download(box, kind, tag, dataDir, o, restore && kind === 'students');
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
  }
  return out;
}
