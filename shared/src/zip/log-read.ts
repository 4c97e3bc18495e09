import type { Readable } from 'node:stream';
import { normaliseRow } from './columns';
import { ZipError } from './errors';
import {
  LOG_COLUMNS, LOG_INI, PROGRESS_COLLECTIONS, isLogFileEntry,
  type ProgressKey, type RpiUserAccessRow, type StudentProgressQuestionRow, type StudentProgressRow,
} from './log';
import { withZip, type ZipLimits, type ZipSource } from './reader';

// Reading the activity-log ZIP (contract sync-formats A and F). The reader scans log.ini's bytes only for
// its structure and hands each row's text to the native JSON.parse: handing every token of a 36 MB
// log.ini to JavaScript one at a time (a token-stream parser) ran at about 7 MB/s, five seconds of parsing
// for a six-month log; this runs several times faster with memory still bounded by one batch.

/** One batch of normalised rows, in an order that respects foreign keys (a result batch precedes its questions). */
export type LogBatch =
  | { kind: 'result'; table: 'studentprogress'; rows: Array<Partial<StudentProgressRow>> }
  | { kind: 'questions'; table: 'studentprogressquestions'; rows: Array<Partial<StudentProgressQuestionRow>> }
  | { kind: 'access'; table: 'rpiuseraccess'; rows: Array<Partial<RpiUserAccessRow>> }
  | {
      kind: 'progress';
      key: ProgressKey;
      table: (typeof PROGRESS_COLLECTIONS)[ProgressKey];
      rows: Array<Record<string, unknown>>;
    };

export interface LogIniSummary {
  /** What the document's top level was: the full shape, `[]`/`{}`/anything without `log`. */
  shape: 'log' | 'empty';
  /** Which of log.result, log.progress and log.access were present; the original imports only when all three are. */
  present: { result: boolean; progress: boolean; access: boolean };
  counts: Record<LogBatch['table'], number>;
}

export const logIniComplete = (s: LogIniSummary): boolean => s.present.result && s.present.progress && s.present.access;

type Target = { kind: 'result' } | { kind: 'access' } | { kind: 'progress'; key: ProgressKey };

function targetOf(path: string[]): Target | null {
  if (path.length === 2 && path[0] === 'log' && (path[1] === 'result' || path[1] === 'access'))
    return { kind: path[1] };
  if (
    path.length === 3 &&
    path[0] === 'log' &&
    path[1] === 'progress' &&
    Object.hasOwn(PROGRESS_COLLECTIONS, path[2])
  ) {
    return { kind: 'progress', key: path[2] as ProgressKey };
  }
  return null;
}

interface Container {
  type: 'object' | 'array';
  path: string[];
  key: string | null;
  /** object: key → colon → value → comma; array: value → comma. `first` admits the closing bracket at once. */
  state: 'first' | 'key' | 'colon' | 'value' | 'comma';
  target: Target | null;
}

// Rows as the classroom server writes them are already in the normalised form; checking that is much
// cheaper than normalising (a Date round trip per timestamp). Anything else takes the shared normaliser.
const CANONICAL_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;
const SPECS = new Map<string, Array<[string, string]>>(
  Object.entries(LOG_COLUMNS).map(([t, spec]) => [t, Object.entries(spec)]),
);

function canonicalRow(table: keyof typeof LOG_COLUMNS, input: unknown): Record<string, unknown> | null {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return null;
  const src = input as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  const spec = SPECS.get(table)!;
  let present = 0;
  for (const [column, kind] of spec) {
    const v = src[column];
    if (v === undefined) {
      if (kind === 'id') return null;
      continue;
    }
    present += 1;
    if (v !== null) {
      switch (kind) {
        case 'id':
        case 'string':
          if (typeof v !== 'string' || (kind === 'id' && (v === '' || v.trim() !== v))) return null;
          break;
        case 'int':
          if (typeof v !== 'number' || !Number.isInteger(v)) return null;
          break;
        case 'number':
        case 'decimal':
          if (typeof v !== 'number' || !Number.isFinite(v)) return null;
          break;
        case 'bool':
          if (typeof v !== 'boolean') return null;
          break;
        case 'datetime':
          if (typeof v !== 'string' || !CANONICAL_TIME.test(v)) return null;
          break;
        default:
          return null;
      }
    } else if (kind === 'id') return null;
    out[column] = v;
  }
  if (present === spec.length) {
    // Exactly the spec's columns (nothing extra): the parsed object itself is the row, one allocation less.
    let keys = 0;
    for (const _ in src) keys += 1;
    if (keys === present) return src;
  }
  return out;
}

