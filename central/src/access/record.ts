import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { LEARNER_IDENTITY_COLUMNS } from '../http/privacy';
import type { Caller } from '../http/types';

/**
 * The access record of learner data: who read, downloaded or changed which learners' identity (the fields
 * of the spec's staff-only rule, LEARNER_IDENTITY_COLUMNS), or changed who may see it, when, from where and
 * with what outcome. An entry holds ids, the route, the address and counts, never the personal data.
 *
 * Entries form a hash chain: `hash = SHA-256(prevhash || "\n" || canonical entry)`, the canonical entry
 * holding every column but the id (and the sorted ids of the learners it names), the first entry's
 * `prevhash` 64 zeros. Appends are serialised (a transaction-scoped advisory lock on PostgreSQL; SQLite has
 * one writer), so each entry links to the one committed before it.
 */

export const GENESIS = '0'.repeat(64);
/** The advisory lock that serialises appends on PostgreSQL (any constant; only this module takes it). */
const APPEND_LOCK = 0x4c4d5341; // "LMSA"
/** Learner rows inserted by one statement: the ids go as one JSON array, a single bound value. */
const LEARNER_BATCH = 10_000;

/**
 * What an entry says of the exchange: `answered` (a JSON answer, or a change made), `download started`
 * (before the first byte of a download), `download finished` / `download cut` (before its last byte, or
 * when the client went away), `download failed` (the download answered an error instead).
 */
export type Stage = 'answered' | 'download started' | 'download finished' | 'download cut' | 'download failed';

export interface AccessEntry {
  at: string;
  requestid: string | null;
  accountid: string | null;
  accountkind: string;
  method: string;
  route: string;
  path: string;
  client: string | null;
  stage: Stage;
  outcome: number | null;
  learnercount: number | null;
  /** Canonical JSON of the query/body filter of a bulk answer (ids and dates only), or null. */
  filter: string | null;
  studentids: string[];
}

export interface StoredEntry extends Omit<AccessEntry, 'studentids'> {
  id: number;
  prevhash: string;
  hash: string;
}

/** The account an entry names: a staff or school account's id, else none (the API key, the sync key). */
export function accountOf(caller: Caller | undefined): { accountid: string | null; accountkind: string } {
  if (!caller) return { accountid: null, accountkind: 'anonymous' };
  switch (caller.kind) {
    case 'staff': return { accountid: caller.lmsuserid, accountkind: 'staff' };
    case 'school': return { accountid: caller.schooluserid, accountkind: 'school' };
    case 'token': return { accountid: caller.sub, accountkind: 'token' };
    default: return { accountid: null, accountkind: caller.kind };
  }
}

const iso = (v: unknown): string => new Date(v as string).toISOString();

/** The characters hashed for one entry (the id is left out: the chain, not the numbering, orders entries). */
export function canonical(e: Omit<AccessEntry, 'studentids'>, studentids: readonly string[]): string {
  return JSON.stringify([
    iso(e.at), e.requestid ?? null, e.accountid ?? null, e.accountkind, e.method, e.route, e.path,
    e.client ?? null, e.stage, e.outcome ?? null, e.learnercount ?? null, e.filter ?? null,
    [...studentids].sort(),
  ]);
}

export function chainHash(prevhash: string, canon: string): string {
  return crypto.createHash('sha256').update(prevhash).update('\n').update(canon).digest('hex');
}

const isPg = (db: Knex) => db.client.config.client === 'pg';

/**
 * The learners of one entry in one statement, their ids bound as one JSON array and expanded by the database
 * (json_each, jsonb_array_elements_text): a multi-row insert of the driver costs several times as much.
 */
function insertLearners(trx: Knex.Transaction, entryid: number, ids: readonly string[]): Promise<unknown> {
  const json = JSON.stringify(ids);
  return isPg(trx)
    ? trx.raw('INSERT INTO accessrecordlearners (entryid, studentid) SELECT ?, jsonb_array_elements_text(?::jsonb)',
      [entryid, json])
    : trx.raw('INSERT INTO accessrecordlearners (entryid, studentid) SELECT ?, value FROM json_each(?)',
      [entryid, json]);
}

