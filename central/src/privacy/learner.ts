import crypto from 'node:crypto';
import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { Knex } from '@lms/db';
import type { Logger } from '@lms/shared';
import { BOX_WITHHELD_STUDENT_COLUMNS, ROSTER_COLUMNS } from '@lms/shared';
import { LEARNER_IDENTITY_COLUMNS } from '../http/privacy';
import type { ObjectStore } from '../objects/types';

/**
 * One learner's data on request: everything central holds that names them (export), the erasure of their
 * identity, and the retention that erases it after years without activity. The erased rows stay, with their
 * ids, so that every aggregate report keeps its counts.
 */

/** Columns that name a learner. A table with one of them is read by the export (found from the live schema). */
export const LEARNER_COLUMNS = ['studentid', 'schooluserid'] as const;
/**
 * Columns named otherwise that hold a learner's sign-in account (`schooluserid`), as the log import has them:
 * the classroom's sign-ins name the account `userid`.
 */
export const ACCOUNT_COLUMN_OF: Readonly<Record<string, string>> = { rpiuseraccess: 'userid' };
/** Tables whose rows are the learner's through another table's row (a question's answer of an attempt). */
export const THROUGH: Readonly<Record<string, { column: string; table: string }>> = {
  studentprogressquestions: { column: 'studentprogressid', table: 'studentprogress' },
};
/** Columns never written into an export: a secret is not personal data the learner asked for. */
const SECRET_COLUMNS = new Set(['schooluserpasswordhash']);

const isPg = (db: Knex) => db.client.config.client === 'pg';
type Row = Record<string, unknown>;

/** Every table of the live schema with a learner column, and which of the columns it has (sorted by table). */
export async function learnerTables(db: Knex): Promise<Array<{ table: string; columns: string[] }>> {
  const cols: Array<{ t: string; c: string }> = [];
  if (isPg(db)) {
    const r = await db.raw(
      'SELECT table_name AS t, column_name AS c FROM information_schema.columns WHERE table_schema = current_schema()',
    );
    cols.push(...(r.rows as Array<{ t: string; c: string }>));
  } else {
    const tables = (await db.raw(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )) as Array<{ name: string }>;
    for (const { name } of tables) {
      const info = (await db.raw(`PRAGMA table_info("${name.replace(/"/g, '""')}")`)) as Array<{ name: string }>;
      for (const c of info) cols.push({ t: name, c: c.name });
    }
  }
  const by = new Map<string, string[]>();
  for (const { t, c } of cols) {
    const named = (LEARNER_COLUMNS as readonly string[]).includes(c.toLowerCase())
      || ACCOUNT_COLUMN_OF[t] === c || THROUGH[t]?.column === c;
    if (!named) continue;
    by.set(t, [...(by.get(t) ?? []), c]);
  }
  return [...by.entries()].sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([table, columns]) => ({ table, columns: columns.sort() }));
}

export interface Learner {
  studentid: string;
  schooluserid: string | null;
  schoolname: string | null;
  profileimage: string | null;
}

export async function findLearner(db: Knex, studentid: string): Promise<Learner | undefined> {
  const s = await db('students').where('studentid', studentid).first('studentid', 'schooluserid', 'schoolname',
    'profileimage');
  if (!s) return undefined;
  return {
    studentid: String(s.studentid), schooluserid: s.schooluserid ?? null, schoolname: s.schoolname ?? null,
    profileimage: s.profileimage || null,
  };
}

/** A page of rows a query: a learner's activity can run to many thousands of rows. */
const PAGE = 5000;

async function rowsOf(db: Knex, table: string, columns: string[], l: Learner): Promise<Row[]> {
  const out: Row[] = [];
  const through = THROUGH[table];
  const q = () => db(table).where((w) => {
    for (const c of columns) {
      if (through?.column === c) {
        w.orWhereIn(c, db(through.table).where('studentid', l.studentid).select(through.column));
        continue;
      }
      const v = c.toLowerCase() === 'schooluserid' || ACCOUNT_COLUMN_OF[table] === c ? l.schooluserid : l.studentid;
      if (v !== null) w.orWhere(c, v);
    }
  });
  for (let offset = 0; ; offset += PAGE) {
    const rows = (await q().orderBy(columns[0]).limit(PAGE).offset(offset)) as Row[];
    for (const r of rows) {
      for (const k of Object.keys(r)) if (SECRET_COLUMNS.has(k)) delete r[k];
      out.push(r);
    }
    if (rows.length < PAGE) return out;
  }
}

