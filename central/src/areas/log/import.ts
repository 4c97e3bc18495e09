import crypto from 'node:crypto';
import fs from 'node:fs';
import type { Knex } from '@lms/db';
import {
  LOG_PRIMARY_KEYS,
  ZipError,
  logIniComplete,
  startLogReader,
  type LogBatch,
  type LogReader,
  type LogTable,
  type Logger,
  type ZipLimits,
} from '@lms/shared';
import { ObjectStoreError, type ObjectStore, type StoredObject } from '../../objects';
import {
  clearPending,
  deferCheckpoint,
  hasPending,
  insertArchiveLogFile,
  insertSync,
  insertTextLogFiles,
  schoolsOf,
  settleUpserts,
  upsertPending,
  upsertRows,
  upsertedChanges,
  type PendingRow,
} from './store';
import { NETWORK_ERROR_CODES } from '../../http/outage';
import { claimArchiveName, dropArchiveClaim, holdArchiveClaim, settleArchiveClaim } from './archives';

/** Which column of each table names the learner (students.studentid) or school user (schoolusers.schooluserid). */
const LEARNER_COLUMN: Partial<Record<LogTable, { column: string; of: 'students' | 'schoolusers' }>> = {
  studentprogress: { column: 'studentid', of: 'students' },
  rpiuseraccess: { column: 'userid', of: 'schoolusers' },
  studentactives: { column: 'studentid', of: 'students' },
  studentlearningsprogress: { column: 'studentid', of: 'students' },
  studentgradesprogress: { column: 'studentid', of: 'students' },
  studentlevelsprogress: { column: 'studentid', of: 'students' },
  studentlessonsprogress: { column: 'studentid', of: 'students' },
  studentpoints: { column: 'studentid', of: 'students' },
  studentappusages: { column: 'schooluserid', of: 'schoolusers' },
};

const REASON = { students: 'unknown student', schoolusers: 'unknown school user' } as const;

export const ARCHIVE_CONTENT_TYPE = 'application/zip';

// Rows parsed per batch; each batch is written before the next is parsed, so memory stays bounded.
const BATCH_SIZE = 500;

export interface ImportInput {
  filePath: string;
  schooluserid: string;
  /**
   * A fleet box's import: its school (central's record of the box) instead of the uploading teacher's, and
   * no school user recorded as the author. `within` runs in the import's transaction before it commits
   * (the box's acknowledgement is recorded with the rows it acknowledges).
   */
  box?: { schoolname: string | null; within: (trx: Knex.Transaction) => Promise<void> };
  offline: boolean;
  limits?: Partial<ZipLimits>;
  /** A reader started while the upload was received (startLogReader); one is started here otherwise. */
  reader?: LogReader;
}

export interface ImportSummary {
  syncid: string;
  archive: string;
  /** Rows written (inserted or merged) per table. */
  imported: Partial<Record<LogTable, number>>;
  /** Rows parked in `logimportpending` because central does not know their learner. */
  pending: number;
  /** Rows refused because their learner belongs to another school than the uploading teacher's. */
  refused: number;
  /** Of the rows written, how many were new or differed from central's: 0 when the log was already imported. */
  changed: number;
  /** Learners (students) the log names, by what became of their rows. */
  learners: { written: number; unknown: number; otherSchool: number };
  logfiles: number;
  /** False when log.ini was absent or lacked one of log.result, log.progress, log.access (nothing imported). */
  logIniImported: boolean;
}

/** Thrown inside the log.ini savepoint to undo its writes when the document turns out incomplete. */
class Incomplete extends Error {}

/**
 * Writes the batches of one log.ini. Rows whose learner central does not know are parked rather than
 * dropped or allowed to fail the import (see migration 0003); the ids seen are cached for the import,
 * since a school's log names a few dozen learners across a hundred thousand rows.
 */
type Standing = 'ours' | 'unknown' | 'other';

class BatchWriter {
  private readonly known = { students: new Map<string, Standing>(), schoolusers: new Map<string, Standing>() };
  private readonly parkedResults = new Set<string>();
  private readonly refusedResults = new Set<string>();
  readonly imported: Partial<Record<LogTable, number>> = {};
  pending = 0;
  refused = 0;

  /** The log's learners by standing: written (this school's), unknown to central, of another school. */
  learners(): { written: number; unknown: number; otherSchool: number } {
    const n = { written: 0, unknown: 0, otherSchool: 0 };
    for (const s of this.known.students.values()) {
      if (s === 'ours') n.written += 1;
      else if (s === 'unknown') n.unknown += 1;
      else n.otherSchool += 1;
    }
    return n;
  }

  constructor(
    private readonly syncid: string,
    private readonly clearsPending: boolean,
    /** The uploading teacher's school: a teacher writes progress for its own school's learners only. */
    private readonly school: string | null,
  ) {}

