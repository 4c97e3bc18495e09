import type { Knex } from 'knex';

export interface GroupCommitOptions {
  /** The most units one transaction carries. */
  maxBatch?: number;
  /** How long the first unit of a batch may wait for others while `expectMore` says they are coming. */
  maxWaitMs?: number;
  /** Whether more units are on their way (a sign-in still checking its password, say). */
  expectMore?: () => boolean;
}

type Work<T> = (trx: Knex.Transaction) => Promise<T>;

interface Pending {
  work: Work<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/**
 * Runs small write transactions that arrive together as one: each unit in a savepoint of its own, one commit
 * for all. On a box's SQLite every commit is synced to the card, and a classroom signing in at the start of a
 * lesson then pays for one sync per batch instead of one per tablet. A unit is answered only after the commit
 * that holds it, so nothing acknowledged is lost; a unit that fails rolls back its own savepoint and the
 * others commit; a failed commit fails every unit of its batch. A batch is committed as soon as no more units
 * are expected, `maxBatch` are waiting, or its first unit has waited `maxWaitMs`.
 */
export function groupCommit(db: Knex, options: GroupCommitOptions = {}): <T>(work: Work<T>) => Promise<T> {
  const maxBatch = options.maxBatch ?? 32;
  const maxWaitMs = options.maxWaitMs ?? 0;
  const expectMore = options.expectMore ?? (() => false);
  const queue: Pending[] = [];
  let running = false;
  let timer: NodeJS.Timeout | undefined;
  let firstQueuedAt = 0;

  const runBatch = async (batch: Pending[]): Promise<void> => {
    if (batch.length === 1) {
      // No savepoint for a unit alone: its failure rolls back its transaction.
      const [unit] = batch;
      await db.transaction((trx) => unit.work(trx)).then(unit.resolve, unit.reject);
      return;
    }
    const outcomes: Outcome[] = [];
    try {
      await db.transaction(async (trx) => {
        for (const unit of batch) {
          try {
            outcomes.push({ ok: true, value: await trx.transaction((sp) => unit.work(sp)) });
          } catch (error) {
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      return;
    }
    batch.forEach((unit, i) => {
      const o = outcomes[i];
      if (o.ok) unit.resolve(o.value);
      else unit.reject(o.error);
    });
  };

  const drain = async (): Promise<void> => {
    timer = undefined;
    running = true;
    try {
      while (queue.length) await runBatch(queue.splice(0, maxBatch));
    } finally {
      running = false;
    }
  };

  // Called whenever a unit arrives, a batch ends or the wait is over.
  const schedule = (): void => {
    if (running || !queue.length) return;
    const waited = Date.now() - firstQueuedAt;
    if (queue.length >= maxBatch || !expectMore() || waited >= maxWaitMs) {
      if (timer) clearTimeout(timer);
      void drain().then(schedule);
    } else {
      timer ??= setTimeout(() => {
        timer = undefined;
        schedule();
      }, maxWaitMs - waited);
    }
  };

  return <T>(work: Work<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (!queue.length) firstQueuedAt = Date.now();
      queue.push({ work, resolve: resolve as (v: unknown) => void, reject });
      schedule();
    });
}

/** Counts units in an earlier stage, for a group commit's `expectMore`. */
export function inFlight(): { enter(): void; leave(): void; count(): number } {
  let n = 0;
  return {
    enter: () => void (n += 1),
    leave: () => void (n = Math.max(0, n - 1)),
    count: () => n,
  };
}
