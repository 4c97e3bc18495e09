import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';

// The agent's waits after failures: from FLEET_MIN_BACKOFF_SECONDS, doubled up to FLEET_MAX_BACKOFF_SECONDS.
describe("the sync agent's backoff settings", () => {
  it('waits 30 s after a first failure unless told otherwise', () => {
    const c = loadConfig({ NODE_ENV: 'test' });
    expect(c.fleet.agent.minBackoffMs).toBe(30_000);
    expect(c.fleet.agent.maxBackoffMs).toBe(3_600_000);
  });

  it('takes a shorter first wait, and never one beyond the ceiling', () => {
    const short = loadConfig({ NODE_ENV: 'test', FLEET_MIN_BACKOFF_SECONDS: '1', FLEET_MAX_BACKOFF_SECONDS: '4' });
    expect(short.fleet.agent).toMatchObject({ minBackoffMs: 1000, maxBackoffMs: 4000 });
    const crossed = loadConfig({ NODE_ENV: 'test', FLEET_MIN_BACKOFF_SECONDS: '600', FLEET_MAX_BACKOFF_SECONDS: '60' });
    expect(crossed.fleet.agent.minBackoffMs).toBe(60_000);
  });

  it('refuses a first wait that is not a whole number of seconds from 1', () => {
    expect(() => loadConfig({ NODE_ENV: 'test', FLEET_MIN_BACKOFF_SECONDS: '0' })).toThrow(/FLEET_MIN_BACKOFF_SECONDS/);
    expect(() => loadConfig({ NODE_ENV: 'test', FLEET_MIN_BACKOFF_SECONDS: 'soon' }))
      .toThrow(/FLEET_MIN_BACKOFF_SECONDS/);
  });
});
