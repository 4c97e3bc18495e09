import type { Knex } from '@lms/db';
import type { Logger } from '@lms/shared';
import type { ObjectStore } from '../../objects';
import { sweepSpool } from '../../http/spool';
import { startPeriodic, type Periodic } from '../../periodic';

/**
 * Log archive names, unique across every instance sharing the database (table `logarchives`, migration
 * 0010). The contract's shape `logupload-<epoch ms>.zip` is kept; a name another import holds moves the
 * claim to the next millisecond.
 */
const isPg = (db: Knex) => db.client.config.client === 'pg';

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | undefined;
  return (
    e?.code === '23505' || /^SQLITE_CONSTRAINT/.test(e?.code ?? '') || /UNIQUE constraint failed/.test(e?.message ?? '')
  );
}

let lastStamp = 0;

/** Claims a fresh archive name (committed at once, outside any import transaction). */
export async function claimArchiveName(db: Knex, now = Date.now()): Promise<string> {
  // Strictly increasing within the process, which spares the database a conflict it would refuse anyway.
  let stamp = now > lastStamp ? now : lastStamp + 1;
  for (let attempt = 0; attempt < 1000; attempt++, stamp++) {
    const archive = `logupload-${stamp}.zip`;
    try {
      await db('logarchives').insert({ archive, claimed_at: new Date() });
      lastStamp = Math.max(lastStamp, stamp);
      return archive;
    } catch (err) {
      if (!isUniqueViolation(err)) throw err;
    }
  }
  throw new Error('no free log archive name in 1000 milliseconds');
}

/**
 * Inside the import's transaction, before the archive is stored: takes the claim's row lock (PostgreSQL),
 * which the sweep skips, so an import in progress on any instance keeps its claim however long it runs.
 * Refuses when the claim is gone (swept while this import waited longer than the grace period).
 */
export async function holdArchiveClaim(trx: Knex.Transaction, archive: string): Promise<void> {
  let q = trx('logarchives').where({ archive }).whereNull('settled_at').select('archive');
  if (isPg(trx)) q = q.forUpdate();
  const rows = await q;
  if (rows.length !== 1) throw new Error(`the claim of log archive ${archive} has lapsed`);
}

/** In the import's transaction: the archive now has its rows, the claim is settled with them. */
export async function settleArchiveClaim(trx: Knex.Transaction, archive: string): Promise<void> {
  await trx('logarchives').where({ archive }).update({ settled_at: new Date() });
}

/** After a rollback whose archive is deleted (or was never stored): the name is released. */
export async function dropArchiveClaim(db: Knex, archive: string): Promise<void> {
  await db('logarchives').where({ archive }).whereNull('settled_at').delete();
}

/**
 * Removes the archives of imports that never committed: claims still unsettled after `graceMs`. On
 * PostgreSQL the claims of imports in progress are row-locked by their transaction and skipped (SKIP
 * LOCKED); a crashed instance's transaction is aborted by the server when its connection drops, which
 * releases the lock. On SQLite only one process writes, and the sweep queues behind an import's
 * transaction on the single connection. The grace period covers the moment between a claim and the
 * transaction that locks it. Returns the archives removed.
 */
export async function sweepArchives(
  deps: { db: Knex; objects: ObjectStore; logger: Logger },
  graceMs: number,
  batch = 100,
): Promise<string[]> {
  const { db, objects, logger } = deps;
  const cutoff = new Date(Date.now() - graceMs);
  const removed: string[] = [];
  await db.transaction(async (trx) => {
    let q = trx('logarchives')
      .whereNull('settled_at')
      .where('claimed_at', '<', cutoff)
      .orderBy('claimed_at')
      .limit(batch)
      .select('archive');
    if (isPg(trx)) q = q.forUpdate().skipLocked();
    const rows = (await q) as Array<{ archive: string }>;
    for (const { archive } of rows) {
      try {
        await objects.delete(archive);
      } catch (err) {
        logger.error({ err, archive }, 'orphan log archive could not be deleted; the next sweep tries again');
        continue;
      }
      await trx('logarchives').where({ archive }).whereNull('settled_at').delete();
      removed.push(archive);
    }
  });
  if (removed.length) logger.warn({ archives: removed }, 'removed log archives of imports that never committed');
  return removed;
}

