import type { Knex } from '@lms/db';
import type { Logger, ReplicaSnapshot } from '@lms/shared';

/** Why the routes that may read from the replica read from the primary now. */
export type FallbackReason = 'unchecked' | 'unreachable' | 'not_a_replica' | 'lagging';

/** A point of the primary's WAL and when it was read: whatever committed before `at` lies before `lsn`. */
export interface WalMark {
  at: number;
  lsn: bigint;
}

/** Marks kept: with a check every 5 s, the last 2 minutes (a bound larger than that reads the commit time). */
const MARKS_KEPT = 24;

/** `16/B374D848` as a number, to compare WAL positions. */
export function lsnOf(text: string): bigint {
  const [hi, lo] = text.split('/');
  return (BigInt(`0x${hi}`) << 32n) | BigInt(`0x${lo}`);
}

/**
 * Seconds by which a replica's data may be stale at most (see ReplicaReads), from the primary's marks (oldest
 * first), the replica's replayed WAL position and the seconds since the last commit it replayed (null: none
 * since it started); undefined when neither bounds it.
 */
export function stalenessOf(
  marks: readonly WalMark[], replayed: bigint, sinceCommit: number | null, now: number,
): number | undefined {
  const reached = marks.filter((m) => m.lsn <= replayed).pop();
  const byMark = reached ? Math.max(0, now - reached.at) / 1000 : Number.POSITIVE_INFINITY;
  const byCommit = sinceCommit === null ? Number.POSITIVE_INFINITY : Math.max(0, sinceCommit);
  const lag = Math.min(byMark, byCommit);
  return Number.isFinite(lag) ? lag : undefined;
}

export interface ReplicaOptions {
  /** The replica's pool and the primary's. */
  replica: Knex;
  primary: Knex;
  /** Above this lag (seconds), the routes read from the primary. */
  maxLagSeconds: number;
  /** How often the lag is measured. */
  checkEveryMs: number;
  /** Time limit of one measure: an unanswered replica counts as unreachable. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * Where the routes that may read from a streaming replica (`reads: 'replica'`) read: the replica while it
 * answers and lags the primary by at most the bound, else the primary. The lag is measured every few
 * seconds, never per request, as the smaller of two upper bounds of how stale the replica's data may be:
 *  - the age of the newest mark of the primary's WAL (`pg_current_wal_flush_lsn()`, read at each check) that the
 *    replica has replayed: everything committed before that mark was taken is on the replica. This one
 *    stays near zero on an idle primary, where the time since the last replayed commit keeps growing
 *    although nothing is missing;
 *  - the age of the last commit the replica replayed (`pg_last_xact_replay_timestamp()`): WAL is replayed
 *    in order, so everything committed before it is there. This one stays small on a busy primary, whose
 *    WAL position moves on between the two queries of a check.
 */
export class ReplicaReads {
  private reason: FallbackReason | undefined = 'unchecked';
  private lag: number | undefined;
  private marks: WalMark[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly o: ReplicaOptions) {}

  /** The replica's own pool. */
  get pool(): Knex {
    return this.o.replica;
  }

  /** The pool of a route that may read from the replica, or why it reads from the primary now. */
  current(): { db: Knex; reason?: undefined } | { db?: undefined; reason: FallbackReason } {
    return this.reason ? { reason: this.reason } : { db: this.o.replica };
  }

  /** What the last check found (for metrics and readiness). */
  snapshot(): ReplicaSnapshot & { reason: FallbackReason | undefined } {
    return { lagSeconds: this.lag, inUse: this.reason === undefined, reason: this.reason };
  }

  /** Measures now (one measure at a time: a call during one waits for it). */
  check(): Promise<void> {
    this.running ??= this.measure().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  /** Measures now and then every `checkEveryMs`; resolves once the first measure is done. */
  async start(): Promise<void> {
    await this.check();
    this.timer ??= setInterval(() => void this.check(), this.o.checkEveryMs);
    this.timer.unref();
  }

  /** Stops measuring and closes the replica's pool. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
    await this.o.replica.destroy();
  }

  private async measure(): Promise<void> {
    let reason: FallbackReason | undefined;
    let lag: number | undefined;
    let detail = '';
    try {
      ({ reason, lag } = await withTimeout(this.lagOfReplica(), this.o.timeoutMs));
      if (reason === undefined && lag !== undefined && lag > this.o.maxLagSeconds) reason = 'lagging';
    } catch (err) {
      reason = 'unreachable';
      lag = undefined;
      detail = (err as Error).message;
    }
    const was = this.reason;
    this.reason = reason;
    this.lag = lag;
    if (reason && reason !== was) {
      this.o.logger.warn(
        { replicaFallback: reason, lagSeconds: lag, maxLagSeconds: this.o.maxLagSeconds, err: detail || undefined },
        'The read replica is not used: reports read from the primary until it answers within the lag bound',
      );
    } else if (!reason && was && was !== 'unchecked') {
      this.o.logger.info({ lagSeconds: lag }, 'The read replica is used again for reports');
    }
  }

  private async lagOfReplica(): Promise<{ reason?: FallbackReason; lag?: number }> {
    const mark = await this.primaryMark();
    const rows = (await this.o.replica.raw(
      'select pg_is_in_recovery() as recovery, pg_last_wal_replay_lsn()::text as replayed, ' +
        'extract(epoch from (clock_timestamp() - pg_last_xact_replay_timestamp()))::float8 as since_commit',
    )) as { rows: Array<{ recovery: boolean; replayed: string | null; since_commit: number | null }> };
    const { recovery, replayed, since_commit: sinceCommit } = rows.rows[0];
    // A server out of recovery (a promoted replica, or a primary named by mistake) no longer follows DATABASE_URL.
    if (!recovery || !replayed) return { reason: 'not_a_replica' };
    if (mark) {
      this.marks.push(mark);
      if (this.marks.length > MARKS_KEPT) this.marks.shift();
    }
    const lag = stalenessOf(this.marks, lsnOf(replayed), sinceCommit, Date.now());
    return { lag, reason: lag === undefined ? 'lagging' : undefined };
  }

  /** The primary's WAL position now; none when the primary does not answer (the commit time alone counts then). */
  private async primaryMark(): Promise<WalMark | undefined> {
    const at = Date.now();
    try {
      const res = (await this.o.primary.raw('select pg_current_wal_flush_lsn()::text as lsn')) as
        { rows: Array<{ lsn: string }> };
      return { at, lsn: lsnOf(res.rows[0].lsn) };
    } catch {
      return undefined;
    }
  }
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
