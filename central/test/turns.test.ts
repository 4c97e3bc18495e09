import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis, type RedisClient } from '@lms/shared';
import { createTurns } from '../src/http/turns';
import { silentLogger } from './helpers';

const redisUrl = process.env.TEST_REDIS_URL;

describe('turns in memory', () => {
  it('holds at most the limit per key and gives each turn back once', async () => {
    const turns = createTurns({ name: 'memory', limit: 2, logger: silentLogger });
    const [a, b] = [await turns.take('k'), await turns.take('k')];
    expect(await turns.take('k')).toBeUndefined();
    expect(await turns.take('other')).toBeTypeOf('function');
    a!();
    a!();
    const c = await turns.take('k');
    expect(c).toBeTypeOf('function');
    expect(await turns.take('k')).toBeUndefined();
    b!();
    c!();
  });

  it('counts the instance\'s own turns while Redis cannot be reached', async () => {
    const broken = { sendCommand: () => Promise.reject(new Error('connection refused')) } as unknown as RedisClient;
    const turns = createTurns({ name: 'broken', limit: 1, redis: broken, logger: silentLogger });
    const a = await turns.take('k');
    expect(a).toBeTypeOf('function');
    expect(await turns.take('k')).toBeUndefined();
    a!();
    expect(await turns.take('k')).toBeTypeOf('function');
  });
});

describe.runIf(!!redisUrl)('turns shared through Redis', () => {
  const clients: RedisClient[] = [];
  beforeAll(async () => {
    clients.push(await connectRedis(redisUrl!, silentLogger), await connectRedis(redisUrl!, silentLogger));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('counts the turns of every instance, and a turn given back on one is free on the other', async () => {
    const name = `test-${crypto.randomUUID()}`;
    const [one, two] = clients.map((redis) => createTurns({ name, limit: 2, redis, logger: silentLogger }));
    const a = await one.take('acct');
    const b = await two.take('acct');
    expect([typeof a, typeof b]).toEqual(['function', 'function']);
    expect(await one.take('acct')).toBeUndefined();
    expect(await two.take('acct')).toBeUndefined();
    const other = await two.take('another');
    expect(other).toBeTypeOf('function');
    other!();
    a!();
    await new Promise((r) => setTimeout(r, 50));
    const c = await two.take('acct');
    expect(c).toBeTypeOf('function');
    b!();
    c!();
  });

  it('a refused caller is told when the turn of an instance that died lapses', async () => {
    const name = `test-${crypto.randomUUID()}`;
    const turns = createTurns({ name, limit: 1, redis: clients[0], logger: silentLogger });
    // The lease of an instance killed 7 s into it: 3 s left at most, never renewed.
    await clients[1].sendCommand(['ZADD', `turns:${name}:acct`, String(Date.now() + 3000), 'dead-instance']);
    expect(await turns.take('acct')).toBeUndefined();
    const wait = await turns.lapsesIn('acct');
    expect(wait).toBeGreaterThan(2000);
    expect(wait).toBeLessThanOrEqual(3000);
    expect(await turns.lapsesIn('free')).toBe(0);
    await new Promise((r) => setTimeout(r, wait + 50));
    const next = await turns.take('acct');
    expect(next).toBeTypeOf('function');
    next!();
  });

  it('a turn whose instance stopped renewing it lapses with its lease', async () => {
    const name = `test-${crypto.randomUUID()}`;
    const turns = createTurns({ name, limit: 1, redis: clients[0], logger: silentLogger, leaseMs: 600 });
    // The lease of an instance that died: expired a moment ago, never renewed.
    await clients[1].sendCommand(['ZADD', `turns:${name}:acct`, String(Date.now() - 1), 'dead-instance']);
    const held = await turns.take('acct');
    expect(held).toBeTypeOf('function');
    // A live turn is renewed: still held after two leases.
    await new Promise((r) => setTimeout(r, 1300));
    expect(await turns.take('acct')).toBeUndefined();
    held!();
    await new Promise((r) => setTimeout(r, 50));
    const next = await turns.take('acct');
    expect(next).toBeTypeOf('function');
    next!();
  });
});
