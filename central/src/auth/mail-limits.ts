import type { Request } from 'express';
import { createCounter, type Counter, type Logger, type RedisClient } from '@lms/shared';

/** How often reset and verification links may be asked for: per client address and per e-mail address. */
export interface MailCounters {
  perClient: Counter;
  perAccount: Counter;
}

const HOUR = 60 * 60 * 1000;

export function createMailCounters(o: {
  perClientPerHour: number;
  perAccountPerHour: number;
  redis?: RedisClient;
  logger: Logger;
}): MailCounters {
  return {
    perClient: createCounter({
      name: 'central-mail-client',
      windowMs: HOUR,
      limit: o.perClientPerHour,
      redis: o.redis,
      logger: o.logger,
    }),
    perAccount: createCounter({
      name: 'central-mail-account',
      windowMs: HOUR,
      limit: o.perAccountPerHour,
      redis: o.redis,
      logger: o.logger,
    }),
  };
}

export const mailCountersOf = (req: Request): MailCounters => req.app.locals.mailCounters as MailCounters;
