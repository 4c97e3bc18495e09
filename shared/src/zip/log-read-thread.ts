import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { ZipError, type ZipErrorCode } from './errors';
import { LOG_COLUMNS } from './log';
import { readLogZip, type LogBatch, type LogZipHandlers, type LogZipSummary } from './log-read';
import type { ZipLimits } from './reader';

// Reading log.ini (inflating, scanning, parsing and checking some 36 MB for a six-month log) took about as
// long as writing its rows to SQLite, one after the other on the request thread. On a worker thread the
// two overlap. Batches cross as one flat array of values per batch in the table's column order: cloning
// row objects between threads cost five times as much as cloning the same values as one array.

/** How many batches the worker may run ahead of the database. */
const AHEAD = 2;

export interface WorkerInput {
  path: string;
  batchSize?: number;
  limits?: Partial<ZipLimits>;
  ahead: number;
}

export interface EncodedBatch {
  kind: LogBatch['kind'];
  table: LogBatch['table'];
  key?: string;
  /** Row after row, one value per column of LOG_COLUMNS[table] in its order; undefined where a row lacks the column. */
  values: unknown[];
}

export type ToWorker = { type: 'start'; input: WorkerInput } | { type: 'ack' };

export type ToMain =
  | { type: 'batch'; batch: EncodedBatch }
  | { type: 'logfile'; file: { name: string; size: number } }
  | { type: 'done'; summary: LogZipSummary }
  | { type: 'error'; zip: boolean; code?: ZipErrorCode; message: string };

const COLUMNS = new Map<string, string[]>(Object.entries(LOG_COLUMNS).map(([t, spec]) => [t, Object.keys(spec)]));

export function encodeBatch(batch: LogBatch): EncodedBatch {
  const columns = COLUMNS.get(batch.table)!;
  const rows = batch.rows as Array<Record<string, unknown>>;
  const values = new Array<unknown>(rows.length * columns.length);
  let k = 0;
  for (const r of rows) for (const c of columns) values[k++] = r[c];
  return { kind: batch.kind, table: batch.table, key: batch.kind === 'progress' ? batch.key : undefined, values };
}

export function decodeBatch(e: EncodedBatch): LogBatch {
  const columns = COLUMNS.get(e.table)!;
  const rows: Array<Record<string, unknown>> = [];
  for (let k = 0; k < e.values.length; ) {
    const row: Record<string, unknown> = {};
    for (const c of columns) {
      const v = e.values[k++];
      if (v !== undefined) row[c] = v;
    }
    rows.push(row);
  }
  if (e.kind === 'progress') return { kind: 'progress', key: e.key, table: e.table, rows } as LogBatch;
  return { kind: e.kind, table: e.table, rows } as LogBatch;
}

// The compiled worker: beside this file once built; from the sources (tests), the build's copy.
function workerFile(): string | undefined {
  const here = path.join(__dirname, 'log-worker.js');
  if (fs.existsSync(here)) return here;
  const built = path.resolve(__dirname, '..', '..', 'dist', 'zip', 'log-worker.js');
  return fs.existsSync(built) ? built : undefined;
}

/** A log reader whose worker thread is started ahead of the file it will read. */
export interface LogReader {
  /**
   * readLogZip of the file, on the worker (once per reader): the same batches in the same order, the same
   * handlers (each batch awaited before the next is handed over), the same errors.
   */
  read(file: string, handlers?: LogZipHandlers): Promise<LogZipSummary>;
  /** Stops the worker if it is still running (a reader that was never used, or after a failure). */
  dispose(): void;
}

/**
 * Starts a log reader's worker thread now, so that it boots while the caller still receives the upload.
 * Without a compiled worker (sources run before any build) the reading happens on this thread.
 */
export function startLogReader(): LogReader {
  const entry = workerFile();
  if (!entry) {
    return { read: (file, handlers = {}) => readLogZip({ path: file }, handlers), dispose: () => undefined };
  }
  const worker = new Worker(entry, {
    // The reader holds a few batches at a time; a small young generation keeps the thread's memory small.
    resourceLimits: { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 64 },
  });
  // An error before read() is called must not go unhandled; read() reports its own.
  const early = (err: unknown) => void err;
  worker.on('error', early);
  let used = false;
  const dispose = () => void worker.terminate();
  return {
    dispose,
    async read(file, handlers = {}) {
      if (used) throw new Error('a log reader reads one file');
      used = true;
      worker.off('error', early);
      try {
        return await readOn(
          worker,
          { path: file, batchSize: handlers.batchSize, limits: handlers.limits, ahead: AHEAD },
          handlers,
        );
      } finally {
        dispose();
      }
    },
  };
}

/**
 * Hands the worker its file and the handlers its messages, one at a time, in order, each after the previous settled.
 */
function readOn(worker: Worker, input: WorkerInput, handlers: LogZipHandlers): Promise<LogZipSummary> {
  return new Promise<LogZipSummary>((resolve, reject) => {
    let chain: Promise<void> = Promise.resolve();
    let settled = false;
    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      reject(err);
    };
    const handle = async (m: ToMain): Promise<void> => {
      if (settled) return;
      switch (m.type) {
        case 'batch':
          await handlers.onBatch?.(decodeBatch(m.batch));
          worker.postMessage({ type: 'ack' } satisfies ToWorker);
          return;
        case 'logfile':
          await handlers.onLogFile?.(m.file);
          return;
        case 'done':
          settled = true;
          resolve(m.summary);
          return;
        case 'error':
          throw m.zip ? new ZipError(m.code!, m.message) : new Error(m.message);
      }
    };
    worker.on('message', (m: ToMain) => {
      chain = chain.then(() => handle(m)).catch(fail);
    });
    worker.once('error', fail);
    worker.once('exit', (code) => {
      void chain.then(() => fail(new Error(`log reader stopped (exit code ${code})`)));
    });
    worker.postMessage({ type: 'start', input } satisfies ToWorker);
  });
}
