import fs from 'node:fs';
import path from 'node:path';
import { appliedMigrations, classroom, pendingMigrations, type Knex } from '@lms/db';
import {
  DIAGNOSTICS_BODY_BYTES,
  DIAGNOSTICS_LOG_BYTES,
  FLEET_PROTOCOL,
  boxAuthorization,
  type DiagnosticsBody,
} from '@lms/shared';
import { VERSION } from '../areas/app/routes';
import { DAILY_NAME } from '../logging';
import { FleetError, type ClientOptions } from './client';
import type { FleetIdentity } from './identity';
import type { AppliedSettings } from './settings';

/**
 * What the box sends when central asks for diagnostics (docs/fleet-protocol.md, "Diagnostics"): a fixed
 * report, never the output of anything central names. Its log part is the tail of the box's own daily log
 * files, at most DIAGNOSTICS_LOG_BYTES, and carries no learner's name: each line keeps only the fields a
 * line of this server's own making has (level, message, time, request id, method, path, status, duration,
 * error type and message, numbers), query strings and ids are cut from paths, and every sign-in name, first,
 * last and family name of the box's own roster is replaced by `[name]` wherever it still appears.
 */
const MAIN_TABLES = [
  'schoolusers', 'students', 'curriculums', 'lessons', 'studentprogress', 'studentprogressquestions',
  'studentlearningsprogress', 'studentgradesprogress', 'studentlevelsprogress', 'studentlessonsprogress',
  'studentpoints', 'studentactives', 'rpiuseraccess', 'fleetchanges',
];
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const STRING_FIELDS = ['timestamp', 'reqId', 'application'];
/** As the diagnostics body's schema bounds them. */
const LOG_LINES_MAX = 20_000;
const LOG_LINE_MAX = 16 * 1024;

type Obj = Record<string, unknown>;

