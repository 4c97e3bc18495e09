import crypto from 'node:crypto';
import type { Knex } from 'knex';
import { pendingMigrations, type MigrationList } from '../migrator';
import { createTables, type TableSpec } from '../tables';
import { openSource, type Source, type SourceTable } from './source';
import { Refusal, convert, lowerCaseId, type Change, type TargetKind } from './transform';

/** Rows read from the source per query, and rows per recorded chunk of a table. */
export const CHUNK_ROWS = 5000;
/** Refused rows kept for the printed report; beyond this only their number is kept. */
const MAX_LISTED_REFUSALS = 10_000;

export interface DuplicateRule {
  /** Rows of `table` that share `columns` are one submission sent more than once; the lowest `id` stays. */
  table: string;
  columns: string[];
  id: string;
  /** Rows of other tables that belong to a removed duplicate and go with it. */
  children: Array<{ table: string; column: string }>;
  resolution: string;
}

export interface TakeoverContext {
  trx: Knex.Transaction;
  source: Source;
  again: boolean;
  notes: string[];
  /** Counts a row of `table` that `finish` took back out as refused, with the reason (set once the plans exist). */
  refuse?: (table: string, id: string, reason: string) => void;
}

export interface TakeoverProfile {
  service: 'central' | 'classroom';
  /** The service's migrations: the target must have them all (`npm run migrate`). */
  migrations: MigrationList;
  /** The target's tables in foreign-key order (parents first). */
  tables: TableSpec[];
  /** Target table → source table where the names differ. */
  sourceNames?: Record<string, string>;
  /**
   * Tables any database of this service of the existing system holds: a source without them is another
   * service's database (or none of the original's), and is refused before anything is read.
   */
  coreTables: string[];
  /** Tables this service has and the original has not: they start empty and are not copied. */
  ownTables: string[];
  /** Source tables that are not data (bookkeeping of the original's tools). */
  ignoredSourceTables: string[];
  /** Target tables that `npm run migrate` fills; checked by `migrateWroteOnly` instead of "empty". */
  seededTables?: string[];
  /** True when the seeded tables hold only what the migrations wrote. */
  migrateWroteOnly?: (trx: Knex.Transaction) => Promise<string | undefined>;
  /** Tables whose rows replace ours by key (upsert) even on the first run. */
  upsertTables?: string[];
  /** Before the first copy: make room for the source's own rows (roles, permissions, the superadmin). */
  prepare?: (ctx: TakeoverContext) => Promise<void>;
  /** After the tables: anything of ours the source lacked goes back. */
  finish?: (ctx: TakeoverContext) => Promise<void>;
  duplicates?: DuplicateRule[];
}

export interface TableReport {
  table: string;
  source: string | null;
  read: number;
  copied: number;
  unchanged: number;
  transformed: number;
  refused: number;
  resolved: number;
  deleted: number;
  changes: Partial<Record<Change, number>>;
  notes: string[];
}

export interface RefusedRow {
  table: string;
  id: string;
  reason: string;
  /** Set when the row was resolved the way the original's own later migrations resolve it. */
  resolved?: string;
}

export interface TakeoverReport {
  service: string;
  source: string;
  dryRun: boolean;
  again: boolean;
  tables: TableReport[];
  refusedRows: RefusedRow[];
  refusedNotListed: number;
  notes: string[];
  rows: number;
  bytes: number;
  seconds: number;
}

export interface TakeoverOptions {
  db: Knex;
  sourceUrl: string;
  profile: TakeoverProfile;
  dryRun?: boolean;
  again?: boolean;
  /** A progress line now and then (rows, MB, elapsed, estimate). */
  progress?: (line: string) => void;
  progressEveryMs?: number;
  /** Source rows per query and per recorded chunk (CHUNK_ROWS). */
  chunkRows?: number;
}

export const RUNS_TABLE = 'takeover_runs';
export const CHUNKS_TABLE = 'takeover_chunks';

