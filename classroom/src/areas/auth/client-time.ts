import { z } from 'zod';

/** How far a tablet's clock may be from the server's before its reading is set aside. */
export const CLIENT_CLOCK_TOLERANCE_MS = 24 * 60 * 60 * 1000;

/**
 * A time the learner app sends (`logintime`, `logouttime`): milliseconds since the epoch, as a number or as
 * numeric text. Text that is no number is the caller's mistake (400); any number is taken, however absurd,
 * because a tablet's or a Pi's clock can be years off and that must not stop a learner signing in.
 */
export const clientTime = z
  .preprocess(
    // JSON's 1e400 arrives as Infinity, which a zod number refuses: as text it reads as the number it is.
    (v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v),
    z.union([z.number(), z.string().max(64)], { error: 'must be a number' }),
  )
  .refine((v) => !Number.isNaN(Number(v)), { error: 'must be a number' });

/**
 * The time to store for a client's reading: the reading itself while it is within a day of the server's
 * clock, the server's time otherwise (absent, non-finite, years off, beyond what a date can hold). A stored
 * time far in the future would be shown as the learner's last sign-in and never reach retention's window.
 */
export function storedTime(reading: number | string | undefined, now: Date = new Date()): Date {
  if (reading === undefined) return now;
  const ms = Number(reading);
  if (!Number.isFinite(ms) || Math.abs(ms - now.getTime()) > CLIENT_CLOCK_TOLERANCE_MS) return now;
  return new Date(ms);
}
