import { analyzeSmallTables, type Knex } from '@lms/db';
import type { Logger } from '@lms/shared';

export interface Periodic {
  /** The first run, started at once (resolved at once when the first run waits one period). */
  first: Promise<void>;
  /** Stops the timer; resolves when a run in progress has ended (for a clean shutdown). */
  stop: () => Promise<void>;
}

/**
 * Runs `task` at once (or, with `atStart: false`, first after one period) and then every `everyMs`, never two
 * runs at the same time in this process. A failure is logged and the task runs again at its next turn; the
 * timer does not keep the process alive.
 */
export function startPeriodic(
  name: string,
  task: () => Promise<void>,
  everyMs: number,
  logger: Logger,
  o: { atStart?: boolean } = {},
): Periodic {
  let running: Promise<void> | null = null;
  let last: Promise<void> = Promise.resolve();
  const run = () => {
    // A run that takes longer than the period (a first retention sweep over years of rows) is not doubled.
    if (running) return running;
    running = task()
      .catch((err: unknown) => logger.error({ err }, `${name} failed; it runs again later`))
      .finally(() => {
        running = null;
      });
    last = running;
    return running;
  };
  const first = o.atStart === false ? Promise.resolve() : run();
  const timer = setInterval(() => void run(), everyMs);
  timer.unref();
  return {
    first,
    stop: () => {
      clearInterval(timer);
      return running ?? last;
    },
  };
}

export const STATISTICS_EVERY_MS = 10 * 60_000;

/**
 * The planner's statistics of the small tables that changed (curriculum, schools, accounts: PostgreSQL;
 * db/src/statistics.ts says why autovacuum leaves them out). First after one period, so that a starting
 * instance opens no session beyond the one it keeps.
 */
export function startStatistics(deps: { db: Knex; logger: Logger }, everyMs = STATISTICS_EVERY_MS): Periodic {
  const task = async () => {
    const analysed = await analyzeSmallTables(deps.db);
    if (analysed.length) deps.logger.debug({ analysed }, 'statistics: analysed small tables that changed');
  };
  return startPeriodic('statistics of small tables', task, everyMs, deps.logger, { atStart: false });
}