  private async resolve(trx: Knex.Transaction, of: 'students' | 'schoolusers', ids: Iterable<string>): Promise<void> {
    const cache = this.known[of];
    const unseen = [...new Set(ids)].filter((id) => !cache.has(id));
    if (!unseen.length) return;
    const found = await schoolsOf(trx, of, of === 'students' ? 'studentid' : 'schooluserid', unseen);
    for (const id of unseen) {
      const school = found.get(id);
      cache.set(
        id,
        school === undefined ? 'unknown' : this.school !== null && school === this.school ? 'ours' : 'other',
      );
    }
  }

  async write(trx: Knex.Transaction, batch: LogBatch): Promise<void> {
    const table = batch.table as LogTable;
    const rows = batch.rows as Array<Record<string, unknown>>;
    const keep: Array<Record<string, unknown>> = [];
    const park: PendingRow[] = [];
    const pk = LOG_PRIMARY_KEYS[table];
    if (table === 'studentprogressquestions') {
      for (const r of rows) {
        const parent = String(r.studentprogressid);
        if (this.refusedResults.has(parent)) this.refused += 1;
        else if (this.parkedResults.has(parent))
          park.push({
            tablename: table,
            rowid: String(r.studentprogressquestionid),
            learnerid: null,
            reason: 'result parked',
            row: r,
          });
        else keep.push(r);
      }
    } else {
      const ref = LEARNER_COLUMN[table]!;
      const ids = rows.map((r) => r[ref.column]).filter((v): v is string => typeof v === 'string' && v !== '');
      await this.resolve(trx, ref.of, ids);
      const cache = this.known[ref.of];
      for (const r of rows) {
        const id = r[ref.column];
        const standing = typeof id === 'string' ? cache.get(id) : undefined;
        if (standing === 'ours') {
          keep.push(r);
          continue;
        }
        const rowid = String(r[pk]);
        if (standing === 'other') {
          // Another school's learner: neither written nor parked (parked rows are written once their
          // learner exists, and this one already does).
          this.refused += 1;
          if (table === 'studentprogress') this.refusedResults.add(rowid);
          continue;
        }
        park.push({
          tablename: table,
          rowid,
          learnerid: typeof id === 'string' ? id : null,
          reason: REASON[ref.of],
          row: r,
        });
        if (table === 'studentprogress') this.parkedResults.add(rowid);
      }
    }
    await upsertRows(trx, table, keep);
    if (this.clearsPending && keep.length) await clearPending(trx, table, keep.map((r) => String(r[pk])));
    if (park.length) await upsertPending(trx, this.syncid, park);
    this.imported[table] = (this.imported[table] ?? 0) + keep.length;
    this.pending += park.length;
  }
}

/**
 * A failure of the archive's store write says so, whatever the driver threw (an outage is told apart from
 * the file's fault).
 */
function storeFailure(err: unknown): ObjectStoreError {
  if (err instanceof ObjectStoreError) return err;
  const code = (err as { code?: unknown } | undefined)?.code;
  const unreachable = typeof code === 'string' && NETWORK_ERROR_CODES.has(code);
  return new ObjectStoreError(
    unreachable ? 'Unavailable' : 'Failed',
    `Cannot store the log archive: ${(err as Error)?.message ?? String(err)}`,
    { cause: err },
  );
}

/** The upload's text log names go to `logfiles`; a name longer than the column holds would fail the insert. */
function checkLogFileName(name: string): void {
  if (name.length > 255 || name.endsWith('/'))
    throw new ZipError('bad_document', 'There is invalid file inside zip-file');
}

// The first key of the advisory locks that serialise one school's imports (any constant no other lock uses).
const SCHOOL_IMPORT_LOCK = 0x4c4f4731;

/**
 * PostgreSQL: waits until no other import of the same school is in progress, on any instance, and holds
 * that until this transaction ends. An import locks each row (and each summary row its triggers update)
 * as it writes it, batch by batch, and keeps the locks to its commit: two imports of one school whose logs
 * hold the same learners' rows in different orders would otherwise each wait for the other, and the server
 * would abort one of them as a deadlock. Imports only write their own school's learners' rows, so imports
 * of different schools still run side by side. SQLite has one writer at a time already.
 */
async function serialiseSchoolImports(trx: Knex.Transaction, schoolname: string | null): Promise<void> {
  if (trx.client.config.client !== 'pg') return;
  await trx.raw('select pg_advisory_xact_lock(?, hashtext(?))', [SCHOOL_IMPORT_LOCK, schoolname ?? '']);
}