/** Appends entries, in order, in one transaction committed before this resolves; returns their ids. */
export async function appendEntries(db: Knex, entries: readonly AccessEntry[]): Promise<number[]> {
  if (!entries.length) return [];
  return db.transaction(async (trx) => {
    if (isPg(trx)) await trx.raw('SELECT pg_advisory_xact_lock(?)', [APPEND_LOCK]);
    const last = await trx('accessrecord').orderBy('id', 'desc').first('hash');
    let prevhash: string = last?.hash ?? GENESIS;
    const ids: number[] = [];
    for (const { studentids, ...e } of entries) {
      const unique = [...new Set(studentids)];
      const hash = chainHash(prevhash, canonical(e, unique));
      const [row] = await trx('accessrecord').insert({ ...e, at: iso(e.at), prevhash, hash }).returning('id');
      const id = Number(typeof row === 'object' ? (row as { id: number }).id : row);
      for (let i = 0; i < unique.length; i += LEARNER_BATCH) {
        await insertLearners(trx, id, unique.slice(i, i + LEARNER_BATCH));
      }
      ids.push(id);
      prevhash = hash;
    }
    return ids;
  });
}

export interface VerifyResult {
  ok: boolean;
  /** Entries checked. */
  checked: number;
  /** The oldest kept entry (whose prevhash is taken as given: the entries before it aged out). */
  firstid: number | null;
  lastid: number | null;
  /** The first entry that does not fit, and why. */
  broken?: { id: number; reason: string };
}

/** Entries read a page at a time: memory stays flat however long the record. */
const VERIFY_PAGE = 1000;

/**
 * Walks the chain from the oldest kept entry: each entry's prevhash must be the hash of the one before it,
 * and its hash must be that of its own columns and learners. The oldest kept entry's prevhash is taken as
 * given (GENESIS, or the hash of an entry removed by retention).
 */
export async function verifyChain(db: Knex): Promise<VerifyResult> {
  let prev: string | null = null;
  let afterId = 0;
  let checked = 0;
  let firstid: number | null = null;
  let lastid: number | null = null;
  for (;;) {
    const rows: StoredEntry[] = await db('accessrecord').where('id', '>', afterId).orderBy('id').limit(VERIFY_PAGE);
    if (!rows.length) break;
    const ids = rows.map((r) => r.id);
    const learners = await db('accessrecordlearners').whereIn('entryid', ids).select('entryid', 'studentid');
    const byEntry = new Map<number, string[]>();
    for (const l of learners) {
      const k = Number(l.entryid);
      const list = byEntry.get(k) ?? [];
      list.push(String(l.studentid));
      byEntry.set(k, list);
    }
    for (const r of rows) {
      const id = Number(r.id);
      if (firstid === null) firstid = id;
      if (prev !== null && r.prevhash !== prev) {
        const reason = 'its prevhash is not the hash of the entry before it';
        return { ok: false, checked, firstid, lastid, broken: { id, reason } };
      }
      const want = chainHash(r.prevhash, canonical(r, byEntry.get(id) ?? []));
      if (want !== r.hash) {
        const reason = 'its columns or learners do not match its hash';
        return { ok: false, checked, firstid, lastid, broken: { id, reason } };
      }
      prev = r.hash;
      checked += 1;
      lastid = id;
    }
    afterId = Number(rows[rows.length - 1].id);
  }
  return { ok: true, checked, firstid, lastid };
}

const YEAR_MS = 365.25 * 24 * 60 * 60 * 1000;
/** Entries one statement removes at most (their learner rows go with them). */
export const ACCESS_SWEEP_BATCH = 5000;

/**
 * Removes entries older than `years`, oldest first, `batch` a statement. Only a prefix of the chain goes, so
 * what remains still verifies (from the new oldest entry's prevhash). Returns the entries removed.
 */