export interface LearnerExport {
  /** file name in the ZIP → its content */
  files: Array<{ name: string; content: Buffer | string }>;
  manifest: Row;
  /** Learners the export names (the one asked for), for the access record. */
  studentids: string[];
}

async function readObject(objects: ObjectStore, key: string): Promise<Buffer | undefined> {
  try {
    const chunks: Buffer[] = [];
    for await (const c of await objects.get(key)) chunks.push(Buffer.from(c as Buffer));
    return Buffer.concat(chunks);
  } catch {
    return undefined;
  }
}

/** What an enrolled box holds of a learner: its roster's fields (the rest of the identity never leaves central). */
const BOX_HOLDS = [...new Set([...Object.keys(ROSTER_COLUMNS.schoolusers), ...Object.keys(ROSTER_COLUMNS.students)])]
  .filter((c) => !(BOX_WITHHELD_STUDENT_COLUMNS as readonly string[]).includes(c));

/** Everything central holds that names the learner, as the files of one ZIP and its manifest. */
export async function exportLearner(db: Knex, objects: ObjectStore | undefined, l: Learner): Promise<LearnerExport> {
  const files: LearnerExport['files'] = [];
  const tables: Row[] = [];
  for (const { table, columns } of await learnerTables(db)) {
    const rows = await rowsOf(db, table, columns, l);
    const name = `tables/${table}.json`;
    files.push({ name, content: `${JSON.stringify(rows, null, 2)}\n` });
    tables.push({ table, file: name, matchedby: columns, rows: rows.length });
  }
  const stored: Row[] = [];
  if (l.profileimage && objects) {
    const body = await readObject(objects, l.profileimage);
    const name = `objects/${l.profileimage.replace(/[^A-Za-z0-9._-]/g, '_')}`;
    if (body) files.push({ name, content: body });
    stored.push({ key: l.profileimage, file: body ? name : null, what: 'profile photo' });
  }
  const archives = (await db('logarchives').whereNotNull('settled_at').orderBy('archive').pluck('archive'))
    .map(String);
  const boxes = l.schoolname
    ? await db('boxes as b').join('schools as s', 's.schoolid', 'b.schoolid').where('s.schoolname', l.schoolname)
      .orderBy('b.createdat')
      .select('b.boxid', 'b.name', 'b.state', 'b.lastcontactat', 'b.lastgoodat', 'b.rowswaiting')
    : [];
  for (const b of boxes) b.holds = b.state === 'revoked' ? [] : BOX_HOLDS;
  const erasure = await db('learnererasures').where('studentid', l.studentid).first();
  const manifest: Row = {
    studentid: l.studentid,
    schooluserid: l.schooluserid,
    schoolname: l.schoolname,
    exportedat: new Date().toISOString(),
    erased: erasure ? { at: erasure.erasedat, reason: erasure.reason } : null,
    tables,
    objects: stored,
    logarchives: {
      what: 'Activity logs as uploaded by classroom servers. Each holds the rows of many learners, so none is ' +
        'included; the learner\'s rows from them are in the tables above. Kept until LOG_ARCHIVE_RETENTION_DAYS.',
      archives,
    },
    boxes: {
      what: 'Classroom servers of the learner\'s school enrolled in the fleet. Each holds, of the learner, the ' +
        'fields in `holds` as central last sent them (the roster a box receives carries no other identity field) ' +
        'and the learner\'s activity there. The activity a box has sent is in the tables above; `rowswaiting` ' +
        'counts the changes of the whole box, as of its last contact, that it had not yet sent. A revoked box ' +
        'holds what it held when it was revoked. A box that is not enrolled in the fleet is not covered at all: ' +
        'ask the school for it.',
      boxes,
    },
    backups: 'Backups taken by the operator hold the same rows until they are deleted; they are not in this export.',
  };
  files.unshift({ name: 'manifest.json', content: `${JSON.stringify(manifest, null, 2)}\n` });
  files.unshift({ name: 'manifest.txt', content: manifestText(manifest, tables, stored, archives, boxes) });
  return { files, manifest, studentids: [l.studentid] };
}

