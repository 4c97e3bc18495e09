import { PassThrough, Readable } from 'node:stream';
import yazl from 'yazl';
import { emitRow, type RowOf } from './columns';

// The activity-log ZIP (contract sync-formats A and F): classroom GET /export/log writes it, central
// PUT /log/import reads it. Both sides use these definitions so that the two cannot drift apart.

export const LOG_INI = 'log.ini';

/** Log files of the classroom server that travel in the ZIP (and only those: no debug or exception files). */
export const isExportedLogFile = (name: string): boolean =>
  name.includes('RPI-API-error') || name.includes('RPI-API-info');
/** What the central import accepts besides log.ini. */
export const isLogFileEntry = (name: string): boolean => name.includes('RPI-API');

export const LOG_COLUMNS = {
  studentprogress: {
    studentprogressid: 'id',
    studentid: 'string',
    ispass: 'bool',
    studentprogressreferenceid: 'string',
    starttime: 'datetime',
    endtime: 'datetime',
    progresstype: 'int',
    resultpercentage: 'number',
    marks: 'int',
    points: 'int',
    scores: 'int',
    fullpoints: 'int',
  },
  studentprogressquestions: {
    studentprogressquestionid: 'id',
    studentprogressid: 'string',
    tries: 'int',
    iscorrect: 'bool',
    referencequestionid: 'string',
  },
  rpiuseraccess: {
    rpiuseraccessid: 'id',
    userid: 'string',
    logintime: 'datetime',
    logouttime: 'datetime',
    timespent: 'decimal',
    status: 'int',
    ipaddress: 'string',
  },
  studentactives: {
    studentactiveid: 'id',
    studentid: 'string',
    referenceid: 'string',
    referencetype: 'int',
    created_at: 'datetime',
  },
  studentlearningsprogress: {
    studentlearningprogressid: 'id',
    studentid: 'string',
    userid: 'string',
    lessonlearningid: 'string',
    points: 'int',
    progress: 'int',
    progress_percentage: 'number',
    content_length: 'int',
    viewed: 'int',
    lastupdated: 'datetime',
  },
  studentgradesprogress: {
    studentgradeprogressid: 'id',
    studentid: 'string',
    curriculumid: 'string',
    gradeid: 'string',
    progress: 'number',
    points: 'int',
    scores: 'int',
    lastupdated: 'datetime',
    completed: 'bool',
  },
  studentlevelsprogress: {
    studentlevelprogressid: 'id',
    studentid: 'string',
    levelid: 'string',
    gradeid: 'string',
    curid: 'string',
    progress: 'number',
    points: 'int',
    scores: 'int',
    lastupdated: 'datetime',
    completed: 'bool',
    added_default_score: 'bool',
  },
  studentlessonsprogress: {
    studentlessonprogressid: 'id',
    studentid: 'string',
    lessonid: 'string',
    levelid: 'string',
    gradeid: 'string',
    curid: 'string',
    progress: 'number',
    points: 'int',
    scores: 'int',
    lastupdated: 'datetime',
    completed: 'bool',
    added_completed_scores: 'bool',
  },
  studentpoints: {
    studentpointid: 'id',
    studentid: 'string',
    levelid: 'string',
    lessonid: 'string',
    gradepoints: 'number',
    totalgradepoints: 'int',
    levelpoints: 'number',
    totallevelpoints: 'int',
    levelquizscores: 'int',
    lessonpoints: 'number',
    learningpoints: 'number',
    practicepoints: 'number',
    quizpoints: 'number',
    totallearningpoints: 'int',
    totalpracticepoints: 'int',
    totalquizpoints: 'int',
    scores: 'int',
    created_at: 'datetime',
  },
  studentappusages: {
    studentappusageid: 'id',
    schooluserid: 'string',
    time_spent: 'number',
    last_updated: 'datetime',
    created_at: 'datetime',
  },
} as const;