export async function sweepAccessRecord(db: Knex, years: number, batch = ACCESS_SWEEP_BATCH): Promise<number> {
  if (years <= 0) return 0;
  const cutoff = new Date(Date.now() - years * YEAR_MS).toISOString();
  let removed = 0;
  for (;;) {
    const n = await db.transaction(async (trx): Promise<number> => {
      if (isPg(trx)) await trx.raw('SELECT pg_advisory_xact_lock(?)', [APPEND_LOCK]);
      const ids = (await trx('accessrecord').where('at', '<', cutoff).orderBy('id').limit(batch).select('id'))
        .map((r: { id: number }) => r.id);
      if (!ids.length) return 0;
      const upTo = ids[ids.length - 1];
      await trx('accessrecordlearners').where('entryid', '<=', upTo).delete();
      return Number(await trx('accessrecord').where('id', '<=', upTo).delete());
    });
    removed += n;
    if (n < batch) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
  return removed;
}

const IDENTITY = new Set<string>(LEARNER_IDENTITY_COLUMNS);
/**
 * A learner's sign-in name identifies the child as surely as a name does (it is often made of it): it counts
 * as identity where it stands for a learner, in an object of a `studentid` (or nested in one, as the reports'
 * `schooluser` is) and in a report CSV's `userid` column.
 */
const USERNAME = 'schoolusername';
const CSV_IDENTITY = new Set<string>([...LEARNER_IDENTITY_COLUMNS, USERNAME, 'userid']);
const MAX_DEPTH = 12;

const present = (v: unknown) => v !== null && v !== undefined && v !== '';

/**
 * The learners whose identity a JSON answer carries: every object (at any depth) holding a non-empty
 * identity field, or the sign-in name of a learner, counts once, by its `studentid` (or that of the object
 * it is nested in, as the reports' `student` is). Returns null when the answer carries no identity at all.
 */
export function identityIn(value: unknown): { count: number; studentids: string[] } | null {
  const ids = new Set<string>();
  let anonymous = 0;
  const walk = (v: unknown, depth: number, owner: string | undefined) => {
    if (depth > MAX_DEPTH || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1, owner);
      return;
    }
    const o = v as Record<string, unknown>;
    const own = typeof o.studentid === 'string' || typeof o.studentid === 'number' ? String(o.studentid) : owner;
    let identity = false;
    for (const k in o) {
      const x = o[k];
      if (IDENTITY.has(k) && present(x)) identity = true;
      else if (k === USERNAME && own !== undefined && present(x)) identity = true;
      else if (x && typeof x === 'object') walk(x, depth + 1, own);
    }
    if (identity) {
      if (own !== undefined) ids.add(own);
      else anonymous += 1;
    }
  };
  walk(value, 0, undefined);
  if (!ids.size && !anonymous) return null;
  return { count: ids.size + anonymous, studentids: [...ids] };
}

/** Whether CSV columns carry identity (the download is then recorded). */
export const identityColumns = (columns: readonly string[]): boolean => columns.some((c) => CSV_IDENTITY.has(c));

/**
 * Keys whose values a filter keeps: ids, dates, pages and flags. Anything else (a name searched for,
 * a free-text filter) is kept as its key with the value withheld: the record names no person by text.
 */
const KEPT_KEY =
  /(id|ids)$|^(schoolname|standard|teacher|unit|layout|type|status|dryrun|cloud)$|date|^(start|end|from|to)|^page/i;
/** Keys that look like ids but hold a name searched for (a learner's or a staff account's sign-in name). */
const NAME_KEYS = new Set(['userid', 'schoolusername', 'lmsusername', 'username', 'search', 'email']);
const WITHHELD = '[withheld]';
const MAX_FILTER_CHARS = 2000;

function keptValue(key: string, v: unknown): unknown {
  const withheld = IDENTITY.has(key) || NAME_KEYS.has(key.toLowerCase()) || !KEPT_KEY.test(key);
  if (withheld) return v === undefined ? undefined : WITHHELD;
  if (v === null || typeof v === 'number' || typeof v === 'boolean') return v;
  if (typeof v === 'string') return v.slice(0, 100);
  if (Array.isArray(v)) return v.slice(0, 50).map((x) => (typeof x === 'object' && x !== null ? WITHHELD : x));
  return WITHHELD;
}

/**
 * The filter of a bulk answer, as canonical JSON: the query's and (for a POST list) the body's top-level
 * scalar fields, and a report body's `filter` list of `{key, value}`, each value kept by KEPT_KEY. Null when
 * there is none.
 */
export function filterOf(query: unknown, body: unknown): string | null {
  const out: Record<string, unknown> = {};
  const take = (src: unknown, prefix: string) => {
    if (!src || typeof src !== 'object' || Array.isArray(src)) return;
    for (const [k, v] of Object.entries(src as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1))) {
      if (k === 'filter' && Array.isArray(v)) {
        out[`${prefix}filter`] = v.slice(0, 50).map((f) => {
          const key = f && typeof f === 'object' ? String((f as { key?: unknown }).key ?? '') : '';
          return { key, value: keptValue(key, (f as { value?: unknown }).value) };
        });
      } else if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        const kept = keptValue(k, v);
        if (kept !== undefined) out[`${prefix}${k}`] = kept;
      }
    }
  };
  take(query, '');
  take(body, 'body.');
  if (!Object.keys(out).length) return null;
  const s = JSON.stringify(out);
  return s.length > MAX_FILTER_CHARS ? JSON.stringify({ truncated: s.slice(0, MAX_FILTER_CHARS) }) : s;
}
