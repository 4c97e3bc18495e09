import { once } from 'node:events';
import type { Response } from 'express';

/**
 * CSV downloads (contract §0: first line the column names, values quoted only when needed,
 * `Content-Type: application/csv`, `Content-Disposition: attachment`). Every writer of the service uses
 * this module, so that three things hold everywhere:
 *  - quoting follows RFC 4180 (a cell holding `"`, `,`, CR or LF is quoted, `"` doubled), UTF-8, lines
 *    end in LF as the original's converter wrote them (clients split on it);
 *  - no cell can run as a formula in a spreadsheet: text starting with `=`, `+`, `-`, `@`, TAB or CR is
 *    prefixed with `'` (OWASP "CSV injection"). Numbers are written as numbers (`-5` stays `-5`);
 *  - rows are streamed: a source yields them (an array, a generator, a paged reader), each is written
 *    as it comes, and the writer waits while the client is slower than the database, so memory stays
 *    flat however many rows a download has.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;
/** What is written to the socket at once: fewer, larger writes without holding much. */
const CHUNK = 64 * 1024;

/** One cell as written: formula-safe text, quoted when RFC 4180 requires it. */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let s: string;
  if (typeof value === 'number') s = Number.isFinite(value) ? String(value) : '';
  else if (typeof value === 'bigint') s = String(value);
  else if (typeof value === 'boolean') s = value ? 'true' : 'false';
  else if (value instanceof Date) s = Number.isNaN(value.getTime()) ? '' : value.toISOString();
  else {
    s = typeof value === 'object' ? JSON.stringify(value) : String(value);
    if (FORMULA_START.test(s)) s = `'${s}`;
  }
  return NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A cell read back from a file this module wrote (a round trip through a spreadsheet): the `'` that
 * neutralised a formula-like start is taken off again, so `+855 12 345` comes back as it was.
 */
export function fromCsvCell(value: string): string;
export function fromCsvCell(value: string | null | undefined): string | null | undefined;
export function fromCsvCell(value: string | null | undefined): string | null | undefined {
  return typeof value === 'string' && value.length > 1 && value[0] === "'" && FORMULA_START.test(value.slice(1))
    ? value.slice(1)
    : value;
}

/** One line (without its end) of `columns` taken from `row`. */
export function csvLine(columns: readonly string[], row: Readonly<Record<string, unknown>>): string {
  let line = '';
  for (let i = 0; i < columns.length; i += 1) line += (i ? ',' : '') + csvCell(row[columns[i]]);
  return line;
}

/** A whole document in memory: for small, bounded outputs (tests, a handful of rows). */
export function toCsv(columns: readonly string[], rows: Iterable<Readonly<Record<string, unknown>>>): string {
  const lines = [columns.map(csvCell).join(',')];
  for (const r of rows) lines.push(csvLine(columns, r));
  return lines.join('\n');
}

/**
 * `attachment` with the file name: a plain ASCII name as `filename="…"` (what existing clients read);
 * any other (a school named in Khmer) also as RFC 5987 `filename*`, with an ASCII fallback, because a
 * header value cannot carry it raw.
 */
export function attachment(filename: string): string {
  const plain = filename.replace(/["\\\r\n]/g, '_');
  if (/^[\x20-\x7e]*$/.test(plain)) return `attachment; filename="${plain}"`;
  const fallback = plain.replace(/[^\x20-\x7e]/g, '_');
  const encoded = encodeURIComponent(filename).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/**
 * Who watches a download (the access record of learner data): told the columns before the first byte,
 * each row as it is written, and whether the download was complete before its last byte. Each step may
 * wait (a database write); a failure there fails the download.
 */
export interface CsvWatch {
  opening(columns: readonly string[]): Promise<void>;
  row(row: Readonly<Record<string, unknown>>): void;
  closing(complete: boolean): Promise<void>;
}

const watches = new WeakMap<Response, CsvWatch>();

/** Sets the watcher of the CSV download `res` may carry. */
export function watchCsv(res: Response, watch: CsvWatch): void {
  watches.set(res, watch);
}

export type RowSource<T> = Iterable<T> | AsyncIterable<T>;

function iteratorOf<T>(rows: RowSource<T>): Iterator<T> | AsyncIterator<T> {
  return Symbol.asyncIterator in rows
    ? (rows as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (rows as Iterable<T>)[Symbol.iterator]();
}

/** Resolves true when the socket can take more, false when the client went away. */
async function drained(res: Response): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  const ac = new AbortController();
  try {
    const winner = await Promise.race([
      once(res, 'drain', { signal: ac.signal }).then(() => true),
      once(res, 'close', { signal: ac.signal }).then(() => false),
    ]);
    return winner;
  } finally {
    ac.abort();
  }
}

/**
 * Streams `rows` as a CSV download. The first row is read before anything is sent, so that a failure
 * there (an unknown filter value, a database error) is still answered as the usual error envelope;
 * a failure later can only cut the download short. When the client goes away the source is closed
 * (a paged reader stops querying).
 */
export async function sendCsv<T extends Readonly<Record<string, unknown>>>(
  res: Response,
  filename: string,
  columns: readonly string[],
  rows: RowSource<T>,
): Promise<void> {
  const it = iteratorOf(rows);
  let next = await it.next();
  const watch = watches.get(res);
  try {
    await watch?.opening(columns);
  } catch (err) {
    if (!next.done) await it.return?.();
    throw err;
  }
  res.status(200);
  res.setHeader('Content-Type', 'application/csv; charset=utf-8');
  res.setHeader('Content-Disposition', attachment(filename));
  let buf = columns.map(csvCell).join(',');
  let open = true;
  try {
    while (!next.done) {
      buf += '\n' + csvLine(columns, next.value);
      watch?.row(next.value);
      if (buf.length >= CHUNK) {
        const more = res.write(buf);
        buf = '';
        if (!more && !(await drained(res))) {
          open = false;
          break;
        }
      }
      next = await it.next();
    }
  } catch (err) {
    // Nothing sent yet: the error envelope replaces the download.
    if (!res.headersSent) {
      res.removeHeader('Content-Disposition');
      res.removeHeader('Content-Type');
    }
    throw err;
  } finally {
    if (!next.done) await it.return?.();
  }
  await watch?.closing(open && !res.destroyed);
  if (open && !res.destroyed) res.end(buf);
}