function manifestText(m: Row, tables: Row[], stored: Row[], archives: string[], boxes: Row[]): string {
  const lines = [
    `Data held at central about learner ${String(m.studentid)} (school ${String(m.schoolname ?? 'none')}),`,
    `exported ${String(m.exportedat)}.`,
    m.erased ? 'This learner\'s identity was erased: the rows below keep ids and activity only.' : '',
    '',
    'tables/<name>.json: every row of that table of central\'s database that names the learner',
    '(by studentid, or by the sign-in account: schooluserid, the sign-ins\' userid; a quiz attempt\'s answers',
    'by the attempt). Password hashes are left out.',
    ...tables.map((t) => `  ${String(t.table)}: ${String(t.rows)} row(s)`),
    '',
    'objects/: the learner\'s files in the object store',
    ...(stored.length ? stored.map((o) => `  ${String(o.key)}: ${String(o.what)}${o.file ? '' : ' (not found)'}`)
      : ['  none']),
    '',
    `Log archives (${archives.length}): activity logs as uploaded, each holding many learners\' rows; listed in`,
    'manifest.json, not included. The learner\'s rows from them are in the tables above.',
    '',
    'Classroom servers (boxes) of the school enrolled in the fleet: each holds the learner\'s',
    `${BOX_HOLDS.join(', ')} as central last sent them, and the learner's activity there;`,
    'what a box has sent is in the tables above, what it had not sent at its last contact is counted here.',
    ...(boxes.length ? boxes.map((b) => `  ${String(b.name)} (${String(b.boxid)}): ${String(b.state)}, last contact ` +
      `${String(b.lastcontactat ?? 'never')}, ${String(b.rowswaiting ?? 'unknown')} change(s) of the box not yet sent`)
      : ['  none enrolled in the fleet']),
    'A box not enrolled in the fleet is not covered: ask the school for what it holds.',
    '',
    'Backups taken by the operator hold the same rows until they are deleted.',
    '',
  ];
  return lines.filter((x, i) => x !== '' || i !== 2).join('\n');
}

/** The export as one ZIP stream. */
export function learnerZip(e: LearnerExport): Readable {
  const zip = new yazl.ZipFile();
  const mtime = new Date();
  for (const f of e.files) zip.addBuffer(Buffer.isBuffer(f.content) ? f.content : Buffer.from(f.content), f.name,
    { mtime });
  zip.end();
  return zip.outputStream as Readable;
}

/** What an erased learner's identity becomes: empty, or null where the column allows it. */
export function erasedIdentity(): Row {
  const out: Row = {};
  for (const c of LEARNER_IDENTITY_COLUMNS) out[c] = null;
  // Not nullable in the schema (and required by classroom servers' roster import): empty rather than null.
  out.studentfirstname = '';
  return out;
}

export type ErasureReason = 'request' | 'retention';

/**
 * Erases one learner's identity at central: the identity fields of their learner rows, the sign-in name of
 * their account (replaced by a token that names no one), and their profile photo in the object store. The
 * rows themselves and every activity row stay, with their ids: the reports keep their counts. The learner
 * is marked in `learnererasures` in the same transaction (at most once: a second erasure changes nothing and
 * answers `erased: false`); the mark is also the school's pending erasure for its classroom servers, which
 * the next roster carries anonymised.
 */
