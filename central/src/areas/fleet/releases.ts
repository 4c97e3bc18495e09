import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { httpError, type ReleaseOffer, type ReleaseReportBody } from '@lms/shared';
import { z } from 'zod';
import { strictBody, uuidParam } from '../../auth/validation';

/**
 * Box releases rolled out in stages (docs/operations.md, "Box releases"). A release is offered to the boxes of
 * its stage: boxes chosen by id, then a percentage of the fleet, then all. A box's place in the percentage is a
 * stable hash of the release and the box, so widening from 10 % to 50 % keeps the first 10 % and adds others,
 * and each release samples a different tenth. Stages only widen; pausing stops new offers, withdrawing ends
 * them for good. A box that reports a failure or a rollback pauses the release: an operator reads why and
 * resumes or withdraws it.
 */

const RELEASE_NOT_FOUND = 'Release not found';
const guid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const releaseParams = uuidParam('releaseid', 'must be a valid GUID');
export const releaseBody = strictBody({
  // Debian's version characters (epoch colon and tilde included): the box compares it with its package's.
  version: z.string({ error: 'is required' }).regex(/^[0-9][0-9A-Za-z.+~:-]{0,63}$/,
    { error: 'must be a Debian package version such as 1.5.0' }),
  repourl: z.url({ protocol: /^https?$/, error: 'must be an http or https address of the apt repository' })
    .max(500),
  keyfingerprint: z.string({ error: 'is required' }).transform((s) => s.replace(/\s/g, '').toUpperCase())
    .pipe(z.string().regex(/^([0-9A-F]{40}|[0-9A-F]{64})$/,
      { error: 'must be an OpenPGP fingerprint (40 hex digits)' })),
  notes: z.string().max(2000).optional(),
});
export const stageBody = strictBody({
  boxids: z.array(z.string().regex(guid, { error: 'must be a valid GUID' })).max(5000).optional(),
  percent: z.number().int().min(0).max(100).optional(),
  all: z.literal(true).optional(),
});

type Row = Record<string, unknown>;
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const ids = (v: unknown): string[] => {
  try {
    const parsed: unknown = JSON.parse(String(v ?? '[]'));
    return Array.isArray(parsed) ? parsed.map(String) : [];
  } catch {
    return [];
  }
};

/** The box's place in 0..99 for this release: stable, and different per release. */
export function bucketOf(releaseid: string, boxid: string): number {
  return crypto.createHash('sha256').update(`${releaseid}\n${boxid.toLowerCase()}`).digest().readUInt32BE(0) % 100;
}

function offers(r: Row, boxid: string): boolean {
  if (r.state !== 'rolling') return false;
  if (r.stageall === true || r.stageall === 1) return true;
  if (ids(r.stageboxids).includes(boxid.toLowerCase())) return true;
  return bucketOf(String(r.releaseid), boxid) < Number(r.stagepercent ?? 0);
}

function view(r: Row) {
  return {
    releaseid: String(r.releaseid),
    version: String(r.version),
    repourl: String(r.repourl),
    keyfingerprint: String(r.keyfingerprint),
    notes: (r.notes as string | null) ?? null,
    state: String(r.state),
    stage: { boxids: ids(r.stageboxids), percent: Number(r.stagepercent ?? 0), all: Boolean(r.stageall) },
    pausedreason: (r.pausedreason as string | null) ?? null,
    createdat: iso(r.createdat),
    updatedat: iso(r.updatedat),
  };
}

async function releaseRow(db: Knex, releaseid: string): Promise<Row> {
  const r = (await db('boxreleases').where({ releaseid }).first()) as Row | undefined;
  if (!r) throw httpError(404, RELEASE_NOT_FOUND);
  return r;
}

export async function createRelease(db: Knex, b: z.infer<typeof releaseBody>, actor: string | null) {
  if (await db('boxreleases').where({ version: b.version }).first()) {
    throw httpError(409, `Release ${b.version} exists already`);
  }
  const releaseid = crypto.randomUUID();
  await db('boxreleases').insert({ releaseid, version: b.version, repourl: b.repourl, keyfingerprint: b.keyfingerprint,
    notes: b.notes ?? null, createdby: actor });
  return view(await releaseRow(db, releaseid));
}

export async function listReleases(db: Knex) {
  return (await db('boxreleases').orderBy('createdat', 'desc').orderBy('version', 'desc')).map((r) => view(r as Row));
}

/** A release with where it stands: the enrolled boxes it is offered to, those that run it, and their reports. */
export async function getRelease(db: Knex, releaseid: string) {
  const r = await releaseRow(db, releaseid);
  const boxes = (await db('boxes').where('state', 'enrolled').select('boxid', 'version')) as Row[];
  const offered = boxes.filter((b) => offers({ ...r, state: 'rolling' }, String(b.boxid)));
  const reports = (await db('boxreleasereports as p').leftJoin('boxes as b', 'b.boxid', 'p.boxid')
    .where('p.releaseid', releaseid).orderBy('p.at', 'desc')
    .select('p.boxid', 'b.name', 'b.schoolid', 'p.outcome', 'p.fromversion', 'p.message', 'p.at')) as Row[];
  const count = (o: string) => reports.filter((p) => p.outcome === o).length;
  return {
    ...view(r),
    boxes: {
      instage: offered.length,
      running: boxes.filter((b) => b.version === r.version).length,
      installed: count('installed'),
      failed: count('failed'),
      rolledback: count('rolledback'),
    },
    reports: reports.map((p) => ({ boxid: String(p.boxid), name: (p.name as string | null) ?? null,
      schoolid: (p.schoolid as string | null) ?? null, outcome: String(p.outcome),
      fromversion: (p.fromversion as string | null) ?? null, message: (p.message as string | null) ?? null,
      at: iso(p.at) })),
  };
}