/** What the copy records in the target so that `--again` can tell what changed in the source since. */
const bookkeeping: TableSpec[] = [
  {
    name: RUNS_TABLE,
    primary: ['runid'],
    columns: [
      { name: 'runid', type: 'string', length: 36 },
      { name: 'source', type: 'text' },
      { name: 'again', type: 'boolean' },
      { name: 'started_at', type: 'timestamp' },
      { name: 'finished_at', type: 'timestamp' },
      { name: 'rows', type: 'integer' },
      { name: 'summary', type: 'text' },
    ],
  },
  {
    name: CHUNKS_TABLE,
    primary: ['tablename', 'chunkno'],
    columns: [
      { name: 'tablename', type: 'string', length: 64 },
      { name: 'chunkno', type: 'integer' },
      // The chunk's last source key (its range is after the previous chunk's last key, up to this one); NULL
      // for a table read whole.
      { name: 'lastkey', type: 'text', nullable: true },
      // One line per source row taken: key, tab, a digest of the row as the source held it.
      { name: 'rowhashes', type: 'text' },
    ],
  },
];

async function ensureBookkeeping(trx: Knex.Transaction): Promise<void> {
  const missing = [];
  for (const t of bookkeeping) if (!(await trx.schema.hasTable(t.name))) missing.push(t);
  if (missing.length) await createTables(trx as unknown as Knex, missing);
}

class Progress {
  done = 0;
  bytes = 0;
  private last = 0;
  constructor(
    private readonly total: number,
    private readonly started: number,
    private readonly out?: (l: string) => void,
    private readonly every = 2000,
  ) {}
  tick(force = false): void {
    const now = Date.now();
    if (!this.out || (!force && now - this.last < this.every)) return;
    this.last = now;
    const elapsed = (now - this.started) / 1000;
    const pct = this.total ? Math.min(100, (this.done / this.total) * 100) : 100;
    const left = this.done > 0 && this.total > this.done ? ((this.total - this.done) * elapsed) / this.done : 0;
    this.out(
      `progress: ${this.done} of ${this.total} rows (${pct.toFixed(0)}%), ` +
        `${(this.bytes / 1048576).toFixed(1)} MB read, ` +
        `${clock(elapsed)} elapsed, about ${clock(left)} left`,
    );
  }
}

export function clock(seconds: number): string {
  const s = Math.round(seconds);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

function sizeOf(row: Record<string, unknown>): number {
  let n = 0;
  for (const k in row) {
    const v = row[k];
    n += typeof v === 'string' ? v.length : Buffer.isBuffer(v) ? v.length : 8;
  }
  return n;
}

function digest(values: unknown[]): string {
  const text = JSON.stringify(values, (_k, v) =>
    v && typeof v === 'object' && v.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v,
  );
  return crypto.createHash('md5').update(text).digest('base64').slice(0, 12);
}

const KEY_SEP = '\u001f';

function parseHashes(text: string): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (!line) continue;
    const tab = line.lastIndexOf('\t');
    m.set(line.slice(0, tab), line.slice(tab + 1));
  }
  return m;
}

function kindOf(spec: TableSpec | undefined, column: string, info: Knex.ColumnInfo): TargetKind {
  const type = spec?.columns.find((c) => c.name === column)?.type;
  if (type === 'boolean' || type === 'json' || type === 'timestamp') return type;
  if (type === 'integer') return 'integer';
  if (type === 'double' || type === 'increments') return 'number';
  if (type === 'string' || type === 'text') return 'text';
  const t = String(info.type).toLowerCase();
  if (t === 'boolean') return 'boolean';
  if (t === 'jsonb' || t === 'json') return 'json';
  if (/timestamp|datetime/.test(t)) return 'timestamp';
  if (/int|double|float|real|numeric|decimal/.test(t)) return 'number';
  return 'text';
}

/** A column holding uuid ids of this service's rows: 36 characters, named `…id`. */
function isIdColumn(spec: TableSpec, column: string): boolean {
  const c = spec.columns.find((x) => x.name === column);
  return c?.type === 'string' && c.length === 36 && column.endsWith('id');
}

