import crypto from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import { MemoryStore, ipKeyGenerator, rateLimit, type Store } from 'express-rate-limit';
import type { RedisStore } from 'rate-limit-redis';
import type { createClient } from 'redis';
import type { Logger } from 'pino';
import { errorEnvelope } from './errors';
import { parseJsonBody } from './route';

export type RedisClient = ReturnType<typeof createClient>;

/**
 * The prefix of every Redis key and channel name of a client (REDIS_KEY_PREFIX), so that deployments can
 * share one Redis. It travels with the client, so every user of the client (limiters, counters, the
 * revocation channel) applies the same one.
 */
const keyPrefixes = new WeakMap<object, string>();

export function redisKeyPrefix(client: RedisClient | undefined): string {
  return (client && keyPrefixes.get(client)) ?? '';
}

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return '(unparsable URL)';
  }
}

export interface RedisOptions {
  /** How long the first connection may take before start-up gives up (default 10 s). */
  startTimeoutMs?: number;
  /** Prefix of every key and channel name (REDIS_KEY_PREFIX). */
  keyPrefix?: string;
  /** Called on every error the client reports (a metric). */
  onError?: (err: unknown) => void;
}

/**
 * Connects to Redis, or rejects within `startTimeoutMs` with the reason: an instance configured for
 * shared limits does not start without them (see docs/operations.md, "Redis unreachable"). Once connected the client
 * reconnects by itself; commands sent while it is disconnected fail at once rather than wait in a
 * queue, so the rate limiters let requests through (passOnStoreError) instead of holding every request
 * until Redis returns, and /readyz reports `redis`.
 */
export async function connectRedis(url: string, logger: Logger, o: RedisOptions = {}): Promise<RedisClient> {
  // Loaded only when Redis is configured: the client weighs about 12 MB of memory in every process.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createClient: connect } = require('redis') as typeof import('redis');
  const client = connect({ url, disableOfflineQueue: true });
  keyPrefixes.set(client, o.keyPrefix ?? '');
  let lastError: unknown;
  let connected = false;
  client.on('error', (err: unknown) => {
    lastError = err;
    o.onError?.(err);
    // Before the first connection the start-up reports the reason once; the retries would only repeat it.
    if (connected) logger.error({ err }, 'redis error');
  });
  const limitMs = o.startTimeoutMs ?? 10_000;
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('timeout')), limitMs);
      }),
    ]);
    connected = true;
  } catch (err) {
    // Stops the retries (it throws when the client already gave up by itself).
    try { client.destroy(); } catch { /* closed already */ }
    const cause = lastError ?? err;
    const reason = (cause as { code?: string }).code ?? (cause as Error).message ?? String(cause);
    throw new Error(
      `Redis at ${redactUrl(url)} did not answer within ${Math.round(limitMs / 100) / 10} s (${reason}). Start ` +
        `Redis, or unset REDIS_URL to keep rate limits in this process's memory.`,
    );
  } finally {
    clearTimeout(timer);
  }
  return client;
}

export interface LimiterOptions {
  name: string;
  windowMs: number;
  limit: number;
  redis?: RedisClient;
  /** As the app's `trust proxy`: proxy hops whose X-Forwarded-For names the client (0: none). */
  trustProxy?: number;
  logger: Logger;
  /** Called on each refusal (a 429), and on each error of the counters' store (metrics). */
  onRefused?: (limiter: string) => void;
  onStoreError?: (err: unknown) => void;
}

