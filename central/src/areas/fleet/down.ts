import crypto from 'node:crypto';
import fs from 'node:fs';
import { minimisedForBox, writeStudentsZip, writeTeachersZip, httpError } from '@lms/shared';
import type { Knex } from '@lms/db';
import { z } from 'zod';
import { strictBody } from '../../auth/validation';
import type { CentralCtx, Scope } from '../../http/types';
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

/** The version tag of each body (null: the school has none); a poll that finds them unchanged fetches nothing. */
export async function downState(ctx: CentralCtx): Promise<Record<DownKind, string | null> &
  { studentsplain?: string | null }> {
  const s = await schoolOfBox(ctx.db, boxOf(ctx).boxid);
  const out = {} as Record<DownKind, string | null> & { studentsplain?: string | null };
  for (const kind of DOWN_KINDS) {
    const b = await build(ctx.db, s, kind, kind === 'students' && restoring(ctx));
    out[kind] = b?.tag ?? null;
    b?.dispose();
  }
  if (restoring(ctx)) {
    // The plain roster's tag, which the box records once it applied the one with progress: its next poll
    // then finds the roster unchanged instead of fetching it again without the progress.
    const plain = await build(ctx.db, s, 'students');
    out.studentsplain = plain?.tag ?? null;
    plain?.dispose();
  }
  return out;
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