export async function eraseLearner(
  db: Knex,
  objects: ObjectStore | undefined,
  l: Learner,
  o: { by: string | null; reason: ErasureReason },
): Promise<{ erased: boolean; token: string }> {
  const token = `erased-${crypto.randomBytes(8).toString('hex')}`;
  const done = await db.transaction(async (trx) => {
    const inserted = await trx('learnererasures').insert({
      studentid: l.studentid, schooluserid: l.schooluserid, schoolname: l.schoolname, token, reason: o.reason,
      erasedat: new Date().toISOString(), erasedby: o.by,
    }).onConflict('studentid').ignore().returning('studentid');
    if (!inserted.length) return false;
    const now = new Date().toISOString();
    await trx('students').where('studentid', l.studentid).update({ ...erasedIdentity(), updated_at: now });
    if (l.schooluserid) {
      await trx('students').where('schooluserid', l.schooluserid).update({ ...erasedIdentity(), updated_at: now });
      await trx('schoolusers').where('schooluserid', l.schooluserid).update({ schoolusername: token, updated_at: now });
    }
    return true;
  });
  if (!done) {
    const row = await db('learnererasures').where('studentid', l.studentid).first('token');
    return { erased: false, token: String(row?.token ?? '') };
  }
  if (l.profileimage && objects) {
    // The row no longer names the photo; an object that cannot be removed now is an orphan the operator sees.
    await objects.delete(l.profileimage).catch(() => undefined);
  }
  return { erased: true, token };
}

const YEAR_MS = 365.25 * 24 * 60 * 60 * 1000;
/** Learners one pass erases at most: the next pass, an hour later, takes the rest. */
export const RETENTION_BATCH = 500;

/**
 * Learners with no activity for `years`: not erased yet, their learner row unchanged since the cutoff and no
 * sign-in (`rpiuseraccess`, by account) or progress row since then.
 */
export async function inactiveLearners(db: Knex, years: number, limit = RETENTION_BATCH): Promise<Learner[]> {
  const cutoff = new Date(Date.now() - years * YEAR_MS).toISOString();
  const rows = await db('students as s')
    .whereNotExists(db('learnererasures as e').whereRaw('e.studentid = s.studentid'))
    .where((w) => w.where('s.updated_at', '<', cutoff).orWhereNull('s.updated_at'))
    .where((w) => w.where('s.created_at', '<', cutoff).orWhereNull('s.created_at'))
    .whereNotExists(db('rpiuseraccess as a').whereRaw('a.userid = s.schooluserid').where('a.logintime', '>=', cutoff))
    .whereNotExists(db('studentprogress as p').whereRaw('p.studentid = s.studentid')
      .where('p.starttime', '>=', cutoff))
    .orderBy('s.studentid').limit(limit)
    .select('s.studentid', 's.schooluserid', 's.schoolname', 's.profileimage');
  return rows.map((s: Row) => ({
    studentid: String(s.studentid), schooluserid: (s.schooluserid as string) ?? null,
    schoolname: (s.schoolname as string) ?? null, profileimage: (s.profileimage as string) || null,
  }));
}

/**
 * One retention pass (LEARNER_RETENTION_YEARS): erases the inactive learners, each at most once on every
 * instance (the mark is taken in the erasure's transaction). Returns how many this pass erased.
 */
export async function anonymiseInactive(
  deps: { db: Knex; objects?: ObjectStore; logger: Logger },
  years: number,
  count: (n: number) => void = () => undefined,
): Promise<number> {
  if (years <= 0) return 0;
  let n = 0;
  for (const l of await inactiveLearners(deps.db, years)) {
    if ((await eraseLearner(deps.db, deps.objects, l, { by: null, reason: 'retention' })).erased) n += 1;
  }
  if (n) {
    count(n);
    deps.logger.info({ anonymised: n, years },
      'retention: anonymised learners without activity for LEARNER_RETENTION_YEARS');
  }
  return n;
}

/**
 * A roster of the school reached its classroom server: the erasures pending for that school are carried (the
 * roster holds the erased learners anonymised, and the box's import overwrites its copy). Erasures made
 * after `rosterAt` (the time the roster was read) stay pending.
 */
export async function erasuresCarried(db: Knex, schoolname: string, rosterAt: string): Promise<number> {
  return Number(await db('learnererasures').where('schoolname', schoolname).whereNull('rosterpushedat')
    .where('erasedat', '<=', rosterAt).update({ rosterpushedat: new Date().toISOString() }));
}
