import { describe, expect, it } from 'vitest';
import { concurrencyLimit } from '../src';

describe('concurrencyLimit', () => {
  it('runs at most n tasks at once, in the order asked, and passes results and failures through', async () => {
    const limit = concurrencyLimit(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const task = (i: number) => limit(async () => {
      running += 1;
      peak = Math.max(peak, running);
      order.push(i);
      await new Promise((r) => setTimeout(r, 5));
      running -= 1;
      if (i === 3) throw new Error('task 3');
      return i * 10;
    });
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(task));
    expect(peak).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([
      0,
      10,
      20,
      'task 3',
      40,
      50,
    ]);
    // A task that throws before returning its promise frees its slot too.
    const limit1 = concurrencyLimit(1);
    await expect(limit1(() => { throw new Error('at once'); })).rejects.toThrow('at once');
    expect(await limit1(async () => 'next')).toBe('next');
  });
});