/** The error's own message without the SQL text that Knex puts before it. */
function reasonOf(err: unknown): string {
  const msg = err instanceof Error ? err.message : String(err);
  const i = msg.lastIndexOf(' - ');
  const text = i >= 0 ? msg.slice(i + 3) : msg;
  if (/unique|duplicate key/i.test(text)) return `duplicate under a unique rule of this service (${text})`;
  if (/foreign key/i.test(text)) return `names a row that is not there (${text})`;
  return text;
}

interface Plan {
  spec: TableSpec;
  target: string;
  source: SourceTable;
  /** `id`: a 36-character id column, whose upper-case UUIDs the original's collation matched to lower-case ones. */
  columns: Array<{ name: string; sourceType: string; kind: TargetKind; nullable: boolean; id: boolean }>;
  keyCols: string[];
  /** The source key the copy pages by, when the table has a one-column key. */
  pageKey?: string;
  upsert: boolean;
  report: TableReport;
}

/**
 * Copies a database of the existing system into this service's database
 * (see docs/moving-from-the-existing-system.md).
 */
export async function runTakeover(o: TakeoverOptions): Promise<TakeoverReport> {
  const started = Date.now();
  const { db, profile } = o;
  const again = o.again === true;
  const chunkRows = o.chunkRows ?? CHUNK_ROWS;
  const dryRun = o.dryRun === true;
  const pending = await pendingMigrations(db, profile.migrations);
  if (pending.length)
    throw new Error(
      `the target database is not prepared: run \`npm run migrate -w ${profile.service}\` first ` +
        `(pending: ${pending.join(', ')})`,
    );
  const source = await openSource(o.sourceUrl);
  const lacking = profile.coreTables.filter((t) => !source.tables.has(t));
  if (lacking.length) {
    await source.close().catch(() => undefined);
    const other = profile.service === 'central' ? 'classroom' : 'central';
    throw new Error(
      `${source.label} is not a ${profile.service} database of the existing system: it lacks ${lacking.join(', ')}`
      + ` (a ${other} database, or the wrong database name?); nothing was copied`,
    );
  }
  const notes: string[] = [];
  const refusedRows: RefusedRow[] = [];
  let refusedNotListed = 0;
  const reports: TableReport[] = [];
  const trx = await db.transaction();
  let committed = false;
  try {
    await ensureBookkeeping(trx);
    const previous = await trx(RUNS_TABLE).whereNotNull('finished_at').orderBy('finished_at', 'desc').first();
    if (again && !previous)
      throw new Error('--again: this database records no previous copy; run without --again first');
    if (!again) {
      if (previous)
        throw new Error(
          `this database already holds a copy (made ${new Date(previous.finished_at).toISOString()}); ` +
            'use --again to copy what changed since',
        );
      for (const spec of profile.tables) {
        if (profile.seededTables?.includes(spec.name)) continue;
        const n = Number((await trx(spec.name).count({ n: '*' }).first())?.n ?? 0);
        if (n > 0)
          throw new Error(
            `this database already holds data (${spec.name}: ${n} rows); ` +
              'copy into a database prepared by `npm run migrate` alone, or use --again after a previous copy',
          );
      }
      const seeded = await profile.migrateWroteOnly?.(trx);
      if (seeded)
        throw new Error(
          `this database already holds data (${seeded}); copy into a database prepared by \`npm run migrate\` alone`,
        );
    }

    // The plan: which source table fills which of ours, with which columns.
    const ownTables = new Set(profile.ownTables);
    const plans: Plan[] = [];
    const used = new Set<string>();
    for (const spec of profile.tables) {
      if (ownTables.has(spec.name)) continue;
      const sourceName = profile.sourceNames?.[spec.name] ?? spec.name;
      const report: TableReport = {
        table: spec.name,
        source: sourceName,
        read: 0,
        copied: 0,
        unchanged: 0,
        transformed: 0,
        refused: 0,
        resolved: 0,
        deleted: 0,
        changes: {},
        notes: [],
      };
      reports.push(report);
      const st = source.tables.get(sourceName);
      used.add(sourceName);
      if (!st) {
        report.source = null;
        report.notes.push(`no table ${sourceName} in the source: taken as empty`);
        continue;
      }
      if (sourceName !== spec.name) report.notes.push(`read from ${sourceName}`);
      const info = await trx(spec.name).columnInfo();
      const columns = st.columns.filter((c) => c.name in info).map((c) => ({
        name: c.name,
        sourceType: c.dataType,
        kind: kindOf(spec, c.name, info[c.name]),
        nullable: info[c.name].nullable,
        id: isIdColumn(spec, c.name),
      }));
      const dropped = st.columns.filter((c) => !(c.name in info)).map((c) => c.name);
      if (dropped.length) report.notes.push(`source columns with no place here, not copied: ${dropped.join(', ')}`);
      const keyCols = spec.primary ?? spec.unique?.[0] ?? [];
      if (!keyCols.length || keyCols.some((k) => !columns.some((c) => c.name === k))) {
        report.notes.push(`the source lacks the key ${keyCols.join(', ')}: not copied`);
        continue;
      }
      const pageKey =
        keyCols.length === 1 && st.primary.length === 1 && st.primary[0] === keyCols[0] ? keyCols[0] : undefined;
      plans.push({
        spec,
        target: spec.name,
        source: st,
        columns,
        keyCols,
        pageKey,
        upsert: again || (profile.upsertTables?.includes(spec.name) ?? false),
        report,
      });
    }
    const ignored = new Set(profile.ignoredSourceTables);
    const extra = [...source.tables.keys()].filter((t) => !used.has(t) && !ignored.has(t));
    if (extra.length) notes.push(`source tables with no place here, not copied: ${extra.join(', ')}`);

    let total = 0;
    for (const p of plans) total += await source.count(p.source.name);
    const progress = new Progress(total, started, o.progress, o.progressEveryMs);
    progress.tick(true);

    const ctx: TakeoverContext = { trx, source, again, notes };
    if (!again) await profile.prepare?.(ctx);

    // Duplicate submissions: the losers (and their children) are known before their table is reached.
    const losers = new Map<string, { keep: string; rule: DuplicateRule }>();
    for (const rule of profile.duplicates ?? []) {
      const st = source.tables.get(rule.table);
      if (!st) continue;
      const cols = rule.columns.map((c) => `\`${c}\``).join(', ');
      const on = rule.columns.map((c) => `p.\`${c}\` <=> d.\`${c}\``).join(' AND ');
      const rows = await source.query(
        `SELECT p.\`${rule.id}\` AS id, d.keep FROM \`${rule.table}\` p ` +
          `JOIN (SELECT ${cols}, MIN(\`${rule.id}\`) AS keep FROM \`${rule.table}\` ` +
          `GROUP BY ${cols} HAVING COUNT(*) > 1) d ` +
          `ON ${on} WHERE p.\`${rule.id}\` <> d.keep`,
      );
      for (const r of rows) losers.set(`${rule.table}:${String(r.id)}`, { keep: String(r.keep), rule });
    }

    const refuse = (p: Plan, key: string, reason: string, resolved?: string) => {
      const id = key.replaceAll(KEY_SEP, ' ');
      p.report.refused += 1;
      if (resolved) p.report.resolved += 1;
      if (refusedRows.length < MAX_LISTED_REFUSALS)
        refusedRows.push({ table: p.target, id, reason, ...(resolved ? { resolved } : {}) });
      else refusedNotListed += 1;
    };
    ctx.refuse = (table, id, reason) => {
      const p = plans.find((x) => x.target === table);
      if (p) refuse(p, id, reason);
    };
    const deletions = new Map<string, string[]>();

    for (const p of plans) {
      const colNames = p.columns.map((c) => c.name);
      const keyOf = (row: Record<string, unknown>) => p.keyCols.map((k) => String(row[k] ?? '')).join(KEY_SEP);
      const childRules = (profile.duplicates ?? []).flatMap((rule) =>
        rule.children.filter((c) => c.table === p.target).map((c) => ({ rule, column: c.column })),
      );
      const refs = p.spec.columns.filter((c) => c.references && colNames.includes(c.name));

      const processChunk = async (
        chunkno: number,
        lastkey: string | null,
        rows: Record<string, unknown>[],
        prev: Map<string, string> | undefined,
      ) => {
        const hashes = new Map<string, string>();
        const seenKeys = new Set<string>();
        const pending: Array<{ key: string; hash: string; row: Record<string, unknown>; changed: boolean }> = [];
        for (const raw of rows) {
          p.report.read += 1;
          progress.done += 1;
          progress.bytes += sizeOf(raw);
          const key = keyOf(raw);
          const hash = digest(colNames.map((c) => raw[c]));
          if (prev?.get(key) === hash) {
            // A collapsed duplicate of a row already taken is unchanged too.
            p.report.unchanged += 1;
            hashes.set(key, hash);
            seenKeys.add(key);
            continue;
          }
          if (seenKeys.has(key)) {
            refuse(
              p,
              key,
              'the same row twice',
              'exact duplicate collapsed into one row (the original has no key on this table; ours does)',
            );
            continue;
          }
          seenKeys.add(key);
          const loser = losers.get(`${p.target}:${String(raw[p.keyCols[0]])}`);
          if (loser) {
            refuse(
              p,
              key,
              `duplicate submission of ${loser.keep} (same ${loser.rule.columns.join(', ')})`,
              loser.rule.resolution,
            );
            hashes.set(key, hash);
            continue;
          }
          const child = childRules.find((c) => losers.has(`${c.rule.table}:${String(raw[c.column])}`));
          if (child) {
            refuse(p, key, `belongs to duplicate submission ${String(raw[child.column])}`, child.rule.resolution);
            hashes.set(key, hash);
            continue;
          }
          const changes = new Set<Change>();
          const row: Record<string, unknown> = {};
          try {
            for (const c of p.columns) {
              const v = convert(raw[c.name], c.sourceType, c.kind, c.nullable, changes);
              row[c.name] = c.id ? lowerCaseId(v, changes) : v;
            }
          } catch (err) {
            if (!(err instanceof Refusal)) throw err;
            refuse(p, key, err.reason);
            continue;
          }
          for (const ch of changes) p.report.changes[ch] = (p.report.changes[ch] ?? 0) + 1;
          pending.push({ key, hash, row, changed: changes.size > 0 });
        }
        // A row whose parent is not in the target (an orphan, or a parent refused above) is refused by name.
        let ready = pending;
        for (const ref of refs) {
          const values = [
            ...new Set(ready.map((x) => x.row[ref.name]).filter((v) => v !== null && v !== undefined)),
          ] as string[];
          if (!values.length) continue;
          const found = new Set<string>();
          for (let i = 0; i < values.length; i += 500) {
            const part = values.slice(i, i + 500);
            for (const r of await trx(ref.references!.table)
              .whereIn(ref.references!.column, part)
              .select(ref.references!.column))
              found.add(String(r[ref.references!.column]));
          }
          ready = ready.filter((x) => {
            const v = x.row[ref.name];
            if (v === null || v === undefined || found.has(String(v))) return true;
            refuse(p, x.key, `orphan: ${ref.name} ${String(v)} names no ${ref.references!.table} row`);
            return false;
          });
        }
        const written = await writeRows(
          trx,
          p,
          ready.map((x) => x.row),
          (i, reason) => refuse(p, ready[i].key, reason),
        );
        for (const i of written) {
          const x = ready[i];
          hashes.set(x.key, x.hash);
          p.report.copied += 1;
          if (x.changed) p.report.transformed += 1;
        }
        if (prev) {
          const gone = [...prev.keys()].filter((k) => !seenKeys.has(k));
          if (gone.length) deletions.set(p.target, [...(deletions.get(p.target) ?? []), ...gone]);
        }
        let text = '';
        for (const [k, h] of hashes) text += `${k}\t${h}\n`;
        await trx(CHUNKS_TABLE)
          .insert({ tablename: p.target, chunkno, lastkey, rowhashes: text })
          .onConflict(['tablename', 'chunkno'])
          .merge();
        progress.tick();
      };

      const readAll = async (after?: string, upTo?: string) => {
        const all: Record<string, unknown>[] = [];
        let cursor = after;
        for (;;) {
          const batch = await source.rows(p.source.name, colNames, p.pageKey, {
            after: cursor,
            upTo,
            limit: chunkRows,
          });
          all.push(...batch);
          if (batch.length < chunkRows) return all;
          cursor = String(batch[batch.length - 1][p.pageKey!]);
        }
      };

      const previousChunks = again
        ? ((await trx(CHUNKS_TABLE)
            .where({ tablename: p.target })
            .orderBy('chunkno')
            .select('chunkno', 'lastkey')) as Array<{ chunkno: number; lastkey: string | null }>)
        : [];
      const prevHashes = async (chunkno: number) =>
        parseHashes(
          String((await trx(CHUNKS_TABLE).where({ tablename: p.target, chunkno }).first('rowhashes'))?.rowhashes ?? ''),
        );

      if (!p.pageKey) {
        const rows = await source.rows(p.source.name, colNames, undefined, {});
        await processChunk(
          0,
          null,
          rows,
          again && previousChunks.length ? await prevHashes(0) : again ? new Map() : undefined,
        );
        continue;
      }
      let after: string | undefined;
      let chunkno = 0;
      for (const c of previousChunks) {
        if (c.lastkey === null) continue;
        await processChunk(c.chunkno, c.lastkey, await readAll(after, c.lastkey), await prevHashes(c.chunkno));
        after = c.lastkey;
        chunkno = c.chunkno + 1;
      }
      // The next chunk is read from the source while this one is written: the two servers work at once.
      const read = (from: string | undefined) =>
        source.rows(p.source.name, colNames, p.pageKey, { after: from, limit: chunkRows });
      let next: Promise<Record<string, unknown>[]> | undefined = read(after);
      while (next) {
        const rows: Record<string, unknown>[] = await next;
        if (!rows.length) break;
        const last = String(rows[rows.length - 1][p.pageKey]);
        next = rows.length < chunkRows ? undefined : read(last);
        // A failed write must not leave the read ahead unobserved.
        next?.catch(() => undefined);
        await processChunk(chunkno, last, rows, again ? new Map() : undefined);
        chunkno += 1;
      }
    }

    // Rows the source no longer holds go, children before parents.
    for (const p of [...plans].reverse()) {
      const keys = deletions.get(p.target);
      if (!keys?.length) continue;
      for (const key of keys) {
        const parts = key.split(KEY_SEP);
        const where = Object.fromEntries(p.keyCols.map((k, i) => [k, parts[i]]));
        try {
          let n = 0;
          await trx.transaction(async (sp) => { n = await sp(p.target).where(where).del(); });
          p.report.deleted += n;
        } catch (err) {
          refuse(p, key, `gone from the source, but cannot be removed here: ${reasonOf(err)}`);
        }
      }
    }

    await profile.finish?.(ctx);
    await advanceSequences(trx, profile.tables);
    progress.tick(true);
    const rowsRead = reports.reduce((n, r) => n + r.read, 0);
    const report: TakeoverReport = {
      service: profile.service,
      source: source.label,
      dryRun,
      again,
      tables: reports,
      refusedRows,
      refusedNotListed,
      notes,
      rows: rowsRead,
      bytes: progress.bytes,
      seconds: (Date.now() - started) / 1000,
    };
    await trx(RUNS_TABLE).insert({
      runid: crypto.randomUUID(),
      source: source.label,
      again,
      started_at: new Date(started).toISOString(),
      finished_at: new Date().toISOString(),
      rows: rowsRead,
      summary: JSON.stringify(
        reports.map((r) => ({
          table: r.table,
          read: r.read,
          copied: r.copied,
          refused: r.refused,
          deleted: r.deleted,
        })),
      ),
    });
    if (dryRun) await trx.rollback();
    else await trx.commit();
    committed = true;
    return report;
  } finally {
    if (!committed) await trx.rollback().catch(() => undefined);
    await source.close().catch(() => undefined);
  }
}