export type LogTable = keyof typeof LOG_COLUMNS;
export type StudentProgressRow = RowOf<typeof LOG_COLUMNS.studentprogress>;
export type StudentProgressQuestionRow = RowOf<typeof LOG_COLUMNS.studentprogressquestions>;
export type RpiUserAccessRow = RowOf<typeof LOG_COLUMNS.rpiuseraccess>;
export type StudentActiveRow = RowOf<typeof LOG_COLUMNS.studentactives>;
export type StudentLearningProgressRow = RowOf<typeof LOG_COLUMNS.studentlearningsprogress>;
export type StudentGradeProgressRow = RowOf<typeof LOG_COLUMNS.studentgradesprogress>;
export type StudentLevelProgressRow = RowOf<typeof LOG_COLUMNS.studentlevelsprogress>;
export type StudentLessonProgressRow = RowOf<typeof LOG_COLUMNS.studentlessonsprogress>;
export type StudentPointRow = RowOf<typeof LOG_COLUMNS.studentpoints>;
export type StudentAppUsageRow = RowOf<typeof LOG_COLUMNS.studentappusages>;
export type LogResultRow = StudentProgressRow & { studentprogressquestions?: StudentProgressQuestionRow[] };

/** The seven progress collections in the order the import writes them; key → table (note the plural trap). */
export const PROGRESS_COLLECTIONS = {
  studentactives: 'studentactives',
  studentlearningprogress: 'studentlearningsprogress',
  studentgradesprogress: 'studentgradesprogress',
  studentlevelsprogress: 'studentlevelsprogress',
  studentlessonsprogress: 'studentlessonsprogress',
  studentpoints: 'studentpoints',
  studentappusages: 'studentappusages',
} as const satisfies Record<string, LogTable>;

export type ProgressKey = keyof typeof PROGRESS_COLLECTIONS;
export const PROGRESS_KEYS = Object.keys(PROGRESS_COLLECTIONS) as ProgressKey[];

export interface ProgressRows {
  studentactives: StudentActiveRow[];
  studentlearningprogress: StudentLearningProgressRow[];
  studentgradesprogress: StudentGradeProgressRow[];
  studentlevelsprogress: StudentLevelProgressRow[];
  studentlessonsprogress: StudentLessonProgressRow[];
  studentpoints: StudentPointRow[];
  studentappusages: StudentAppUsageRow[];
}

/** `log.ini` as the spec shapes it; `[]` when the export yields nothing. */
export type LogDocument = { log: { result: LogResultRow[]; progress: ProgressRows; access: RpiUserAccessRow[] } } | [];

/** Primary key of each table (the first column of its spec). */
export const LOG_PRIMARY_KEYS: Record<LogTable, string> = Object.fromEntries(
  Object.entries(LOG_COLUMNS).map(([table, spec]) => [table, Object.keys(spec)[0]]),
) as Record<LogTable, string>;