/** The names a log line must not carry: the box's own learners' and teachers' (two letters or more). */
export async function namesOnBox(db: Knex): Promise<RegExp | undefined> {
  const names = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v !== 'string') return;
    for (const part of [v, ...v.split(/\s+/)]) if (part.trim().length >= 2) names.add(part.trim());
  };
  for (const r of (await db('schoolusers').select('schoolusername')) as Obj[]) add(r.schoolusername);
  for (const r of (await db('students').select('studentfirstname', 'studentlastname', 'familyname')) as Obj[]) {
    add(r.studentfirstname);
    add(r.studentlastname);
    add(r.familyname);
  }
  if (!names.size) return undefined;
  const escaped = [...names].sort((a, b) => b.length - a.length).map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join('|')})(?![\\p{L}\\p{N}])`, 'giu');
}

const scrubText = (text: string, names: RegExp | undefined) => (names ? text.replace(names, '[name]') : text);

/** One line of the daily files as diagnostics carry it, or undefined when it is not a line of this server's. */
export function scrubLine(line: string, names: RegExp | undefined): string | undefined {
  let doc: Obj;
  try {
    doc = JSON.parse(line) as Obj;
  } catch {
    return undefined;
  }
  if (!doc || typeof doc !== 'object') return undefined;
  const meta = (doc.metadata ?? {}) as Obj;
  const out: Obj = {};
  for (const [k, v] of Object.entries(meta)) {
    if (typeof v === 'number' || typeof v === 'boolean') out[k] = v;
    else if (typeof v === 'string' && STRING_FIELDS.includes(k)) out[k] = v;
  }
  const req = meta.req as Obj | undefined;
  if (req && typeof req === 'object') {
    const url = typeof req.url === 'string' ? req.url.split('?')[0].replace(UUID, ':id') : undefined;
    out.req = { method: typeof req.method === 'string' ? req.method : undefined, url };
  }
  const res = meta.res as Obj | undefined;
  if (res && typeof res === 'object' && typeof res.statusCode === 'number') out.res = { statusCode: res.statusCode };
  const err = meta.err as Obj | undefined;
  if (err && typeof err === 'object') {
    out.err = { type: typeof err.type === 'string' ? err.type : undefined,
      message: typeof err.message === 'string' ? scrubText(err.message, names).replace(UUID, ':id') : undefined };
  }
  const message = typeof doc.message === 'string' ? scrubText(doc.message, names).replace(UUID, ':id') : '';
  return JSON.stringify({ level: typeof doc.level === 'string' ? doc.level : undefined, message, metadata: out });
}

/** The last `max` bytes of the newest daily files, whole lines, oldest first. */
export function tailOfLogs(logDir: string, max = DIAGNOSTICS_LOG_BYTES): string[] {
  let files: string[];
  try {
    files = fs.readdirSync(logDir).filter((f) => DAILY_NAME.test(f));
  } catch {
    return [];
  }
  // Newest day first; a day's error file before its info file, so that errors are kept when space runs out.
  files.sort((a, b) => {
    const [, ka, da] = DAILY_NAME.exec(a)!;
    const [, kb, db] = DAILY_NAME.exec(b)!;
    return da === db ? (ka === 'error' ? -1 : kb === 'error' ? 1 : 0) : da < db ? 1 : -1;
  });
  const lines: string[] = [];
  let left = max;
  for (const f of files) {
    if (left <= 0) break;
    const file = path.join(logDir, f);
    const size = fs.statSync(file).size;
    const take = Math.min(size, left);
    const buf = Buffer.alloc(take);
    const fd = fs.openSync(file, 'r');
    try {
      fs.readSync(fd, buf, 0, take, size - take);
    } finally {
      fs.closeSync(fd);
    }
    let text = buf.toString('utf8');
    // A tail that starts mid-line drops that partial line.
    if (take < size) text = text.slice(text.indexOf('\n') + 1);
    lines.push(...text.split('\n').filter(Boolean));
    left -= take;
  }
  const at = (l: string) => /"timestamp":"([^"]+)"/.exec(l)?.[1] ?? '';
  return lines.sort((a, b) => (at(a) < at(b) ? -1 : at(a) > at(b) ? 1 : 0));
}

async function integrity(db: Knex): Promise<string> {
  if (db.client.config.client === 'pg') return 'not checked: PostgreSQL (the server checks its own pages)';
  const rows = (await db.raw('PRAGMA integrity_check')) as Array<Record<string, unknown>>;
  return rows.map((r) => String(Object.values(r)[0])).join('; ').slice(0, 4000);
}

async function rowCounts(db: Knex): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of MAIN_TABLES) {
    if (!(await db.schema.hasTable(table))) continue;
    const row = (await db(table).count({ n: '*' }).first()) as { n: number | string } | undefined;
    out[table] = Number(row?.n ?? 0);
  }
  return out;
}

export async function collectDiagnostics(db: Knex, o: { logDir?: string; freediskbytes?: number;
  settings: AppliedSettings }): Promise<DiagnosticsBody> {
  const names = await namesOnBox(db);
  const cleaned: string[] = [];
  for (const line of (o.logDir ? tailOfLogs(o.logDir) : []).slice(-LOG_LINES_MAX)) {
    const clean = scrubLine(line, names)?.slice(0, LOG_LINE_MAX);
    if (clean) cleaned.push(clean);
  }
  // The newest lines that fit the report once written as JSON strings (quotes escaped), the rest left out.
  const logs: string[] = [];
  let logbytes = 0;
  let room = DIAGNOSTICS_BODY_BYTES - 64 * 1024;
  for (let i = cleaned.length - 1; i >= 0; i--) {
    room -= Buffer.byteLength(JSON.stringify(cleaned[i])) + 1;
    if (room < 0) break;
    logs.unshift(cleaned[i]);
    logbytes += Buffer.byteLength(cleaned[i]) + 1;
  }
  return {
    protocol: FLEET_PROTOCOL,
    version: VERSION,
    freediskbytes: o.freediskbytes ?? null,
    integrity: await integrity(db),
    migrations: { applied: await appliedMigrations(db), pending: await pendingMigrations(db, classroom.migrations) },
    rowcounts: await rowCounts(db),
    settings: o.settings,
    logs,
    logbytes,
    collectedat: new Date().toISOString(),
  };
}

export async function sendDiagnostics(box: FleetIdentity, diagnosticid: string, body: DiagnosticsBody,
  o: ClientOptions): Promise<void> {
  const f = o.fetch ?? fetch;
  let res: Response;
  try {
    res = await f(`${box.centralurl}/fleet/box/diagnostics/${diagnosticid}`, {
      method: 'POST',
      headers: { Authorization: boxAuthorization(box.boxid, box.secret), 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    throw new FleetError(0, `Central at ${box.centralurl} could not be reached (${(err as Error).message})`);
  }
  if (!res.ok) {
    let words = `central answered ${res.status}`;
    try {
      words = ((await res.json()) as { errormessage?: string }).errormessage ?? words;
    } catch {
      // not an envelope
    }
    throw new FleetError(res.status, words);
  }
  await res.body?.cancel();
}