const IPV4 = /^(?:::ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/;

/**
 * An IPv4 client is counted by its address; an IPv6 client by its /56, so that one host cannot walk
 * through the addresses of its own prefix to dodge the limit.
 */
export function clientKey(ip: string | undefined): string {
  if (!ip) return 'unknown';
  const v4 = IPV4.exec(ip);
  return v4 ? v4[1] : ipKeyGenerator(ip, 56);
}

/**
 * Counters live in Redis when a client is given (shared by every instance), in memory otherwise.
 * The client address is req.ip, which honours X-Forwarded-For only when the app trusts a proxy.
 */
export function createLimiter(o: LimiterOptions): RequestHandler {
  let store: Store | undefined;
  if (o.redis) {
    const client = o.redis;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RedisStore: Store } = require('rate-limit-redis') as { RedisStore: typeof RedisStore };
    store = new Store({
      prefix: `${redisKeyPrefix(client)}rl:${o.name}:`,
      sendCommand: (...args: string[]) => client.sendCommand(args),
    });
  }
  return rateLimit({
    windowMs: o.windowMs,
    limit: o.limit,
    store,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    skipFailedRequests: false,
    requestWasSuccessful: (_req, res) => res.statusCode < 400,
    skipSuccessfulRequests: false,
    // A store outage must not take the API down with it: let the request through and log it.
    passOnStoreError: true,
    logger: {
      error: (err: unknown) => {
        o.onStoreError?.(err);
        o.logger.error({ err, limiter: o.name }, 'rate limit store unavailable: request let through');
      },
      warn: (err: unknown) => o.logger.warn({ err, limiter: o.name }, 'rate limiter warning'),
    },
    // The configuration is checked by our own tests; the library's per-request checks cost a tenth of a small route.
    validate: false,
    // Without a trusted proxy req.ip is the socket's address; reading it directly skips parsing X-Forwarded-For.
    keyGenerator: (req) => clientKey(o.trustProxy ? req.ip : req.socket.remoteAddress),
    handler: (req, res) => {
      o.onRefused?.(o.name);
      o.logger.warn({ ip: req.ip, limiter: o.name }, 'rate limit reached');
      res.status(429).json(errorEnvelope('Too many requests, please try again later.'));
    },
  });
}

function storeOf(o: { name: string; windowMs: number; redis?: RedisClient }): Store {
  let store: Store;
  if (o.redis) {
    const client = o.redis;
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { RedisStore: Store } = require('rate-limit-redis') as { RedisStore: typeof RedisStore };
    store = new Store({
      prefix: `${redisKeyPrefix(client)}rl:${o.name}:`,
      sendCommand: (...args: string[]) => client.sendCommand(args),
    });
  } else {
    store = new MemoryStore();
  }
  void store.init?.({ windowMs: o.windowMs } as Parameters<NonNullable<Store['init']>>[0]);
  return store;
}

export interface SignInLimiterOptions {
  name: string;
  windowMs: number;
  /** Failed sign-ins of one account (from any address) in the window that lock the account. */
  accountLimit: number;
  /** Failed sign-ins from one address (for any accounts) in the window after which its wrong guesses are refused. */
  addressLimit: number;
  /** The account a sign-in names, read from its JSON body (anything but a string: none). */
  accountOf: (body: unknown) => unknown;
  /** The JSON body limit: the limiter reads the body to learn the account (a route's own limit where it has one). */
  bodyLimit: number | ((req: Request) => string | number);
  redis?: RedisClient;
  /** As the app's `trust proxy`: proxy hops whose X-Forwarded-For names the client (0: none). */
  trustProxy?: number;
  logger: Logger;
  onRefused?: (limiter: string) => void;
  onStoreError?: (err: unknown) => void;
}

/** The counter key of an account name: any case and surrounding spaces alike, and of bounded length. */
function accountKey(name: unknown): string {
  const plain = typeof name === 'string' ? name.trim().toLowerCase() : '';
  return crypto.createHash('sha256').update(plain).digest('base64url').slice(0, 22);
}

const TOO_MANY = 'Too many requests, please try again later.';

/**
 * The sign-in limiter. Only a request that ends in a client error (4xx other than its own 429) counts,
 * once it has ended, under three keys: its account, its account and address together, and its address.
 *
 * - An account whose failures (from any address) reach `accountLimit` is locked for the window: every
 *   sign-in naming it is refused, the right password too.
 * - An address whose failures reach `addressLimit` is capped: from it, an account that has already failed
 *   from there is refused at once, and any other sign-in is checked as usual but a failure is answered 429
 *   instead of its refusal. A right password for an account that has not failed still signs in, so that a
 *   school whose tablets share one address is not locked out by one pupil, or by many (OWASP, credential
 *   stuffing: lock by account, cap the address far higher).
 *
 * A whole class signing in at once behind one address with the right passwords is never refused.
 */
