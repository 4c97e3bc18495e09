import crypto from 'node:crypto';
import { readRows, type Knex } from '@lms/db';
import {
  FLEET_PROTOCOL,
  formatEnrolCode,
  httpError,
  newEnrolCode,
  sha256Hex,
  type ContactAnswer,
  type ContactBody,
  type EnrolAnswer,
  type EnrolBody,
} from '@lms/shared';
import { z } from 'zod';
import { strictBody, uuidParam } from '../../auth/validation';
import { CODE_REFUSED } from '../../auth/box-credentials';
import { applyScope, schoolInScope, type Scope } from '../../http/scope';
import { offeredRelease } from './releases';
import { effectiveSettings, wantedVersions } from './settings';
import { pendingDiagnostics } from './diagnostics';

/** A box outside the caller's schools is answered as one that does not exist. */
export const BOX_NOT_FOUND = 'Box not found';
const INVALID_SCHOOL = 'Invalid school id';

export const boxParams = uuidParam('boxid', 'must be a valid GUID');
export const registerBody = strictBody({
  schoolid: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    { error: 'must be a valid GUID' }),
  name: z.string({ error: 'is required' }).trim().min(1, { error: 'is not allowed to be empty' })
    .max(200, { error: 'length must be less than or equal to 200 characters long' }),
  /** The box this one replaces (a dead box of the same school): revoked when the new one enrols. */
  replaces: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
    { error: 'must be a valid GUID' }).optional(),
});
export const listQuery = z.strictObject({
  schoolid: z.string().max(36).optional(),
  state: z.enum(['registered', 'enrolled', 'revoked']).optional(),
  pageindex: z.coerce.number().int().min(0).max(1_000_000).default(0),
  pagesize: z.coerce.number().int().min(1).max(200).default(50),
});

/** What central shows of a box: never its secret's or its code's digest. */
const PUBLIC_COLUMNS = [
  'b.boxid', 'b.schoolid', 's.schoolname', 'b.name', 'b.state', 'b.createdat', 'b.enrolledat', 'b.revokedat',
  'b.lastcontactat', 'b.version', 'b.protocol', 'b.clockskewms', 'b.freediskbytes', 'b.lasterror',
  'b.enrolcodeexpiresat', 'b.ackedseq', 'b.lastupat', 'b.lastuprows', 'b.lastupbytes',
  'b.lastdownat', 'b.lastdownbytes', 'b.rowswaiting', 'b.failures', 'b.lastgoodat',
  'b.settingsversion', 'b.replacesboxid', 'b.replacedbyboxid', 'b.lostrowswaiting', 'b.lostlastgoodat',
  'b.lostlastupat', 'b.replacedat',
];

const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());
const num = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

function view(r: Record<string, unknown>, wanted = 0) {
  const expires = iso(r.enrolcodeexpiresat);
  return {
    boxid: r.boxid as string,
    schoolid: r.schoolid as string,
    schoolname: (r.schoolname as string | null) ?? null,
    name: r.name as string,
    state: r.state as string,
    createdat: iso(r.createdat),
    enrolledat: iso(r.enrolledat),
    revokedat: iso(r.revokedat),
    lastcontactat: iso(r.lastcontactat),
    version: (r.version as string | null) ?? null,
    protocol: num(r.protocol),
    clockskewms: num(r.clockskewms),
    freediskbytes: num(r.freediskbytes),
    lasterror: (r.lasterror as string | null) ?? null,
    // Whether a code waits to be used (the code itself was shown once, when it was made).
    enrolcodeexpiresat: expires && Date.parse(expires) > Date.now() ? expires : null,
    ackedseq: num(r.ackedseq) ?? 0,
    lastupat: iso(r.lastupat),
    lastuprows: num(r.lastuprows),
    lastupbytes: num(r.lastupbytes),
    lastdownat: iso(r.lastdownat),
    lastdownbytes: num(r.lastdownbytes),
    rowswaiting: num(r.rowswaiting),
    failures: num(r.failures) ?? 0,
    lastgoodat: iso(r.lastgoodat),
    settingsversion: num(r.settingsversion),
    wantedsettingsversion: wanted,
    replacedbyboxid: (r.replacedbyboxid as string | null) ?? null,
    // What the box it replaced had not sent: its rows waiting and last good sync, as that box last told central.
    replaces: r.replacesboxid ? {
      boxid: r.replacesboxid as string,
      lostrowswaiting: num(r.lostrowswaiting),
      lastgoodat: iso(r.lostlastgoodat),
      lastupat: iso(r.lostlastupat),
      replacedat: iso(r.replacedat),
    } : null,
  };
}
export type BoxView = ReturnType<typeof view>;

const boxesIn = (db: Knex, scope: Scope) =>
  applyScope(db('boxes as b').leftJoin('schools as s', 's.schoolid', 'b.schoolid'), scope, { schoolid: 'b.schoolid' });