/** Columns an import overwrites when the primary key already exists (contract A.4): never the key itself. */
export const LOG_MERGE_COLUMNS: Record<LogTable, readonly string[]> = {
  rpiuseraccess: ['userid', 'logintime', 'ipaddress', 'logouttime', 'timespent', 'status'],
  studentprogress: [
    'studentid',
    'ispass',
    'studentprogressreferenceid',
    'starttime',
    'endtime',
    'progresstype',
    'marks',
    'points',
    'resultpercentage',
    'fullpoints',
    'scores',
  ],
  studentprogressquestions: ['studentprogressid', 'tries', 'iscorrect', 'referencequestionid'],
  studentactives: ['studentid', 'referenceid', 'referencetype', 'created_at'],
  studentlearningsprogress: [
    'studentid',
    'content_length',
    'lastupdated',
    'lessonlearningid',
    'points',
    'progress',
    'progress_percentage',
    'userid',
    'viewed',
  ],
  studentgradesprogress: [
    'studentid',
    'completed',
    'curriculumid',
    'gradeid',
    'lastupdated',
    'points',
    'progress',
    'scores',
  ],
  studentlevelsprogress: [
    'studentid',
    'completed',
    'curid',
    'gradeid',
    'lastupdated',
    'levelid',
    'points',
    'progress',
    'scores',
  ],
  studentlessonsprogress: [
    'studentid',
    'completed',
    'curid',
    'gradeid',
    'lastupdated',
    'levelid',
    'points',
    'progress',
    'lessonid',
    'scores',
  ],
  studentpoints: [
    'studentid',
    'levelid',
    'lessonid',
    'totalgradepoints',
    'gradepoints',
    'totallevelpoints',
    'levelpoints',
    'lessonpoints',
    'levelquizscores',
    'learningpoints',
    'practicepoints',
    'quizpoints',
    'totallearningpoints',
    'totalpracticepoints',
    'totalquizpoints',
    'scores',
    'created_at',
  ],
  studentappusages: ['schooluserid', 'time_spent', 'last_updated', 'created_at'],
};

/** The column each collection's six-month export window filters on (spec "Export time window"). */
export const LOG_WINDOW_COLUMNS: Record<'studentprogress' | 'rpiuseraccess' | ProgressKey, string> = {
  studentprogress: 'starttime',
  rpiuseraccess: 'logintime',
  studentactives: 'created_at',
  studentpoints: 'created_at',
  studentappusages: 'created_at',
  studentlearningprogress: 'lastupdated',
  studentgradesprogress: 'lastupdated',
  studentlevelsprogress: 'lastupdated',
  studentlessonsprogress: 'lastupdated',
};

/** "Now minus six calendar months": rows strictly later than this are exported. */
export function logWindowStart(now: Date = new Date()): Date {
  const d = new Date(now.getTime());
  const day = d.getUTCDate();
  d.setUTCDate(1);
  d.setUTCMonth(d.getUTCMonth() - 6);
  const lastDay = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
  d.setUTCDate(Math.min(day, lastDay));
  return d;
}

// ---------------------------------------------------------------------------------------------
// Writing

type Rows<T> = Iterable<T> | AsyncIterable<T>;

/** Where the export's rows come from; each collection is pulled lazily, so a large log never sits in memory. */
export interface LogSource {
  result: Rows<LogResultRow | Record<string, unknown>>;
  progress: { [K in ProgressKey]: Rows<Record<string, unknown>> };
  access: Rows<Record<string, unknown>>;
}

function iteratorOf<T>(rows: Rows<T>): AsyncIterator<T> {
  if (Symbol.asyncIterator in rows) return (rows as AsyncIterable<T>)[Symbol.asyncIterator]();
  const it = (rows as Iterable<T>)[Symbol.iterator]();
  return { next: async () => it.next() };
}

function encodeResult(raw: Record<string, unknown>): string {
  const row = emitRow('studentprogress', LOG_COLUMNS.studentprogress, raw) as Record<string, unknown>;
  const questions = Array.isArray(raw.studentprogressquestions) ? raw.studentprogressquestions : [];
  // The spec: every result row carries its question rows, [] included (the original left the key out).
  row.studentprogressquestions = questions.map((q) =>
    emitRow('studentprogressquestions', LOG_COLUMNS.studentprogressquestions, q as Record<string, unknown>),
  );
  return JSON.stringify(row);
}

/**
 * `log.ini` as text chunks. Every collection is peeked first: when all are empty the document is `[]`
 * (decision 13); otherwise `{"log":{"result":[…],"progress":{…},"access":[…]}}` with rows normalised
 * to the wire's types.
 */
