import type { Logger } from '@lms/shared';

export interface Periodic {
  /** The first run, started at once. */
  first: Promise<void>;
  /** Stops the timer; resolves when a run in progress has ended (for a clean shutdown). */
  stop: () => Promise<void>;
}

/**
 * Runs `task` at once and then every `everyMs`, never two runs at the same time in this process. A failure
 * is logged and the task runs again at its next turn; the timer does not keep the process alive.
 */
export function startPeriodic(name: string, task: () => Promise<void>, everyMs: number, logger: Logger): Periodic {
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
  const first = run();
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
