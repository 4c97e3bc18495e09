import crypto from 'node:crypto';
import type { Request } from 'express';
import { redisKeyPrefix, type Logger, type RedisClient } from '@lms/shared';
import { appDeps, configOf } from './context';

/**
 * Work in progress per key (an account's media uploads, its log import): at most `limit` at once. In
 * memory by default; through Redis when it is configured, so that every instance sharing it counts the
 * same turns. A Redis turn is a lease renewed while it is held: the turns of an instance that dies come
 * back within `LEASE_MS`. When Redis cannot be reached the instance counts its own turns meanwhile.
 */
export interface Turns {
  /** A turn of `key`, or undefined when it has `limit` already; the returned function gives it back. */
  take(key: string): Promise<(() => void) | undefined>;
  /**
   * After a refusal: how long (ms) until the earliest turn of `key` lapses unless its holder renews it,
   * which is when a caller whose previous request died with its instance gets a turn again.
   */
  lapsesIn(key: string): Promise<number>;
}

/**
 * Short, so that a teacher whose import died with its instance (killed, the host lost) may import again
 * within seconds; a live turn is renewed four times per lease, so a renewal may fail thrice in a row.
 */
export const LEASE_MS = 10_000;
const RENEWALS_PER_LEASE = 4;

// Drops expired leases, then adds one if fewer than the limit are held. Scores are expiry times.
const TAKE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

/** `fn` on the first call only (a turn or slot is given back once, however many paths end it). */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

function memoryTurns(limit: number, leaseMs: number): Turns {
  const held = new Map<string, number>();
  return {
    // A turn of this process is held by a request still running here: ask again within a lease.
    async lapsesIn() {
      return leaseMs;
    },
    async take(key) {
      const n = held.get(key) ?? 0;
      if (n >= limit) return undefined;
      held.set(key, n + 1);
      return once(() => {
        const left = (held.get(key) ?? 1) - 1;
        if (left > 0) held.set(key, left);
        else held.delete(key);
      });
    },
  };
}

export function createTurns(o: {
  name: string;
  limit: number;
  redis?: RedisClient;
  logger: Logger;
  leaseMs?: number;
}): Turns {
  const leaseMs = o.leaseMs ?? LEASE_MS;
  const local = memoryTurns(o.limit, leaseMs);
  const client = o.redis;
  if (!client) return local;
  const send = (args: string[]) => client.sendCommand(args);
  // REDIS_KEY_PREFIX keeps two deployments sharing one Redis from sharing turns.
  const prefix = `${redisKeyPrefix(client)}turns:${o.name}:`;
  return {
    async lapsesIn(key) {
      try {
        const first = (await send(['ZRANGE', `${prefix}${key}`, '0', '0', 'WITHSCORES'])) as unknown as string[];
        return first.length === 2 ? Math.min(leaseMs, Math.max(0, Number(first[1]) - Date.now())) : 0;
      } catch {
        return leaseMs;
      }
    },
    async take(key) {
      const zkey = `${prefix}${key}`;
      const id = crypto.randomUUID();
      const now = Date.now();
      let granted: unknown;
      try {
        granted = await send([
          'EVAL',
          TAKE,
          '1',
          zkey,
          String(now),
          String(now + leaseMs),
          String(o.limit),
          id,
          String(leaseMs),
        ]);
      } catch (err) {
        o.logger.error({ err, turns: o.name }, 'turn store unavailable; counting this instance\'s turns only');
        return local.take(key);
      }
      if (Number(granted) !== 1) return undefined;
      const renew = setInterval(() => {
        send(['ZADD', zkey, 'XX', String(Date.now() + leaseMs), id])
          .then(() => send(['PEXPIRE', zkey, String(leaseMs)]))
          .catch((err: unknown) => o.logger.warn({ err, turns: o.name }, 'could not renew a turn'));
      }, leaseMs / RENEWALS_PER_LEASE);
      renew.unref();
      return once(() => {
        clearInterval(renew);
        send(['ZREM', zkey, id]).catch((err: unknown) =>
          o.logger.warn({ err, turns: o.name }, 'could not give a turn back; it lapses with its lease'),
        );
      });
    },
  };
}

const perApp = new WeakMap<object, Map<string, Turns>>();

/** The app's turns named `name` with `limit` per key (one set per app, shared through its Redis). */
export function turnsOf(req: Request, name: string, limit: (config: ReturnType<typeof configOf>) => number): Turns {
  const deps = appDeps(req);
  let byName = perApp.get(deps);
  if (!byName) perApp.set(deps, (byName = new Map()));
  let turns = byName.get(name);
  if (!turns)
    byName.set(
      name,
      (turns = createTurns({ name, limit: limit(configOf(req)), redis: deps.redis, logger: deps.logger })),
    );
  return turns;
}
