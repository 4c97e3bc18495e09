/**
 * Runs at most `n` of the given tasks at a time, the rest in the order they were asked for. Used where
 * each task holds a large block of memory while it runs (an argon2 hash holds 19 MiB): a burst of them
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
