import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';

// Small conversions shared by the report queries. Aggregates and aliased columns are not normalised by
// the database layer (it knows columns by name): booleans may come back as 0/1 on SQLite and sums as
// null when no row matched.

export const num = (v: unknown): number => {
  const n = typeof v === 'number' ? v : Number(v ?? 0);
  return Number.isFinite(n) ? n : 0;
};

export const bool = (v: unknown): boolean => v === true || v === 1 || v === '1' || v === 't' || v === 'true';

/** A number as read, or null (a score the classroom did not send). */
export const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : num(v));

/** A learner who is not a teacher's own account (the flag is null on rows written before it existed). */
export function notTeacherAccount(q: Knex.QueryBuilder, column = 's.is_teacher_acc'): Knex.QueryBuilder {
  return q.where((w) => w.where(column, false).orWhereNull(column));
}

/** `countryid` of the charts: empty or `all` means every country. */
export const anyCountry = (countryid: string | undefined): boolean => !countryid || countryid === 'all';

/** A date filter value (ISO text as the admin UI's date pickers send it); a value that is no date is a 400. */
export function dateOf(v: string | undefined, what: string): Date | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw httpError(400, `Invalid ${what}`);
  return d;
}

/** The same instant `months` calendar months earlier (the 31st falls back to the month's last day). */
export function monthsBefore(when: Date, months: number): Date {
  const y = when.getUTCFullYear();
  const m = when.getUTCMonth() - months;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(
    Date.UTC(
      y,
      m,
      Math.min(when.getUTCDate(), last),
      when.getUTCHours(),
      when.getUTCMinutes(),
      when.getUTCSeconds(),
      when.getUTCMilliseconds(),
    ),
  );
}

/** The first instant of the month of `when` (UTC). */
export const startOfMonth = (when: Date): Date => new Date(Date.UTC(when.getUTCFullYear(), when.getUTCMonth(), 1));