/**
 * Writes rows in multi-row statements; a statement the database refuses is retried row by row, each in its
 * own savepoint, so that one bad row is refused with its reason and the others are written. Answers the
 * indexes of the rows written.
 */
async function writeRows(
  trx: Knex.Transaction,
  p: Plan,
  rows: Record<string, unknown>[],
  refused: (index: number, reason: string) => void,
): Promise<number[]> {
  if (!rows.length) return [];
  if (trx.client.config.client !== 'pg') return writeRowsSqlite(trx, p, rows, refused);
  // A first copy goes through COPY, PostgreSQL's bulk path; rows it cannot take make the whole COPY fail, and
  // then the rows are written one by one below to find them.
  if (!p.upsert && (await copyRowsPg(trx, p, rows))) return rows.map((_, i) => i);
  const perStatement = Math.max(1, Math.min(1000, Math.floor(30000 / Math.max(1, p.columns.length))));
  const written: number[] = [];
  const insert = (q: Knex.Transaction, part: Record<string, unknown>[]) => {
    const b = q(p.target).insert(part);
    return p.upsert ? b.onConflict(p.keyCols).merge() : b;
  };
  for (let i = 0; i < rows.length; i += perStatement) {
    const part = rows.slice(i, i + perStatement);
    try {
      await trx.transaction(async (sp) => { await insert(sp, part); });
      for (let j = 0; j < part.length; j++) written.push(i + j);
    } catch {
      for (let j = 0; j < part.length; j++) {
        try {
          await trx.transaction(async (sp) => { await insert(sp, [part[j]]); });
          written.push(i + j);
        } catch (err) {
          refused(i + j, reasonOf(err));
        }
      }
    }
  }
  return written;
}

