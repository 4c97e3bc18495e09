import crypto from 'node:crypto';
import fs from 'node:fs';
import {
  FLEET_PROTOCOL,
  httpError,
  isMediaKey,
  mediaContentType,
  minimisedForBox,
  sendMedia,
  writeStudentsZip,
  writeTeachersZip,
  appliedBody,
  type FleetMediaFile,
} from '@lms/shared';
import type { Knex } from '@lms/db';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import type { CentralCtx, Scope } from '../../http/types';
import { isObjectNotFound, type ObjectInfo, type ObjectStore } from '../../objects';
import { curriculumDocuments } from '../export/store';
import { erasuresCarried } from '../../privacy/learner';
import {
  contentPackage, onSnapshot, packageToTempFile, rosterProgress, schoolRoster, schoolTeachers,
} from '../sync/store';

/**
 * The down path (docs/fleet-protocol.md, "Down"): the bodies `POST /sync/cloud` and
 * `POST /sync/cloud/:schoolname/students` push, built by the same functions for the box's own school (taken
 * from central's record of the box, never from the request), served with their SHA-256 as the ETag so that a
 * box fetches only what changed, resumes a cut download with Range, and checks what it got before applying it.
 */
export type DownKind = 'package' | 'students' | 'teachers';
export const DOWN_KINDS: readonly DownKind[] = ['package', 'students', 'teachers'];

interface BoxSchool { schoolid: string; schoolname: string; countryid: string | null }

async function schoolOfBox(db: Knex, boxid: string): Promise<BoxSchool> {
  const row = (await db('boxes as b').join('schools as s', 's.schoolid', 'b.schoolid')
    .where('b.boxid', boxid).first('s.schoolid', 's.schoolname', 's.countryid')) as BoxSchool | undefined;
  // A box whose school is gone has nothing to fetch.
  if (!row) throw httpError(404, 'School not found');
  return row;
}

/** The box's school alone, as a teacher of that school is narrowed (`GET /sync/content` gives them the same). */
function scopeOfSchool(s: BoxSchool): Scope {
  return {
    rule: 'schoolsOfCaller', all: false, schoolids: [s.schoolid], schoolnames: [s.schoolname],
    countryids: s.countryid ? [s.countryid] : [], curriculumids: [], account: null, accountids: [], wholecountries: [],
  };
}

interface Built { path: string; tag: string; size: number; dispose: () => void }