export async function listBoxes(db: Knex, scope: Scope, q: z.output<typeof listQuery>) {
  const where = (qb: Knex.QueryBuilder) => {
    if (q.schoolid) qb.where('b.schoolid', q.schoolid);
    if (q.state) qb.where('b.state', q.state);
    return qb;
  };
  const total = (await where(boxesIn(db, scope)).count({ n: '*' }).first()) as { n: number | string } | undefined;
  const rows = await readRows(
    where(boxesIn(db, scope)).select(PUBLIC_COLUMNS).orderBy([{ column: 'b.createdat' }, { column: 'b.boxid' }])
      .limit(q.pagesize).offset(q.pageindex * q.pagesize),
  );
  const wanted = await wantedVersions(db, rows as Array<{ boxid: string; schoolid: string }>);
  return { boxes: rows.map((r) => view(r, wanted.get(r.boxid as string))), total: Number(total?.n ?? 0),
    pageindex: q.pageindex, pagesize: q.pagesize };
}

async function boxIn(db: Knex, scope: Scope, boxid: string): Promise<BoxView> {
  const row = (await boxesIn(db, scope).where('b.boxid', boxid).first(PUBLIC_COLUMNS)) as
    | Record<string, unknown>
    | undefined;
  if (!row) throw httpError(404, BOX_NOT_FOUND);
  const wanted = await wantedVersions(db, [row as { boxid: string; schoolid: string }]);
  return view(row, wanted.get(boxid));
}

export const getBox = (db: Knex, scope: Scope, boxid: string) => boxIn(db, scope, boxid);

/** A fresh code for a box, stored only as its SHA-256; shown once, in this answer. */
function codeFields(validMs: number) {
  const code = newEnrolCode();
  const expires = new Date(Date.now() + validMs).toISOString();
  return {
    code: formatEnrolCode(code),
    expires,
    columns: { enrolcodehash: sha256Hex(code), enrolcodeexpiresat: expires },
  };
}

export async function registerBox(
  db: Knex, scope: Scope, body: z.output<typeof registerBody>, validMs: number, by: string | null,
) {
  const school = (await db('schools').where({ schoolid: body.schoolid, isdeleted: false }).first('schoolid')) as
    | { schoolid: string }
    | undefined;
  if (!school || !schoolInScope(scope, { schoolid: school.schoolid })) throw httpError(400, INVALID_SCHOOL);
  const replaced = body.replaces ? await replaceable(db, scope, body.replaces, school.schoolid) : undefined;
  const boxid = crypto.randomUUID();
  const c = codeFields(validMs);
  await db('boxes').insert({ boxid, schoolid: school.schoolid, name: body.name, state: 'registered', createdby: by,
    ...c.columns, ...(replaced ? { replacesboxid: replaced.boxid, ...lostOf(replaced) } : {}) });
  return { box: await boxIn(db, scope, boxid), enrolmentcode: c.code, expiresat: c.expires };
}

/** The box a new one may replace: one of the caller's, of the same school, not replaced already. */
async function replaceable(db: Knex, scope: Scope, boxid: string, schoolid: string): Promise<BoxView> {
  const old = await boxIn(db, scope, boxid).catch(() => {
    throw httpError(400, 'The box to replace is not one of your boxes');
  });
  if (old.schoolid !== schoolid) throw httpError(400, 'A box replaces a box of its own school');
  if (old.replacedbyboxid) throw httpError(409, 'That box was already replaced by another');
  // One replacement at a time: a second would find the old box revoked by the first and lose track of it.
  const pending = (await db('boxes').where({ replacesboxid: boxid }).whereNot({ state: 'revoked' })
    .first('boxid')) as { boxid: string } | undefined;
  if (pending) throw httpError(409, `A replacement for that box is registered already (${pending.boxid})`);
  return old;
}

/** What a replacement loses with the box it replaces: what that box had not sent, as it last said. */
function lostOf(old: Pick<BoxView, 'rowswaiting' | 'lastgoodat' | 'lastupat'>) {
  return { lostrowswaiting: old.rowswaiting, lostlastgoodat: old.lastgoodat, lostlastupat: old.lastupat };
}

/** A new code replaces the old one; using it replaces the box's credential (the old secret is refused). */
export async function newCode(db: Knex, scope: Scope, boxid: string, validMs: number) {
  await boxIn(db, scope, boxid);
  const c = codeFields(validMs);
  await db('boxes').where({ boxid }).update(c.columns);
  return { box: await boxIn(db, scope, boxid), enrolmentcode: c.code, expiresat: c.expires };
}

/** One step: the box's next request is refused, and a code waiting for it is withdrawn. */
export async function revokeBox(db: Knex, scope: Scope, boxid: string) {
  const box = await boxIn(db, scope, boxid);
  if (box.state !== 'revoked') {
    await db('boxes').where({ boxid })
      .update({ state: 'revoked', revokedat: new Date().toISOString(), enrolcodehash: null, enrolcodeexpiresat: null });
  }
  return boxIn(db, scope, boxid);
}

