import type { Request } from 'express';

/**
 * Calendar months and dates as the person at the admin UI sees them. The UI sends its time zone on
 * every call as `TIMEOFFSET` (the browser's getTimezoneOffset(): minutes, UTC minus local, so -420 in
 * Phnom Penh); without it, or with a value no zone has, UTC.
 */
export function callerOffset(req: Request): number {
  const raw = req.headers.timeoffset;
  const n = typeof raw === 'string' && /^-?\d{1,4}$/.test(raw.trim()) ? Number(raw.trim()) : 0;
  return Math.abs(n) <= 14 * 60 ? n : 0;
}

/** The instant as a Date whose UTC fields are the caller's wall-clock fields. */
export const wallClock = (d: Date, offset: number): Date => new Date(d.getTime() - offset * 60_000);

/** The caller's calendar month holding `d`, as the instants [start, end). */
export function monthOf(d: Date, offset: number): { start: string; end: string } {
  const w = wallClock(d, offset);
  const start = Date.UTC(w.getUTCFullYear(), w.getUTCMonth(), 1) + offset * 60_000;
  const end = Date.UTC(w.getUTCFullYear(), w.getUTCMonth() + 1, 1) + offset * 60_000;
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}

export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** en-US medium date and time, `Mar 9, 2026, 7:30:05 AM` (written out: ICU versions differ in the space before AM). */
export function dateTimeLabel(d: Date, offset: number): string {
  const w = wallClock(d, offset);
  const h = w.getUTCHours();
  const p = (n: number) => String(n).padStart(2, '0');
  const time = `${h % 12 || 12}:${p(w.getUTCMinutes())}:${p(w.getUTCSeconds())} ${h < 12 ? 'AM' : 'PM'}`;
  return `${MONTHS[w.getUTCMonth()]} ${w.getUTCDate()}, ${w.getUTCFullYear()}, ${time}`;
}

/** en-US short date, `3/9/2026`. */
export function dateLabel(d: Date, offset: number): string {
  const w = wallClock(d, offset);
  return `${w.getUTCMonth() + 1}/${w.getUTCDate()}/${w.getUTCFullYear()}`;
}