interface PgConnection {
  query(stream: unknown): NodeJS.WritableStream & { on(event: string, cb: (err?: Error) => void): unknown };
}

function copyText(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  if (v === true) return 't';
  if (v === false) return 'f';
  return String(v).replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/\r/g, '\\r').replace(/\t/g, '\\t');
}

/** COPY of the rows inside a savepoint; false (and nothing written) when PostgreSQL refuses any of them. */
async function copyRowsPg(trx: Knex.Transaction, p: Plan, rows: Record<string, unknown>[]): Promise<boolean> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { from: copyFrom } = require('pg-copy-streams') as typeof import('pg-copy-streams');
  const client = trx.client as unknown as {
    acquireConnection(): Promise<PgConnection>;
    releaseConnection(c: unknown): Promise<unknown>;
  };
  const cols = p.columns.map((c) => c.name);
  const q = (n: string) => `"${n.replaceAll('"', '""')}"`;
  await trx.raw('SAVEPOINT takeover_copy');
  const conn = await client.acquireConnection();
  try {
    const stream = conn.query(copyFrom(`COPY ${q(p.target)} (${cols.map(q).join(', ')}) FROM STDIN`));
    await new Promise<void>((resolve, reject) => {
      stream.on('finish', () => resolve());
      stream.on('error', (err) => reject(err));
      let i = 0;
      const pump = () => {
        while (i < rows.length) {
          const row = rows[i++];
          let line = '';
          for (let j = 0; j < cols.length; j++) line += (j ? '\t' : '') + copyText(row[cols[j]]);
          if (!stream.write(`${line}\n`)) {
            stream.once('drain', pump);
            return;
          }
        }
        stream.end();
      };
      pump();
    });
    await trx.raw('RELEASE SAVEPOINT takeover_copy');
    return true;
  } catch {
    await trx.raw('ROLLBACK TO SAVEPOINT takeover_copy');
    return false;
  } finally {
    await client.releaseConnection(conn);
  }
}