export function createSignInLimiter(o: SignInLimiterOptions): RequestHandler {
  const store = storeOf(o);
  const addressOf = (req: Request) => clientKey(o.trustProxy ? req.ip : req.socket.remoteAddress);
  const look = async (key: string) => {
    try {
      const info = await store.get?.(key);
      return { hits: info?.totalHits ?? 0, reset: info?.resetTime?.getTime() ?? Date.now() + o.windowMs };
    } catch (err) {
      // As the other limiters: a store outage lets the request through.
      o.onStoreError?.(err);
      o.logger.error({ err, counter: o.name }, 'rate counter unavailable');
      return { hits: 0, reset: Date.now() + o.windowMs };
    }
  };
  const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - Date.now()) / 1000));
  const refuse = (req: Request, res: Response, reset: number, why: 'account' | 'address') => {
    o.onRefused?.(o.name);
    o.logger.warn({ ip: req.ip, limiter: o.name, counter: why }, 'sign-in limit reached');
    res.setHeader('Retry-After', String(secondsUntil(reset)));
    res.status(429).json(errorEnvelope(TOO_MANY));
  };
  return (req, res, next) => {
    const run = async (): Promise<void> => {
      await parseJsonBody(req, res, typeof o.bodyLimit === 'function' ? o.bodyLimit(req) : o.bodyLimit);
      const account = `u:${accountKey(o.accountOf(req.body))}`;
      const address = addressOf(req);
      const pair = `p:${address}:${account}`;
      const byAddress = `a:${address}`;
      const [own, together, all] = await Promise.all([look(account), look(pair), look(byAddress)]);
      res.setHeader('RateLimit-Policy', `${o.accountLimit};w=${Math.ceil(o.windowMs / 1000)}`);
      res.setHeader(
        'RateLimit',
        `limit=${o.accountLimit}, remaining=${Math.max(0, o.accountLimit - own.hits)}, ` +
          `reset=${Math.max(0, Math.ceil((own.reset - Date.now()) / 1000))}`,
      );
      if (own.hits >= o.accountLimit) {
        refuse(req, res, own.reset, 'account');
        return;
      }
      const capped = all.hits >= o.addressLimit;
      if (capped && together.hits > 0) {
        refuse(req, res, all.reset, 'address');
        return;
      }
      const isFailure = () => res.statusCode >= 400 && res.statusCode < 500 && res.statusCode !== 429;
      let counted = false;
      const count = (): Promise<void> => {
        counted = true;
        return Promise.all([account, pair, byAddress].map((key) => store.increment(key))).then(
          () => undefined,
          (err: unknown) => {
            o.onStoreError?.(err);
            o.logger.error({ err, counter: o.name }, 'rate counter unavailable');
          },
        );
      };
      // Every answer of a sign-in is JSON (the route's value or the error envelope). A failure is counted
      // before its answer leaves, so that a client waiting for each answer cannot send its next guess
      // before the last one counts (on another instance sharing Redis too).
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        if (!isFailure()) return json(body);
        if (capped) {
          // A refusal of the credentials becomes the limiter's 429, which says no more about the account
          // than the refusal would.
          o.onRefused?.(o.name);
          o.logger.warn({ ip: req.ip, limiter: o.name, counter: 'address' }, 'sign-in limit reached');
          res.status(429).setHeader('Retry-After', String(secondsUntil(all.reset)));
          body = errorEnvelope(TOO_MANY);
        }
        count()
          .then(() => json(body))
          .catch((err: unknown) => o.logger.error({ err, limiter: o.name }, 'sign-in answer could not be sent'));
        return res;
      };
      res.once('finish', () => {
        if (!counted && isFailure()) void count();
      });
      next();
    };
    run().catch(next);
  };
}

export interface Counter {
  /** Counts one hit of `key`; true while the key stays within its limit, with the seconds until its window ends. */
  hit(key: string): Promise<{ allowed: boolean; retryAfterSeconds: number }>;
}

/**
 * A named counter for limits that a middleware cannot key (an e-mail address read from the body):
 * the same stores as the limiters, so several instances sharing Redis share the counts.
 */
export function createCounter(o: {
  name: string;
  windowMs: number;
  limit: number;
  redis?: RedisClient;
  logger: Logger;
}): Counter {
  const store = storeOf(o);
  return {
    async hit(key) {
      try {
        const { totalHits, resetTime } = await store.increment(key);
        const retryAfterSeconds = Math.max(
          1,
          Math.ceil(((resetTime?.getTime() ?? Date.now() + o.windowMs) - Date.now()) / 1000),
        );
        return { allowed: totalHits <= o.limit, retryAfterSeconds };
      } catch (err) {
        // As the limiters: a store outage lets the request through.
        o.logger.error({ err, counter: o.name }, 'rate counter unavailable');
        return { allowed: true, retryAfterSeconds: 0 };
      }
    },
  };
}
