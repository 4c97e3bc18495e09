import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@lms/shared';
import { startPeriodic } from '../src/periodic';

const logger = createLogger({ name: 'test', level: 'silent' });

describe('startPeriodic', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at once by default, and with atStart: false first after one period', async () => {
    vi.useFakeTimers();
    const runs = { atOnce: 0, later: 0 };
    const a = startPeriodic('at once', async () => void (runs.atOnce += 1), 60_000, logger);
    const b = startPeriodic('later', async () => void (runs.later += 1), 60_000, logger, { atStart: false });
    await a.first;
    await b.first;
    expect(runs).toEqual({ atOnce: 1, later: 0 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(runs).toEqual({ atOnce: 2, later: 1 });
    await a.stop();
    await b.stop();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(runs).toEqual({ atOnce: 2, later: 1 });
  });
});
