import type { Knex } from '@lms/db';
import type { Logger } from '@lms/shared';
import type { ObjectStore } from './objects';
import { sweepExpiredArchives } from './areas/log/archives';
import { startPeriodic, type Periodic } from './periodic';
import { sweepAccessRecord } from './access/record';
import { anonymiseInactive } from './privacy/learner';
import { sweepDiagnostics } from './areas/fleet/diagnostics';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Rows one statement deletes at most: on PostgreSQL about a tenth of a second of row locks, on SQLite a
 * write lock short enough that requests waiting behind it do not notice, however many years of rows the
 * first sweep finds.
 */
export const SIGNIN_BATCH = 10_000;

/** The retention sweep runs at start and then hourly: what it deletes is days old, it need not be sooner. */
export const RETENTION_EVERY_MS = 60 * 60 * 1000;

export interface RetentionSettings {
  /** Days a stored log archive is kept (0: for ever). */
  logArchiveDays: number;
  /** Days a sign-in row is kept (0: for ever). */
  signInDays: number;
  /** Years an access record entry is kept (0: for ever; absent: 0). */
  accessRecordYears?: number;
  /** Years without activity after which a learner is anonymised (0: never; absent: 0). */
  learnerYears?: number;
  /** Days a box's diagnostics are kept (0 or absent: for ever). */
  fleetDiagnosticsDays?: number;
}

/** What was deleted, for the `lms_retention_deleted_total` counter. */
export type CountDeleted = (what: string, n: number) => void;

/** The sign-in rows: staff sign-ins at central, and the classroom sign-ins that arrive in its logs. */
export const SIGNIN_TABLES = [
  { table: 'lmsuseraccess', pk: 'useraccessid', at: 'logintime' },
  { table: 'rpiuseraccess', pk: 'rpiuseraccessid', at: 'logintime' },
] as const;

const isPg = (db: Knex) => db.client.config.client === 'pg';

/** The keys of at most `batch` sign-in rows of `table` from before `cutoff` (read through the time's index). */
export function expiredSignIns(
  db: Knex,
  table: (typeof SIGNIN_TABLES)[number]['table'],
  cutoff: Date,
  batch: number,
): Knex.QueryBuilder {
  const { pk, at } = SIGNIN_TABLES.find((t) => t.table === table)!;
  return db(table).where(at, '<', cutoff).limit(batch).select(pk);
}

/**
 * Deletes sign-in rows older than `days`, `batch` rows a statement, each statement its own transaction. On
 * PostgreSQL each statement locks the rows it deletes with `FOR UPDATE SKIP LOCKED`: sweeps on several
 * instances at once delete different rows, never wait on each other and cannot deadlock. Returns the rows
 * deleted per table.
 */
export async function sweepSignIns(db: Knex, days: number, batch = SIGNIN_BATCH): Promise<Record<string, number>> {
  const cutoff = new Date(Date.now() - days * DAY_MS);
  const deleted: Record<string, number> = {};
  for (const { table, pk } of SIGNIN_TABLES) {
    deleted[table] = 0;
    for (;;) {
      let oldest = expiredSignIns(db, table, cutoff, batch);
      if (isPg(db)) oldest = oldest.forUpdate().skipLocked();
      const n = await db(table).whereIn(pk, oldest).delete();
      deleted[table] += n;
      if (n < batch) break;
      // Requests waiting for the database (SQLite's one connection) go first between two batches.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return deleted;
}

/**
 * One retention pass: expired log archives, expired sign-in rows, then expired access record entries; a
 * setting of 0 skips its part.
 */
export async function sweepRetention(
  deps: { db: Knex; objects: ObjectStore; logger: Logger },
  settings: RetentionSettings,
  count: CountDeleted = () => undefined,
  anonymised: (n: number) => void = () => undefined,
): Promise<void> {
  if (settings.logArchiveDays > 0) {
    const archives = await sweepExpiredArchives(deps, settings.logArchiveDays * DAY_MS);
    if (archives.length) count('logarchive', archives.length);
  }
  if (settings.signInDays > 0) {
    const rows = await sweepSignIns(deps.db, settings.signInDays);
    for (const [table, n] of Object.entries(rows)) if (n) count(table, n);
    if (Object.values(rows).some((n) => n > 0)) {
      deps.logger.info({ deleted: rows, days: settings.signInDays },
        'retention: deleted sign-in rows older than SIGNIN_RETENTION_DAYS');
    }
  }
  const years = settings.accessRecordYears ?? 0;
  if (years > 0) {
    const n = await sweepAccessRecord(deps.db, years);
    if (n) {
      count('accessrecord', n);
      deps.logger.info({ deleted: n, years },
        'retention: deleted access record entries older than ACCESS_RECORD_RETENTION_YEARS');
    }
  }
  if ((settings.learnerYears ?? 0) > 0) await anonymiseInactive(deps, settings.learnerYears!, anonymised);
  if ((settings.fleetDiagnosticsDays ?? 0) > 0) {
    const n = await sweepDiagnostics(deps.db, settings.fleetDiagnosticsDays!);
    if (n) count('boxdiagnostics', n);
  }
}

/** The retention sweep, when a setting asks for one: at start and then hourly. Undefined when all are 0. */
export function startRetentionSweep(
  deps: { db: Knex; objects: ObjectStore; logger: Logger },
  settings: RetentionSettings,
  count?: CountDeleted,
  anonymised?: (n: number) => void,
): Periodic | undefined {
  if (settings.logArchiveDays <= 0 && settings.signInDays <= 0 && !(settings.accessRecordYears! > 0)
    && !(settings.learnerYears! > 0) && !(settings.fleetDiagnosticsDays! > 0)) return undefined;
  return startPeriodic('retention sweep', () => sweepRetention(deps, settings, count, anonymised), RETENTION_EVERY_MS,
    deps.logger);
}