/** Widens the stage (never narrows it) and sets the release rolling. */
export async function stageRelease(db: Knex, releaseid: string, b: z.infer<typeof stageBody>) {
  if (b.boxids === undefined && b.percent === undefined && b.all === undefined) {
    throw httpError(400, 'Give boxids, percent or all');
  }
  await db.transaction(async (trx) => {
    const r = await releaseRow(trx, releaseid);
    if (r.state === 'withdrawn') throw httpError(409, 'This release was withdrawn: publish a new one instead');
    const chosen = [...new Set([...ids(r.stageboxids), ...(b.boxids ?? []).map((x) => x.toLowerCase())])];
    if (b.boxids?.length) {
      const known = await trx('boxes').whereIn('boxid', b.boxids.map((x) => x.toLowerCase())).pluck('boxid');
      const unknown = b.boxids.filter((x) => !known.map(String).includes(x.toLowerCase()));
      if (unknown.length) throw httpError(400, `Unknown box ${unknown[0]}`);
    }
    await trx('boxreleases').where({ releaseid }).update({
      stageboxids: JSON.stringify(chosen),
      stagepercent: Math.max(Number(r.stagepercent ?? 0), b.percent ?? 0),
      stageall: Boolean(r.stageall) || b.all === true,
      state: 'rolling',
      pausedreason: null,
      updatedat: new Date().toISOString(),
    });
  });
  return getRelease(db, releaseid);
}

export async function setReleaseState(db: Knex, releaseid: string, to: 'paused' | 'rolling' | 'withdrawn') {
  const r = await releaseRow(db, releaseid);
  if (r.state === 'withdrawn') throw httpError(409, 'This release was withdrawn: publish a new one instead');
  if (to === 'rolling' && r.state === 'staged') throw httpError(409, 'Choose the first boxes of the release first');
  await db('boxreleases').where({ releaseid }).update({ state: to, updatedat: new Date().toISOString(),
    ...(to === 'rolling' ? { pausedreason: null } : {}),
    ...(to === 'paused' && !r.pausedreason ? { pausedreason: 'Paused by an operator' } : {}) });
  return getRelease(db, releaseid);
}

/**
 * The release this box is offered: the newest rolling release whose stage holds it and which the box has not
 * reported failing. A box already running it is offered it still, so that it knows it is current.
 */
export async function offeredRelease(db: Knex, boxid: string): Promise<{ release: ReleaseOffer | null }> {
  const failed = new Set((await db('boxreleasereports').where({ boxid }).whereIn('outcome', ['failed', 'rolledback'])
    .pluck('releaseid')).map(String));
  const rolling = (await db('boxreleases').where('state', 'rolling').orderBy('createdat', 'desc')) as Row[];
  const r = rolling.find((x) => !failed.has(String(x.releaseid)) && offers(x, boxid));
  return { release: r ? { releaseid: String(r.releaseid), version: String(r.version), repourl: String(r.repourl),
    keyfingerprint: String(r.keyfingerprint) } : null };
}

/** A box's outcome; a failure or a rollback pauses the release with the box's words. */
export async function reportRelease(db: Knex, boxid: string, b: ReleaseReportBody) {
  return db.transaction(async (trx) => {
    const r = (await trx('boxreleases').where('releaseid', b.releaseid.toLowerCase()).first()) as Row | undefined;
    if (!r) throw httpError(404, RELEASE_NOT_FOUND);
    const releaseid = String(r.releaseid);
    const row = { outcome: b.outcome, fromversion: b.fromversion ?? null, message: b.message ?? null,
      at: new Date().toISOString() };
    await trx('boxreleasereports').insert({ releaseid, boxid, ...row }).onConflict(['releaseid', 'boxid']).merge(row);
    let paused = false;
    if (b.outcome !== 'installed' && r.state === 'rolling') {
      const box = (await trx('boxes').where({ boxid }).first('name')) as Row | undefined;
      const what = b.outcome === 'failed' ? 'could not install it'
        : `rolled back to ${b.fromversion ?? 'its release'}`;
      await trx('boxreleases').where({ releaseid }).update({ state: 'paused', updatedat: row.at,
        pausedreason: `Box ${String(box?.name ?? boxid)} (${boxid}) ${what}: ${b.message ?? 'no reason given'}` });
      paused = true;
    }
    if (b.outcome !== 'installed') {
      const happened = b.outcome === 'failed' ? 'could not be installed' : 'was rolled back';
      await trx('boxes').where({ boxid }).update({ lasterrorat: row.at,
        lasterror: `Release ${String(r.version)} ${happened}: ${b.message ?? 'no reason given'}` });
    }
    return { recorded: true, paused };
  });
}