/**
 * PUT /log/import processing rules 2-5 inside one transaction: the sync row first, log.ini streamed in
 * batches, the RPI-API entries recorded, the archive stored and recorded. When anything fails, the
 * transaction is rolled back and an archive already stored is deleted again (after its upload has
 * settled), so that the database and the object store never disagree. A crash before the commit leaves
 * an unsettled claim, which sweepArchives turns into a deleted archive.
 */
export async function importLogZip(
  deps: { db: Knex; objects: ObjectStore; logger: Logger },
  input: ImportInput,
): Promise<ImportSummary> {
  // Claimed (and committed) before anything is stored: a name no other import on any instance can take,
  // and a record that names the archive should this process die before its transaction commits.
  const archive = await claimArchiveName(deps.db);
  let stored = false;
  let putting: Promise<StoredObject> | null = null;
  let checkpoint: (() => void) | null = null;
  try {
    return await deps.db.transaction(async (trx) => {
      checkpoint = await deferCheckpoint(trx);
      await holdArchiveClaim(trx, archive);
      const teacher = input.box
        ? { schoolname: input.box.schoolname }
        : await trx('schoolusers').where({ schooluserid: input.schooluserid }).first('schoolname');
      const schoolname = (teacher?.schoolname as string | null | undefined) ?? null;
      await serialiseSchoolImports(trx, schoolname);
      // The archive is stored while the rows are imported (a network store would otherwise add its whole
      // transfer time to the transaction); the commit waits for it, and a failure of either undoes both.
      putting = deps.objects
        .put(archive, fs.createReadStream(input.filePath), { contentType: ARCHIVE_CONTENT_TYPE })
        .then(
          (meta) => {
            stored = true;
            return meta;
          },
          (err: unknown) => {
            throw storeFailure(err);
          },
        );
      // awaited below on every path; this only keeps an early failure from going unhandled
      putting.catch(() => undefined);
      const syncid = await insertSync(trx, {
        filename: archive,
        offlineonline: input.offline,
        createdBy: input.schooluserid,
      });
      const parentfileid = crypto.randomUUID();
      const writer = new BatchWriter(syncid, await hasPending(trx), schoolname);
      const logFiles: string[] = [];
      let logIniImported = false;
      let imported: ImportSummary['imported'] = {};
      let pending = 0;
      let refused = 0;
      let changed = 0;
      let learners: ImportSummary['learners'] = { written: 0, unknown: 0, otherSchool: 0 };
      try {
        // log.ini is imported only when log.result, log.progress and log.access are all present, which the
        // streaming reader knows only at the end: its writes go to a savepoint that is undone otherwise.
        await trx.transaction(async (sp) => {
          const summary = await (input.reader ?? startLogReader()).read(
            input.filePath,
            {
              batchSize: BATCH_SIZE,
              limits: input.limits,
              onBatch: (batch) => writer.write(sp, batch),
              onLogFile: (f) => {
                checkLogFileName(f.name);
                logFiles.push(f.name);
              },
            },
          );
          await settleUpserts(sp);
          if (!summary.logIni || !logIniComplete(summary.logIni)) throw new Incomplete();
          logIniImported = true;
          imported = writer.imported;
          pending = writer.pending;
          refused = writer.refused;
          changed = upsertedChanges(sp);
          learners = writer.learners();
        });
      } catch (err) {
        if (!(err instanceof Incomplete)) throw err;
      }
      // How many rows the upload wrote, for the sync-status report.
      const rowcount = Object.values(imported).reduce((n, k) => n + (k ?? 0), 0);
      await trx('syncs').where({ syncid }).update({ rowcount });
      await insertTextLogFiles(trx, parentfileid, logFiles, input.schooluserid);
      const meta = await putting;
      await insertArchiveLogFile(trx, {
        logfileid: parentfileid,
        filename: archive,
        meta,
        createdBy: input.schooluserid,
      });
      await settleArchiveClaim(trx, archive);
      await input.box?.within(trx);
      return {
        syncid,
        archive,
        imported,
        pending,
        refused,
        changed,
        learners,
        logfiles: logFiles.length,
        logIniImported,
      };
    });
  } catch (err) {
    await (putting as Promise<StoredObject> | null)?.catch(() => undefined);
    let released = true;
    if (stored) {
      // Only this import's own claimed name: a rollback never touches another import's archive.
      await deps.objects.delete(archive).catch((e: unknown) => {
        released = false;
        deps.logger.error(
          { err: e, archive },
          'log import rolled back but its archive could not be deleted; the orphan sweep will remove it',
        );
      });
    }
    if (released) {
      await dropArchiveClaim(deps.db, archive).catch((e: unknown) =>
        deps.logger.warn({ err: e, archive }, 'log archive claim not released; the orphan sweep will release it'),
      );
    }
    throw err;
  } finally {
    (checkpoint as (() => void) | null)?.();
  }
}