export async function* encodeLogIni(source: LogSource): AsyncGenerator<string> {
  const named: Array<[string, LogTable | 'result', AsyncIterator<Record<string, unknown>>]> = [
    ['result', 'result', iteratorOf(source.result as Rows<Record<string, unknown>>)],
    ...PROGRESS_KEYS.map(
      (k) =>
        [k, PROGRESS_COLLECTIONS[k], iteratorOf(source.progress[k])] as [
          string,
          LogTable,
          AsyncIterator<Record<string, unknown>>,
        ],
    ),
    ['access', 'rpiuseraccess', iteratorOf(source.access)],
  ];
  try {
    yield* encodeNamed(named);
  } finally {
    // An export cut short stops every source, not only the one being read.
    await Promise.all(named.map(([, , it]) => it.return?.()));
  }
}

async function* encodeNamed(
  named: Array<[string, LogTable | 'result', AsyncIterator<Record<string, unknown>>]>,
): AsyncGenerator<string> {
  const firsts = await Promise.all(named.map(([, , it]) => it.next()));
  if (firsts.every((f) => f.done)) {
    yield '[]';
    return;
  }
  let buffer = '';
  const FLUSH = 64 * 1024;
  const out = function* (s: string): Generator<string> {
    buffer += s;
    if (buffer.length >= FLUSH) {
      yield buffer;
      buffer = '';
    }
  };
  for (let i = 0; i < named.length; i += 1) {
    const [key, table, it] = named[i];
    const prefix =
      i === 0
        ? '{"log":{"result":['
        : key === 'access'
          ? '},"access":['
          : i === 1
            ? `,"progress":{"${key}":[`
            : `,"${key}":[`;
    yield* out(prefix);
    let next = firsts[i];
    let first = true;
    while (!next.done) {
      const text =
        table === 'result' ? encodeResult(next.value) : JSON.stringify(emitRow(table, LOG_COLUMNS[table], next.value));
      yield* out(first ? text : `,${text}`);
      first = false;
      next = await it.next();
    }
    yield* out(']');
  }
  yield* out('}}');
  if (buffer) yield buffer;
}

export interface LogZipFile {
  /** Name at the ZIP root (the log file's bare name). */
  name: string;
  /** Its content; open the file before the response starts so that an unreadable file can still become a 500. */
  stream: Readable;
}

/**
 * When the consumer goes away (a download cut short), the sources are destroyed too: open log files are
 * closed and the row generators return, instead of waiting forever for a reader.
 */
function releaseOnClose(out: PassThrough, sources: Readable[]): void {
  out.on('close', () => {
    for (const s of sources) if (!s.destroyed) s.destroy();
  });
}

/** The export ZIP, streamed: `log.ini` first, then the log files (deflate, no directories, no encryption). */
export function writeLogZip(source: LogSource, files: LogZipFile[] = []): Readable {
  return zipLogIni(encodeLogIni(source), files);
}

/**
 * Like writeLogZip, but resolves only once the first chunk of `log.ini` exists, which means every
 * collection has answered its first query: a failing database is still an error the caller can answer
 * with a status, before any byte of the ZIP has been sent. On failure the files are closed.
 */
export async function prepareLogZip(source: LogSource, files: LogZipFile[] = []): Promise<Readable> {
  const chunks = encodeLogIni(source);
  let first: IteratorResult<string>;
  try {
    first = await chunks.next();
  } catch (err) {
    for (const f of files) f.stream.destroy();
    throw err;
  }
  async function* replay(): AsyncGenerator<string> {
    try {
      if (!first.done) yield first.value;
      yield* chunks;
    } finally {
      await chunks.return(undefined);
    }
  }
  return zipLogIni(replay(), files);
}

function zipLogIni(chunks: AsyncGenerator<string>, files: LogZipFile[]): Readable {
  const zip = new yazl.ZipFile();
  const out = new PassThrough();
  const ini = Readable.from(chunks, { objectMode: false });
  ini.on('error', (err) => out.destroy(err));
  zip.addReadStream(ini, LOG_INI);
  for (const f of files) {
    f.stream.on('error', (err) => out.destroy(err));
    zip.addReadStream(f.stream, f.name);
  }
  zip.end();
  zip.outputStream.pipe(out);
  releaseOnClose(out, [ini, ...files.map((f) => f.stream)]);
  return out;
}

