import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_PROTOCOL, createLogger, newBoxSecret } from '@lms/shared';
import { makeApp, type TestApp } from './helpers';
import { saveIdentity } from '../src/fleet/identity';
import { startSyncAgent } from '../src/fleet/agent';

// The sync agent's pace: one run at a time, exponential backoff, central's Retry-After, and the slowest pace
// for a refused credential. Central is a stand-in fetch here; the real exchange is in central's fleet tests.

const quiet = createLogger({ name: 'test', level: 'silent' });
let t: TestApp;
const MIN = 30_000;
const MAX = 3_600_000;

beforeAll(async () => {
  t = await makeApp();
  await saveIdentity(t.tdb.db, { centralurl: 'http://central.invalid', boxid: crypto.randomUUID(),
    schoolid: crypto.randomUUID(), secret: newBoxSecret(), enrolledat: new Date().toISOString() });
});
afterAll(async () => {
  await t.tdb.dispose();
});

type Answer = { status: number; body: unknown; headers?: Record<string, string> };
function stand(answers: () => Answer) {
  const calls: string[] = [];
  const f = (async (url: string) => {
    calls.push(String(url));
    await new Promise((r) => setImmediate(r));
    const a = answers();
    return new Response(JSON.stringify(a.body), { status: a.status, headers: a.headers });
  }) as unknown as typeof fetch;
  return { calls, f };
}
const contactOk = (): Answer => ({ status: 200, body: { error: false, data: { boxid: 'b', schoolid: 's',
  centraltime: new Date().toISOString(), clockskewms: 0, protocol: FLEET_PROTOCOL, ackedseq: 0 } } });
const agentWith = (f: typeof fetch) => startSyncAgent(t.tdb.db, { intervalMs: 300_000, pieceRows: 500,
  requestTimeoutMs: 5000, minBackoffMs: MIN, maxBackoffMs: MAX, dataDir: '/', fetch: f }, quiet, { start: false });

describe('the sync agent', () => {
  it('never runs two syncs at once: a run asked for during one joins it', async () => {
    const c = stand(contactOk);
    const agent = agentWith(c.f);
    const [a, b] = [agent.syncNow(), agent.syncNow()];
    expect(a).toBe(b);
    // A stand that names no version tags: the down path finds nothing to fetch.
    expect(await a).toEqual({ pieces: 0, entries: 0, ackedseq: 0,
      down: { applied: [], refused: [], unchanged: ['package', 'students', 'teachers'],
        media: { fetched: [], removed: [] }, bytes: 0 } });
    // A box without learner progress asks for the roster that restores central's (a new or replaced box).
    expect(c.calls).toEqual(['http://central.invalid/fleet/box/contact',
      'http://central.invalid/fleet/box/state?restore=1']);
    expect(agent.nextDelayMs).toBeGreaterThanOrEqual(0.8 * 300_000);
    expect(agent.nextDelayMs).toBeLessThanOrEqual(1.2 * 300_000);
    agent.stop();
  });

  it('backs off exponentially, honours Retry-After, and waits longest after a refused credential', async () => {
    let next: Answer = { status: 503, body: { error: true, errormessage: 'busy', data: false } };
    const c = stand(() => next);
    const agent = agentWith(c.f);
    await expect(agent.syncNow()).rejects.toThrow('busy');
    expect(agent.nextDelayMs).toBeGreaterThanOrEqual(0.8 * MIN);
    expect(agent.nextDelayMs).toBeLessThanOrEqual(1.2 * MIN);
    await expect(agent.syncNow()).rejects.toThrow('busy');
    expect(agent.nextDelayMs).toBeGreaterThanOrEqual(0.8 * 2 * MIN);
    expect(agent.nextDelayMs).toBeLessThanOrEqual(1.2 * 2 * MIN);
    expect(agent.failures).toBe(2);
    next = { ...next, headers: { 'Retry-After': '7200' } };
    await expect(agent.syncNow()).rejects.toThrow('busy');
    expect(agent.nextDelayMs).toBeGreaterThanOrEqual(7_200_000);
    next = { status: 401, body: { error: true, errormessage: 'This box was revoked at central', data: false } };
    await expect(agent.syncNow()).rejects.toThrow(/revoked/);
    expect(agent.nextDelayMs).toBeGreaterThanOrEqual(0.8 * MAX);
    const row = await t.tdb.db('fleetidentity').first('lasterror');
    expect(row.lasterror).toBe('This box was revoked at central');
    next = contactOk();
    await agent.syncNow();
    expect(agent.failures).toBe(0);
    expect((await t.tdb.db('fleetidentity').first('lasterror')).lasterror).toBeNull();
    agent.stop();
  });

  it('does nothing until the box is enrolled', async () => {
    const other = await makeApp();
    try {
      const c = stand(contactOk);
      const agent = startSyncAgent(other.tdb.db, { intervalMs: 300_000, pieceRows: 500, requestTimeoutMs: 5000,
        minBackoffMs: MIN, maxBackoffMs: MAX, dataDir: '/', fetch: c.f }, quiet, { start: false });
      expect(await agent.syncNow()).toBeUndefined();
      expect(c.calls).toEqual([]);
      agent.stop();
    } finally {
      await other.tdb.dispose();
    }
  });
});