/** The object a `logfiles` archive row names: the store's key as the import recorded it, else the file name. */
function archiveKeyOf(row: { logfilename: string; logfilemeta: unknown }): string {
  let meta = row.logfilemeta;
  if (typeof meta === 'string') {
    try {
      meta = JSON.parse(meta);
    } catch {
      meta = undefined;
    }
  }
  const key = (meta as { Key?: unknown } | null | undefined)?.Key;
  return typeof key === 'string' && key !== '' ? key : row.logfilename;
}

/**
 * Retention (LOG_ARCHIVE_RETENTION_DAYS): deletes the stored archives of log imports older than `maxAgeMs`,
 * with the rows that only describe them: the archive's `logfiles` row (type 2), the rows of the text logs it
 * held (type 1, `parentfileid`) and its name's claim in `logarchives`. The imported rows and the `syncs` row
 * (the sync-status report's) stay. An archive is known by its `logfiles` row, which imports of every release
 * and the taken-over system's wrote.
 *
 * Each batch is one transaction: its rows are locked (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so a sweep on
 * another instance takes other rows and never waits or fails), the objects deleted, then the rows. A crash
 * or a store that fails leaves the row, so the next sweep tries again (deleting a missing object succeeds);
 * no route serves a log archive, so a row whose object is already gone is never read. On SQLite one process
 * writes and the batches run one after the other on its connection. Returns the keys deleted.
 */
export async function sweepExpiredArchives(
  deps: { db: Knex; objects: ObjectStore; logger: Logger },
  maxAgeMs: number,
  batch = 100,
): Promise<string[]> {
  const { db, objects, logger } = deps;
  const cutoff = new Date(Date.now() - maxAgeMs);
  const removed: string[] = [];
  for (;;) {
    const { seen, failed } = await db.transaction(async (trx) => {
      let q = trx('logfiles').where({ type: 2 }).where('created_at', '<', cutoff).orderBy('created_at').limit(batch)
        .select('logfileid', 'logfilename', 'logfilemeta');
      if (isPg(trx)) q = q.forUpdate().skipLocked();
      const rows = (await q) as Array<{ logfileid: string; logfilename: string; logfilemeta: unknown }>;
      let failures = 0;
      for (const row of rows) {
        const key = archiveKeyOf(row);
        try {
          await objects.delete(key);
        } catch (err) {
          failures += 1;
          logger.error({ err, archive: key }, 'expired log archive could not be deleted; the next sweep tries again');
          continue;
        }
        await trx('logfiles').where({ parentfileid: row.logfileid }).delete();
        await trx('logfiles').where({ logfileid: row.logfileid }).delete();
        await trx('logarchives').where({ archive: row.logfilename }).whereNotNull('settled_at').delete();
        removed.push(key);
      }
      return { seen: rows.length, failed: failures };
    });
    // A short batch is the last; a batch of nothing but failures would only be read again.
    if (seen < batch || failed === seen) break;
  }
  if (removed.length) {
    logger.info({ count: removed.length, archives: removed.slice(0, 1000), before: cutoff.toISOString() },
      'retention: deleted stored log archives older than LOG_ARCHIVE_RETENTION_DAYS');
  }
  return removed;
}

/**
 * The orphan sweep: at start and then every `min(grace, 10 min)`, the temporary files of processes that
 * are gone (sweepSpool) and the archives of imports that never committed (sweepArchives). Returns the stop.
 */
export function startOrphanSweep(deps: { db: Knex; objects: ObjectStore; logger: Logger }, graceMs: number): Periodic {
  const sweep = async () => {
    const spool = await sweepSpool();
    const partial = (await deps.objects.sweepTemporary?.()) ?? [];
    if (spool.length || partial.length) {
      const removed = [...spool, ...partial];
      deps.logger.warn({ removed }, 'removed temporary upload files of processes that are gone');
    }
    await sweepArchives(deps, graceMs);
  };
  return startPeriodic('orphan sweep', sweep, Math.min(graceMs, 10 * 60_000), deps.logger);
}