/** A whole log document as a ZIP in memory (tests, tools). */
export function writeLogZipFromDocument(
  doc: LogDocument,
  files: Array<{ name: string; content: string | Buffer }> = [],
): Readable {
  const source: LogSource = Array.isArray(doc)
    ? {
        result: [],
        access: [],
        progress: Object.fromEntries(PROGRESS_KEYS.map((k) => [k, []])) as unknown as LogSource['progress'],
      }
    : {
        result: doc.log.result,
        access: doc.log.access,
        progress: doc.log.progress as unknown as LogSource['progress'],
      };
  return writeLogZip(
    source,
    files.map((f) => ({ name: f.name, stream: Readable.from([Buffer.from(f.content)]) })),
  );
}

/** The server's log files alone (classroom `GET /export/system-log/files`). */
export function writeLogFilesZip(files: LogZipFile[]): Readable {
  const zip = new yazl.ZipFile();
  const out = new PassThrough();
  for (const f of files) {
    f.stream.on('error', (err) => out.destroy(err));
    zip.addReadStream(f.stream, f.name);
  }
  zip.end();
  zip.outputStream.pipe(out);
  releaseOnClose(out, files.map((f) => f.stream));
  return out;
}

/** What classroom `GET /export/report-data` packs into its `syncfile.ini`. */
export interface ReportDataSource {
  /** School user rows each carrying its `student` row (no password hashes). */
  students: Rows<Record<string, unknown>>;
  studentprogress: LogSource['progress'];
  studentresult: LogSource['result'];
  studentaccess: LogSource['access'];
}

async function* jsonArray(
  rows: Rows<Record<string, unknown>>,
  encode: (row: Record<string, unknown>) => string,
): AsyncGenerator<string> {
  let first = true;
  let buffer = '[';
  const it = iteratorOf(rows);
  try {
    for (let next = await it.next(); !next.done; next = await it.next()) {
      buffer += (first ? '' : ',') + encode(next.value);
      first = false;
      if (buffer.length >= 64 * 1024) {
        yield buffer;
        buffer = '';
      }
    }
  } finally {
    await it.return?.();
  }
  yield `${buffer}]`;
}

async function* encodeReportData(source: ReportDataSource): AsyncGenerator<string> {
  yield '{"students":';
  yield* jsonArray(source.students, (r) => JSON.stringify(r));
  yield ',"studentprogress":{';
  for (let i = 0; i < PROGRESS_KEYS.length; i += 1) {
    const key = PROGRESS_KEYS[i];
    const table = PROGRESS_COLLECTIONS[key];
    yield `${i ? ',' : ''}"${key}":`;
    yield* jsonArray(source.studentprogress[key], (r) => JSON.stringify(emitRow(table, LOG_COLUMNS[table], r)));
  }
  yield '},"studentresult":';
  yield* jsonArray(source.studentresult as Rows<Record<string, unknown>>, encodeResult);
  yield ',"studentaccess":';
  yield* jsonArray(source.studentaccess, (r) => JSON.stringify(emitRow('rpiuseraccess', LOG_COLUMNS.rpiuseraccess, r)));
  yield '}';
}

/** The report-data ZIP: one `syncfile.ini` entry, streamed. */
export function writeReportDataZip(source: ReportDataSource): Readable {
  const zip = new yazl.ZipFile();
  const out = new PassThrough();
  const ini = Readable.from(encodeReportData(source), { objectMode: false });
  ini.on('error', (err) => out.destroy(err));
  zip.addReadStream(ini, 'syncfile.ini');
  zip.end();
  zip.outputStream.pipe(out);
  releaseOnClose(out, [ini]);
  return out;
}
