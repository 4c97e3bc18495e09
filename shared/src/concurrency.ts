import os from 'node:os';

/**
 * Runs at most `n` of the given tasks at a time, the rest in the order they were asked for. Used where
 * each task holds a large block of memory while it runs (an argon2 hash holds 9 MiB): a burst of them
 * (a bulk enrolment, a morning of sign-ins) then costs `n` blocks, not one per thread of the pool.
 */
export function concurrencyLimit(n: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: Array<() => void> = [];
  const next = () => {
    running -= 1;
    waiting.shift()?.();
  };
  return <T>(task: () => Promise<T>): Promise<T> => {
    const start = (): Promise<T> => {
      running += 1;
      let p: Promise<T>;
      try {
        p = task();
      } catch (err) {
        next();
        return Promise.reject(err);
      }
      return p.finally(next);
    };
    if (running < n) return start();
    return new Promise<T>((resolve, reject) => {
      waiting.push(() => { start().then(resolve, reject); });
    });
  };
}

/**
 * The argon2id cost both services hash passwords with: one of the OWASP Password Storage Cheat Sheet's
 * equally strong settings (9 MiB, 4 passes, 1 lane). Its 19 MiB / 2-pass setting takes twice the memory
 * per hash for the same strength; measured here, two hashes at once grew a process by 39 MB against 19 MB,
 * at 16 against 12 ms a hash. Hashes made with other settings are replaced at the next sign-in.
 */
export const ARGON2ID_COST = { memoryCost: 9_216, timeCost: 4, parallelism: 1 } as const;

/**
 * How many argon2 computations a process runs at once: two, or one where the process may use only one CPU
 * (a box's unit pinned to a core, a container given one). Two hashes time-sliced on one CPU take as long as
 * two in a row, each holding its 9 MiB block twice as long, and a sign-in waits for both.
 */
export function argon2Concurrency(cpus = os.availableParallelism()): number {
  return Math.max(1, Math.min(2, cpus));
}