function normalise<T extends keyof typeof LOG_COLUMNS>(table: T, input: unknown): Record<string, unknown> {
  return canonicalRow(table, input) ?? (normaliseRow(table, LOG_COLUMNS[table], input) as Record<string, unknown>);
}

const invalid = (why: string) => new ZipError('bad_document', `log.ini is not valid JSON (${why})`);
const SCALAR = /^(true|false|null|-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?)$/;

const enum B {
  Quote = 0x22,
  Backslash = 0x5c,
  OpenObj = 0x7b,
  CloseObj = 0x7d,
  OpenArr = 0x5b,
  CloseArr = 0x5d,
  Colon = 0x3a,
  Comma = 0x2c,
  Space = 0x20,
  Tab = 0x09,
  Lf = 0x0a,
  Cr = 0x0d,
}

/**
 * Reads `log.ini` and yields normalised rows in batches of `batchSize`, in document order (a result batch
 * precedes the batch of its question rows). Accepts what classroom servers really write (decision 14) the
 * same way the shared reader does; returns which of log.result, log.progress and log.access were present.
 */
export async function* readLogIni(
  input: Readable,
  options: { batchSize?: number } = {},
): AsyncGenerator<LogBatch, LogIniSummary> {
  const batchSize = options.batchSize ?? 500;
  const summary: LogIniSummary = {
    shape: 'empty',
    present: { result: false, progress: false, access: false },
    counts: {
      studentprogress: 0,
      studentprogressquestions: 0,
      rpiuseraccess: 0,
      studentactives: 0,
      studentlearningsprogress: 0,
      studentgradesprogress: 0,
      studentlevelsprogress: 0,
      studentlessonsprogress: 0,
      studentpoints: 0,
      studentappusages: 0,
    },
  };
  const ready: LogBatch[] = [];
  let results: Array<Partial<StudentProgressRow>> = [];
  let questions: Array<Partial<StudentProgressQuestionRow>> = [];
  let rows: Array<Record<string, unknown>> = [];

  const flush = (t: Target): void => {
    if (t.kind === 'result') {
      if (results.length) ready.push({ kind: 'result', table: 'studentprogress', rows: results });
      if (questions.length) ready.push({ kind: 'questions', table: 'studentprogressquestions', rows: questions });
      summary.counts.studentprogress += results.length;
      summary.counts.studentprogressquestions += questions.length;
      results = [];
      questions = [];
      return;
    }
    if (rows.length) {
      if (t.kind === 'access') {
        ready.push({ kind: 'access', table: 'rpiuseraccess', rows });
        summary.counts.rpiuseraccess += rows.length;
      } else {
        const table = PROGRESS_COLLECTIONS[t.key];
        ready.push({ kind: 'progress', key: t.key, table, rows });
        summary.counts[table] += rows.length;
      }
    }
    rows = [];
  };

  const take = (t: Target, value: unknown): void => {
    if (t.kind === 'result') {
      const row = normalise('studentprogress', value) as Partial<StudentProgressRow>;
      const qs = (value as Record<string, unknown>).studentprogressquestions;
      if (qs !== undefined && qs !== null && !Array.isArray(qs))
        throw new ZipError('bad_document', 'studentprogress.studentprogressquestions must be an array');
      for (const q of qs ?? []) {
        const qrow = normalise('studentprogressquestions', q) as Partial<StudentProgressQuestionRow>;
        // A question row belongs to the result it is nested in, whatever its own field says.
        qrow.studentprogressid = row.studentprogressid;
        questions.push(qrow);
      }
      results.push(row);
      if (results.length >= batchSize) flush(t);
      return;
    }
    const table = t.kind === 'access' ? 'rpiuseraccess' : PROGRESS_COLLECTIONS[t.key];
    rows.push(normalise(table, value));
    if (rows.length >= batchSize) flush(t);
  };

  const stack: Container[] = [];
  let topDone = false;
  let first = true;

  // A row being collected: its bytes so far, nesting depth, string state.
  let rowParts: Buffer[] | null = null;
  let rowDepth = 0;
  let rowInString = false;
  let rowEscape = false;
  let rowTarget: Target | null = null;

  // An outer-level string (a key or a value outside the rows) or bare scalar being collected.
  let strParts: Buffer[] | null = null;
  let strEscape = false;
  let scalar: string | null = null;

  const valueDone = (): void => {
    const parent = stack[stack.length - 1];
    if (!parent) topDone = true;
    else parent.state = 'comma';
  };

  const beforeValue = (): Container | undefined => {
    const parent = stack[stack.length - 1];
    if (!parent) {
      if (topDone) throw invalid('more than one value');
      return undefined;
    }
    if (parent.type === 'object' ? parent.state !== 'value' : parent.state !== 'value' && parent.state !== 'first')
      throw invalid('unexpected value');
    return parent;
  };

  const openContainer = (type: 'object' | 'array'): void => {
    const parent = beforeValue();
    const path = parent ? (parent.type === 'object' ? [...parent.path, parent.key ?? ''] : [...parent.path, '*']) : [];
    if (path.length === 0 && type === 'object') summary.shape = 'log';
    if (path.length === 1 && path[0] === 'log') {
      if (type !== 'object') throw new ZipError('bad_document', 'log.ini: "log" must be an object');
    } else if (path.length === 2 && path[0] === 'log' && (path[1] === 'result' || path[1] === 'access')) {
      if (type !== 'array') throw new ZipError('bad_document', `log.ini: "log.${path[1]}" must be an array`);
      summary.present[path[1]] = true;
    } else if (path.length === 2 && path[0] === 'log' && path[1] === 'progress') {
      if (type !== 'object') throw new ZipError('bad_document', 'log.ini: "log.progress" must be an object');
      summary.present.progress = true;
    } else if (targetOf(path) && type !== 'array') {
      throw new ZipError('bad_document', `log.ini: "${path.join('.')}" must be an array`);
    }
    stack.push({ type, path, key: null, state: 'first', target: type === 'array' ? targetOf(path) : null });
  };

  const closeContainer = (type: 'object' | 'array'): void => {
    const top = stack[stack.length - 1];
    if (!top || top.type !== type) throw invalid(`unexpected "${type === 'object' ? '}' : ']'}"`);
    if (top.state !== 'first' && top.state !== 'comma') throw invalid(`unexpected "${type === 'object' ? '}' : ']'}"`);
    stack.pop();
    if (top.target) flush(top.target);
    valueDone();
  };

  const endString = (raw: Buffer): void => {
    let text: string;
    try {
      text = JSON.parse(`"${raw.toString('utf8')}"`) as string;
    } catch {
      throw invalid('bad string');
    }
    const parent = stack[stack.length - 1];
    if (parent?.type === 'object' && (parent.state === 'first' || parent.state === 'key')) {
      parent.key = text;
      parent.state = 'colon';
      return;
    }
    const p = beforeValue();
    if (p?.target) throw new ZipError('bad_document', `${p.path.join('.')}: a row must be an object`);
    valueDone();
  };

  const endScalar = (): void => {
    const s = scalar!;
    scalar = null;
    if (!SCALAR.test(s)) throw invalid(`unexpected "${s.slice(0, 20)}"`);
    const p = beforeValue();
    if (p?.target) throw new ZipError('bad_document', `${p.path.join('.')}: a row must be an object`);
    valueDone();
  };

  const scan = (chunk: Buffer): void => {
    let i = 0;
    const n = chunk.length;
    if (first) {
      first = false;
      if (n >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) i = 3;
    }
    while (i < n) {
      if (rowParts) {
        // Inside a row: find where it ends; JSON.parse checks everything else about it.
        const start = i;
        let depth = rowDepth;
        let inString = rowInString;
        let escape = rowEscape;
        let end = -1;
        while (i < n) {
          if (inString) {
            if (escape) {
              escape = false;
              i += 1;
              continue;
            }
            // Jump to the next quote; it ends the string unless an odd run of backslashes precedes it.
            const q = chunk.indexOf(B.Quote, i);
            const stop = q < 0 ? n : q;
            let k = 0;
            while (stop - k - 1 >= i && chunk[stop - k - 1] === B.Backslash) k += 1;
            if (q < 0) {
              escape = k % 2 === 1;
              i = n;
              break;
            }
            if (k % 2 === 0) inString = false;
            i = q + 1;
            continue;
          }
          const b = chunk[i];
          if (b === B.Quote) inString = true;
          else if (b === B.OpenObj || b === B.OpenArr) depth += 1;
          else if (b === B.CloseObj || b === B.CloseArr) {
            depth -= 1;
            if (depth === 0) {
              end = i + 1;
              break;
            }
          }
          i += 1;
        }
        rowDepth = depth;
        rowInString = inString;
        rowEscape = escape;
        if (end < 0) {
          rowParts.push(chunk.subarray(start));
          return;
        }
        rowParts.push(chunk.subarray(start, end));
        const text = rowParts.length === 1 ? rowParts[0].toString('utf8') : Buffer.concat(rowParts).toString('utf8');
        rowParts = null;
        i = end;
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch (err) {
          throw invalid(err instanceof Error ? err.message : 'bad row');
        }
        take(rowTarget!, value);
        valueDone();
        continue;
      }
      if (strParts) {
        const start = i;
        let end = -1;
        for (; i < n; i += 1) {
          const b = chunk[i];
          if (strEscape) strEscape = false;
          else if (b === B.Backslash) strEscape = true;
          else if (b === B.Quote) {
            end = i;
            break;
          }
        }
        if (end < 0) {
          strParts.push(chunk.subarray(start));
          return;
        }
        strParts.push(chunk.subarray(start, end));
        const raw = strParts.length === 1 ? strParts[0] : Buffer.concat(strParts);
        strParts = null;
        i = end + 1;
        endString(raw);
        continue;
      }
      const b = chunk[i];
      if (scalar !== null) {
        if (
          (b >= 0x30 && b <= 0x39) ||
          (b >= 0x61 && b <= 0x7a) ||
          (b >= 0x41 && b <= 0x5a) ||
          b === 0x2d ||
          b === 0x2b ||
          b === 0x2e
        ) {
          scalar += String.fromCharCode(b);
          i += 1;
          continue;
        }
        endScalar();
      }
      i += 1;
      if (b === B.Space || b === B.Tab || b === B.Lf || b === B.Cr) continue;
      const top = stack[stack.length - 1];
      switch (b) {
        case B.OpenObj:
          if (top?.target) {
            beforeValue();
            rowParts = [Buffer.from('{')];
            rowDepth = 1;
            rowInString = false;
            rowEscape = false;
            rowTarget = top.target;
          } else openContainer('object');
          break;
        case B.OpenArr:
          if (top?.target) {
            beforeValue();
            throw new ZipError('bad_document', `${top.path.join('.')}: a row must be an object`);
          }
          openContainer('array');
          break;
        case B.CloseObj:
          closeContainer('object');
          break;
        case B.CloseArr:
          closeContainer('array');
          break;
        case B.Colon:
          if (top?.type !== 'object' || top.state !== 'colon') throw invalid('unexpected ":"');
          top.state = 'value';
          break;
        case B.Comma:
          if (!top || top.state !== 'comma') throw invalid('unexpected ","');
          top.state = top.type === 'object' ? 'key' : 'value';
          break;
        case B.Quote:
          strParts = [];
          strEscape = false;
          break;
        default:
          scalar = String.fromCharCode(b);
      }
    }
  };

  for await (const chunk of input) {
    scan(chunk as Buffer);
    while (ready.length) yield ready.shift()!;
  }
  if (scalar !== null) endScalar();
  if (rowParts || strParts || stack.length || !topDone) throw invalid('unexpected end of log.ini');
  if (summary.shape === 'log' && !summary.present.result && !summary.present.progress && !summary.present.access)
    summary.shape = 'empty';
  return summary;
}