interface SqliteStatement { run(values: unknown[]): unknown }

/**
 * SQLite: one prepared single-row statement run per row on the transaction's connection (SQLite runs a
 * prepared statement faster than it parses a long multi-row one, and a refused row is undone alone, the
 * transaction going on).
 */
async function writeRowsSqlite(
  trx: Knex.Transaction,
  p: Plan,
  rows: Record<string, unknown>[],
  refused: (index: number, reason: string) => void,
): Promise<number[]> {
  const client = trx.client as unknown as {
    acquireConnection(): Promise<{ prepare(sql: string): SqliteStatement }>;
    releaseConnection(c: unknown): Promise<unknown>;
  };
  const conn = await client.acquireConnection();
  try {
    const q = (n: string) => `"${n.replaceAll('"', '""')}"`;
    const cols = p.columns.map((c) => c.name);
    let sql = `INSERT INTO ${q(p.target)} (${cols.map(q).join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`;
    if (p.upsert) {
      const set = cols.filter((c) => !p.keyCols.includes(c)).map((c) => `${q(c)} = excluded.${q(c)}`);
      const action = set.length ? `UPDATE SET ${set.join(', ')}` : 'NOTHING';
      sql += ` ON CONFLICT (${p.keyCols.map(q).join(', ')}) DO ${action}`;
    }
    const stmt = conn.prepare(sql);
    const written: number[] = [];
    const values: unknown[] = new Array(cols.length);
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i];
      for (let j = 0; j < cols.length; j++) {
        const v = row[cols[j]];
        values[j] = v === true ? 1 : v === false ? 0 : v;
      }
      try {
        stmt.run(values);
        written.push(i);
      } catch (err) {
        refused(i, reasonOf(err));
      }
    }
    return written;
  } finally {
    await client.releaseConnection(conn);
  }
}