function checkProtocol(protocol: number): void {
  if (protocol !== FLEET_PROTOCOL)
    throw httpError(400, `This central speaks fleet protocol ${FLEET_PROTOCOL}, the box ${protocol}: update the box`);
}

/**
 * The code's exchange: the box's secret's SHA-256 replaces any earlier credential, the code is used up.
 * The update names the code's digest, so that two boxes sending the same code cannot both enrol.
 */
export async function enrol(db: Knex, box: { boxid: string; schoolid: string; codehash: string }, body: EnrolBody):
  Promise<EnrolAnswer> {
  checkProtocol(body.protocol);
  const now = new Date().toISOString();
  await db.transaction(async (trx) => {
    const n = await trx('boxes').where({ boxid: box.boxid, enrolcodehash: box.codehash }).update({
      secrethash: sha256Hex(body.secret), state: 'enrolled', enrolledat: now, enrolcodehash: null,
      enrolcodeexpiresat: null, version: body.version, protocol: body.protocol, lasterror: null, lasterrorat: null,
    });
    if (!n) throw httpError(401, CODE_REFUSED);
    await replaceOld(trx, box.boxid, now);
  });
  const school = (await db('schools').where({ schoolid: box.schoolid }).first('schoolname')) as
    | { schoolname: string }
    | undefined;
  return {
    boxid: box.boxid, schoolid: box.schoolid, schoolname: school?.schoolname ?? null,
    centraltime: new Date().toISOString(), protocol: FLEET_PROTOCOL,
  };
}

/**
 * A replacement's enrolment revokes the box it replaces, and keeps on the new box what the old one had not
 * sent (its last report, refreshed now: it may have contacted central since the replacement was registered).
 */
async function replaceOld(trx: Knex.Transaction, boxid: string, now: string): Promise<void> {
  const me = (await trx('boxes').where({ boxid }).first('replacesboxid')) as { replacesboxid: string | null };
  if (!me?.replacesboxid) return;
  const old = (await trx('boxes').where({ boxid: me.replacesboxid }).first('rowswaiting', 'lastgoodat', 'lastupat',
    'replacedbyboxid', 'state')) as Record<string, unknown> | undefined;
  if (!old || (old.replacedbyboxid && old.replacedbyboxid !== boxid)) return;
  // A box revoked before (a stolen one) keeps the time it was revoked.
  await trx('boxes').where({ boxid: me.replacesboxid }).update({ state: 'revoked',
    ...(old.state === 'revoked' ? {} : { revokedat: now }), replacedbyboxid: boxid, enrolcodehash: null,
    enrolcodeexpiresat: null });
  await trx('boxes').where({ boxid }).update({ replacedat: now, ...lostOf({ rowswaiting: num(old.rowswaiting),
    lastgoodat: iso(old.lastgoodat), lastupat: iso(old.lastupat) }) });
}

/** A box's report: central records it and answers its own time (the box's is never trusted beyond the skew). */
export async function contact(db: Knex, box: { boxid: string; schoolid: string }, body: ContactBody):
  Promise<ContactAnswer> {
  checkProtocol(body.protocol);
  const now = Date.now();
  const skew = now - Date.parse(body.boxtime);
  await db('boxes').where({ boxid: box.boxid }).update({
    lastcontactat: new Date(now).toISOString(), version: body.version, protocol: body.protocol, clockskewms: skew,
    ...(body.freediskbytes !== undefined ? { freediskbytes: body.freediskbytes } : {}),
    ...(body.lasterror !== undefined
      ? { lasterror: body.lasterror, lasterrorat: body.lasterror ? new Date(now).toISOString() : null }
      : {}),
    ...(body.rowswaiting !== undefined ? { rowswaiting: body.rowswaiting } : {}),
    ...(body.failures !== undefined ? { failures: body.failures } : {}),
    // The box's previous sync went well (it says so by sending no error): a good sync, by central's clock.
    ...(body.lasterror === null ? { lastgoodat: new Date(now).toISOString() } : {}),
    ...(body.settingsversion !== undefined ? { settingsversion: body.settingsversion } : {}),
  });
  const acked = (await db('boxes').where({ boxid: box.boxid }).first('ackedseq')) as { ackedseq: number | string };
  return { boxid: box.boxid, schoolid: box.schoolid, centraltime: new Date().toISOString(), clockskewms: skew,
    protocol: FLEET_PROTOCOL, ackedseq: Number(acked?.ackedseq ?? 0),
    settings: await effectiveSettings(db, box), diagnostics: await pendingDiagnostics(db, box.boxid),
    ...(await offeredRelease(db, box.boxid)) };
}