export interface LogZipSummary {
  entries: number;
  /** null when the ZIP had no log.ini. */
  logIni: LogIniSummary | null;
  /** The RPI-API entries (names as in the ZIP, sizes uncompressed). */
  logFiles: Array<{ name: string; size: number }>;
}

export interface LogZipHandlers {
  /** Called for every batch, awaited before the next is parsed (backpressure for the database). */
  onBatch?: (batch: LogBatch) => Promise<void> | void;
  /** Called for every RPI-API entry; the content is not read. */
  onLogFile?: (entry: { name: string; size: number }) => Promise<void> | void;
  batchSize?: number;
  limits?: Partial<ZipLimits>;
}

/**
 * Reads an activity-log ZIP the way central PUT /log/import needs it: `log.ini` streamed in batches,
 * RPI-API entries reported by name, anything else refused (`There is invalid file inside zip-file`),
 * an empty ZIP refused (`Invalid file (Zip-file is empty)`).
 */
export async function readLogZip(source: ZipSource, handlers: LogZipHandlers = {}): Promise<LogZipSummary> {
  return withZip(source, handlers.limits ?? {}, async (zip) => {
    const summary: LogZipSummary = { entries: 0, logIni: null, logFiles: [] };
    for await (const entry of zip.entries()) {
      summary.entries += 1;
      if (entry.name === LOG_INI) {
        const batches = readLogIni(await entry.open(), { batchSize: handlers.batchSize });
        for (;;) {
          const next = await batches.next();
          if (next.done) {
            summary.logIni = next.value;
            break;
          }
          await handlers.onBatch?.(next.value);
        }
      } else if (isLogFileEntry(entry.name) && !entry.isDirectory) {
        const file = { name: entry.name, size: entry.size };
        summary.logFiles.push(file);
        await handlers.onLogFile?.(file);
      } else {
        throw new ZipError('bad_document', 'There is invalid file inside zip-file');
      }
    }
    if (summary.entries === 0) throw new ZipError('empty', 'Invalid file (Zip-file is empty)');
    return summary;
  });
}