async function digestOf(file: string): Promise<string> {
  const hash = crypto.createHash('sha256');
  for await (const chunk of fs.createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

let builds = 0;
/** Bodies built since the process started: what a poll that finds nothing new must not add to. */
export const bodyBuilds = (): number => builds;

/**
 * `restore=1`: the box has no learner progress at all (a new box, or a replacement on a fresh card) and asks
 * for the learner roster with every learner's progress as central holds it (the `studentprogresses` of
 * `PUT /import/students`), so that learners continue where central last saw them. A box with progress of its
 * own never asks: central's copy could be older than the box's unsent rows.
 */
// Other keys are ignored, as before: nothing in the request names a school.
export const downQuery = z.object({ restore: z.enum(['0', '1']).optional() });
const restoring = (ctx: CentralCtx) => (ctx.query as { restore?: string } | undefined)?.restore === '1';

/** Builds one body to a temporary file, or undefined when the school has none (no learners, no teachers). */
async function build(db: Knex, s: BoxSchool, kind: DownKind, restore = false): Promise<Built | undefined> {
  builds += 1;
  let file: { path: string; dispose: () => void };
  if (kind === 'package') {
    file = await onSnapshot(db, (q) => packageToTempFile(contentPackage(q, scopeOfSchool(s))));
  } else if (kind === 'students') {
    // Hashes travel here as in the push: the box verifies its learners' own passwords offline.
    // As the push: parents' names, birth date, contact and the disability answers never reach a box.
    const studentusers = (await schoolRoster(db, s.schoolname, { teacherAccounts: true, hash: true }))
      .map((u) => ({ ...u, student: minimisedForBox(u.student) }));
    if (!studentusers.length) return undefined;
    const studentprogresses = restore
      ? await rosterProgress(db, studentusers.map((u) => u.student.studentid as string)) : undefined;
    file = await packageToTempFile(writeStudentsZip({ studentusers,
      ...(studentprogresses ? { studentprogresses } : {}) }));
  } else {
    const teachers = await schoolTeachers(db, s.schoolname, { hash: true });
    if (!teachers.length) return undefined;
    file = await packageToTempFile(writeTeachersZip(teachers));
  }
  try {
    return { ...file, tag: await digestOf(file.path), size: fs.statSync(file.path).size };
  } catch (err) {
    file.dispose();
    throw err;
  }
}

function boxOf(ctx: CentralCtx): { boxid: string } {
  if (ctx.caller.kind !== 'box') throw httpError(401, 'Unauthorized');
  return ctx.caller;
}

/**
 * The counters the school's bodies depend on (see migration 0022): triggers move them in the writing
 * transaction, so a write through any route, any instance or a script changes the marker.
 */
async function markerOf(db: Knex, s: BoxSchool): Promise<string> {
  const rows = (await db('fleetversions').whereIn('name', ['content', `roster:${s.schoolname}`])
    .select('name', 'version')) as Array<{ name: string; version: number | string }>;
  const v = (name: string) => Number(rows.find((r) => r.name === name)?.version ?? 0);
  return `${v('content')}.${v(`roster:${s.schoolname}`)}`;
}

/** The SHA-256 of one stored object, read once per version of it (its key, size and the store's ETag). */
async function objectDigest(db: Knex, objects: ObjectStore, info: ObjectInfo): Promise<string> {
  const known = (await db('mediadigests').where({ objectkey: info.key, size: info.size, etag: info.etag })
    .first('sha256')) as { sha256: string } | undefined;
  if (known) return known.sha256;
  const hash = crypto.createHash('sha256');
  for await (const chunk of await objects.get(info.key)) hash.update(chunk as Buffer);
  const sha256 = hash.digest('hex');
  await db('mediadigests').insert({ objectkey: info.key, size: info.size, etag: info.etag, sha256,
    computedat: new Date().toISOString() }).onConflict('objectkey').merge(['size', 'etag', 'sha256', 'computedat']);
  return sha256;
}

async function statOrUndefined(objects: ObjectStore, key: string): Promise<ObjectInfo | undefined> {
  try {
    return await objects.stat(key);
  } catch (err) {
    if (isObjectNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * The media files the school's package references (the live trees of the curricula offered in its country, as
 * `GET /export/documents/:curriculumid` lists them), each with its SHA-256 and size, sorted by name. A name the
 * store holds no object for is left out: there is nothing to fetch until someone uploads it.
 */
async function mediaOfSchool(db: Knex, objects: ObjectStore, s: BoxSchool): Promise<FleetMediaFile[]> {
  if (!s.countryid) return [];
  const curricula = (await db('curriculumcountry as cc').join('curriculums as c', 'c.curriculumid', 'cc.curriculumid')
    .where({ 'cc.countryid': s.countryid, 'c.isdeleted': false }).orderBy('c.curriculumid')
    .select('c.curriculumid')) as Array<{ curriculumid: string }>;
  const names = new Set<string>();
  for (const c of curricula) for (const n of await curriculumDocuments(db, c.curriculumid)) names.add(n);
  const out: FleetMediaFile[] = [];
  for (const name of [...names].sort()) {
    if (!isMediaKey(name) || !mediaContentType(name)) continue;
    const info = await statOrUndefined(objects, name);
    if (info) out.push({ name, sha256: await objectDigest(db, objects, info), size: info.size });
  }
  return out;
}

export type DownTags = Record<DownKind | 'media', string | null>;
interface Current { tags: DownTags; media: FleetMediaFile[] }

/**
 * The school's tags, built only when the marker moved since they were last built (by this instance or
 * another: the cache is a table). The marker is read before the build, so a write that lands during it moves
 * the marker past what is stored, and the next poll builds again.
 */
async function current(ctx: CentralCtx, s: BoxSchool): Promise<Current> {
  const marker = await markerOf(ctx.db, s);
  const cached = (await ctx.db('fleetdowncache').where({ schoolid: s.schoolid }).first()) as
    | (DownTags & { marker: string; medialist: string | null })
    | undefined;
  if (cached && cached.marker === marker) {
    return { tags: { package: cached.package, students: cached.students, teachers: cached.teachers,
      media: cached.media }, media: cached.medialist ? (JSON.parse(cached.medialist) as FleetMediaFile[]) : [] };
  }
  const tags = {} as DownTags;
  for (const kind of DOWN_KINDS) {
    const b = await build(ctx.db, s, kind);
    tags[kind] = b?.tag ?? null;
    b?.dispose();
  }
  const media = await mediaOfSchool(ctx.db, ctx.objects, s);
  const list = JSON.stringify(media);
  tags.media = media.length ? crypto.createHash('sha256').update(list).digest('hex') : null;
  await ctx.db('fleetdowncache').insert({ schoolid: s.schoolid, marker, ...tags, medialist: list,
    builtat: new Date().toISOString() })
    .onConflict('schoolid').merge(['marker', 'package', 'students', 'teachers', 'media', 'medialist', 'builtat']);
  return { tags, media };
}

/**
 * Headers that instruct a browser (helmet's, CORS's): a box is no browser and no browser credential opens a box
 * route, so the answers a box asks for at every run leave them out, which keeps a poll under 1 KB each way.
 */
const BROWSER_HEADERS = [
  'Content-Security-Policy', 'Cross-Origin-Opener-Policy', 'Cross-Origin-Resource-Policy', 'Origin-Agent-Cluster',
  'Referrer-Policy', 'Strict-Transport-Security', 'X-DNS-Prefetch-Control', 'X-Download-Options',
  'X-Frame-Options', 'X-Permitted-Cross-Domain-Policies', 'X-XSS-Protection', 'Access-Control-Expose-Headers',
  'Vary',
];
export function withoutBrowserHeaders(res: CentralCtx['res']): void {
  for (const h of BROWSER_HEADERS) res.removeHeader(h);
}

/**
 * The version tag of each body (null: the school has none); a poll that finds them unchanged fetches nothing.
 * A restoring box (`restore=1`) is answered the tag of the roster with progress, and as `studentsplain` the
 * plain roster's, which it records once it applied the first: its next poll then finds the roster unchanged.
 */
export async function downState(ctx: CentralCtx): Promise<DownTags & { studentsplain?: string | null }> {
  withoutBrowserHeaders(ctx.res);
  const s = await schoolOfBox(ctx.db, boxOf(ctx).boxid);
  const { tags } = await current(ctx, s);
  if (!restoring(ctx)) return tags;
  const withProgress = await build(ctx.db, s, 'students', true);
  withProgress?.dispose();
  return { ...tags, students: withProgress?.tag ?? null, studentsplain: tags.students };
}

/** The media list whose SHA-256 is the state's `media` tag. */
export async function downMedia(ctx: CentralCtx): Promise<{ tag: string | null; files: FleetMediaFile[] }> {
  const c = await current(ctx, await schoolOfBox(ctx.db, boxOf(ctx).boxid));
  return { tag: c.tags.media, files: c.media };
}

export const mediaFileQuery = z.strictObject({ name: z.string().min(1).max(300) });

/**
 * One media file of the school's list, with its SHA-256 as the ETag (so `If-Range` resumes only the same
 * bytes). A name outside the list answers 404 as a missing file does: a box learns nothing of other schools'
 * media.
 */
export async function downMediaFile(ctx: CentralCtx<{ query: typeof mediaFileQuery }>): Promise<void> {
  const name = ctx.query.name;
  const c = await current(ctx, await schoolOfBox(ctx.db, boxOf(ctx).boxid));
  const contentType = mediaContentType(name);
  if (!contentType || !c.media.some((f) => f.name === name)) throw httpError(404, 'File not found');
  const info = await statOrUndefined(ctx.objects, name);
  if (!info) throw httpError(404, 'File not found');
  const sha256 = await objectDigest(ctx.db, ctx.objects, info);
  ctx.res.setHeader('X-Fleet-Digest', `sha256=${sha256}`);
  await sendMedia(ctx.req, ctx.res, { size: info.size, etag: sha256, lastModified: info.lastModified, contentType,
    open: (range) => ctx.objects.get(name, range) });
}

/** Serves one body: ETag and `X-Fleet-Digest` name its SHA-256; Range answers 206, If-None-Match 304. */
export function downBody(kind: DownKind) {
  return async (ctx: CentralCtx): Promise<void> => {
    const { db, res } = ctx;
    const s = await schoolOfBox(db, boxOf(ctx).boxid);
    const b = await build(db, s, kind, kind === 'students' && restoring(ctx));
    if (!b) throw httpError(404, kind === 'students' ? 'No student available' : 'No teacher available');
    try {
      res.setHeader('ETag', `"${b.tag}"`);
      res.setHeader('X-Fleet-Digest', `sha256=${b.tag}`);
      res.setHeader('Content-Type', 'application/zip');
      // Rosters carry password hashes: never for a shared cache.
      res.setHeader('Cache-Control', 'no-store');
      await new Promise<void>((resolve, reject) => {
        res.sendFile(b.path, { etag: false, lastModified: false, cacheControl: false, acceptRanges: true,
          dotfiles: 'allow' }, (err) => (err && !res.headersSent ? reject(err) : resolve()));
      });
    } finally {
      b.dispose();
    }
  };
}

/**
 * The box applied bodies: from now on central's record of its last download means "applied on the box", with
 * the bytes it fetched for them, at central's time.
 */
export async function downApplied(ctx: CentralCtx<{ body: typeof appliedBody }>) {
  const { boxid } = boxOf(ctx);
  if (ctx.body.protocol !== FLEET_PROTOCOL)
    throw httpError(400, `This central speaks fleet protocol ${FLEET_PROTOCOL}, the box ${ctx.body.protocol}: ` +
      'update the box');
  const at = new Date().toISOString();
  // The column is a 32-bit integer: a run of more than 2 GiB is recorded as 2 GiB.
  const lastdownbytes = Math.min(ctx.body.bytes, 2 ** 31 - 1);
  await ctx.db('boxes').where({ boxid }).update({ lastdownat: at, lastdownbytes });
  // The learner roster the box applied is the one central built for its school at `builtat`: the erasures made
  // before then reached this box, as a roster push would have carried them.
  const students = ctx.body.applied.find((a) => a.kind === 'students');
  if (students) {
    const built = (await ctx.db('fleetdowncache as c').join('boxes as b', 'b.schoolid', 'c.schoolid')
      .join('schools as s', 's.schoolid', 'c.schoolid').where('b.boxid', boxid)
      .first('c.students', 'c.builtat', 's.schoolname')) as
      { students: string | null; builtat: unknown; schoolname: string } | undefined;
    if (built && built.students === students.tag) {
      await erasuresCarried(ctx.db, built.schoolname, new Date(built.builtat as string).toISOString());
    }
  }
  return { recorded: true, lastdownat: at };
}

export const reportBody = strictBody({
  kind: z.enum(['package', 'students', 'teachers']),
  tag: z.string().regex(/^[0-9a-f]{64}$/, { error: 'must be 64 lower-case hex digits' }),
  status: z.number().int().min(100).max(599),
  message: z.string().trim().min(1, { error: 'is not allowed to be empty' }).max(2000),
});

const WHAT: Record<DownKind, string> = { package: 'curriculum package', students: 'learner roster',
  teachers: 'teacher roster' };

/**
 * A body the box refused to apply (a package that drops a lesson learners are on: the box's own words name
 * them). Kept as the box's last error, worded for the person who can fix it at central.
 */
export async function downReport(ctx: CentralCtx<{ body: typeof reportBody }>) {
  const { boxid } = boxOf(ctx);
  const b = ctx.body;
  const words = `The box refused the ${WHAT[b.kind]} (version ${b.tag.slice(0, 12)}, ${b.status}): ${b.message}. ` +
    'It keeps its previous one and fetches again once the version changes.';
  await ctx.db('boxes').where({ boxid }).update({ lasterror: words, lasterrorat: new Date().toISOString() });
  return { recorded: true };
}