/** PostgreSQL serial columns continue after the largest copied id (SQLite's AUTOINCREMENT does so by itself). */
async function advanceSequences(trx: Knex.Transaction, tables: TableSpec[]): Promise<void> {
  if (trx.client.config.client !== 'pg') return;
  for (const t of tables) {
    for (const c of t.columns.filter((x) => x.type === 'increments')) {
      await trx.raw(
        'SELECT setval(pg_get_serial_sequence(?, ?), GREATEST((SELECT COALESCE(MAX(??), 0) FROM ??), 1), ' +
          '(SELECT COUNT(*) > 0 FROM ??))',
        [t.name, c.name, c.name, t.name, t.name],
      );
    }
  }
}

/** The report as operators read it. */
export function formatReport(r: TakeoverReport): string[] {
  const lines: string[] = [];
  lines.push(
    `${r.service}: ${r.dryRun ? 'dry run (nothing written)' : r.again ? 'changes copied' : 'copied'} ` +
      `from ${r.source} in ${clock(r.seconds)}: ${r.rows} rows read, ${(r.bytes / 1048576).toFixed(1)} MB`,
  );
  const head = ['table', 'read', 'copied', 'unchanged', 'transformed', 'refused', 'resolved', 'deleted'];
  const rows = r.tables.map((t) =>
    [t.table, t.read, t.copied, t.unchanged, t.transformed, t.refused, t.resolved, t.deleted].map(String),
  );
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const fmt = (x: string[]) => x.map((v, i) => (i === 0 ? v.padEnd(widths[i]) : v.padStart(widths[i]))).join('  ');
  lines.push(fmt(head));
  for (const x of rows) lines.push(fmt(x));
  for (const t of r.tables) {
    for (const [what, n] of Object.entries(t.changes)) lines.push(`  ${t.table}: ${what}: ${n} rows`);
    for (const n of t.notes) lines.push(`  ${t.table}: ${n}`);
  }
  for (const n of r.notes) lines.push(`  ${n}`);
  if (r.refusedRows.length) {
    lines.push('refused rows (table, id, reason):');
    for (const x of r.refusedRows)
      lines.push(`  ${x.table} ${x.id}: ${x.reason}${x.resolved ? ` -> resolved: ${x.resolved}` : ''}`);
    if (r.refusedNotListed) lines.push(`  … and ${r.refusedNotListed} more`);
  }
  return lines;
}
