import { Readable } from 'node:stream';
import yazl from 'yazl';
import { normaliseRow, type RowOf } from './columns';
import { ZipError } from './errors';
import { withZip, type ZipLimits, type ZipSource } from './reader';

// The packages central sends to a classroom server (contract sync-formats B and C): a ZIP with one JSON
// entry. Central's builders write them with these functions; the classroom imports read them with these.

export const SYNCFILE_INI = 'syncfile.ini';
export const STUDENTS_INI = 'students.ini';
export const TEACHERS_INI = 'teachers.ini';

/** Columns the classroom stores per content table (anything else in a central row is ignored). */
export const CONTENT_COLUMNS = {
  curriculums: {
    curriculumid: 'id',
    curriculumname: 'string',
    curriculumstatus: 'bool',
    curriculumdescription: 'string',
    isdeleted: 'bool',
    subjectid: 'string',
  },
  curriculumbaseline: {
    curriculumbaselineid: 'id',
    curriculumid: 'string',
    baselineid: 'string',
    baselinename: 'string',
    baselinetype: 'int',
    baselinestatus: 'bool',
    startdate: 'datetime',
    enddate: 'datetime',
    schoolid: 'json',
    isdeleted: 'bool',
  },
  baselinequestion: {
    baselinequestionid: 'id',
    curriculumbaselineid: 'string',
    questionid: 'string',
    baselinequestionstatus: 'bool',
    baselinequestionorder: 'int',
    isdeleted: 'bool',
  },
  grades: {
    gradeid: 'id',
    curriculumid: 'string',
    gradestatus: 'bool',
    gradename: 'string',
    gradedescription: 'string',
    gradeorder: 'int',
    isdeleted: 'bool',
    passing_points: 'int',
    points: 'int',
  },
  levels: {
    levelid: 'id',
    gradeid: 'string',
    levelname: 'string',
    leveldescription: 'string',
    isdeleted: 'bool',
    levelstatus: 'bool',
    levelorder: 'int',
    passing_points: 'int',
    quiz_points: 'int',
    points: 'int',
  },
  lessons: {
    lessonid: 'id',
    levelid: 'string',
    lessonname: 'string',
    lessondescription: 'string',
    practicecount: 'int',
    quizcount: 'int',
    lessonpasspercentage: 'int',
    lessonorder: 'int',
    lessonstatus: 'bool',
    isdeleted: 'bool',
    total_points: 'int',
    brick_points: 'int',
    passing_points: 'int',
    learning_points: 'int',
    quizzes_points: 'int',
    practices_points: 'int',
  },
  lessonlearnings: {
    lessonlearningid: 'id',
    lessonlearningname: 'string',
    lessonlearningdescription: 'string',
    lessonlearningstatus: 'bool',
    lessonid: 'string',
    documentid: 'string',
    lessonlearningorder: 'int',
    points: 'int',
  },
  lessonpractices: {
    lessonpracticeid: 'id',
    lessonid: 'string',
    lessonpracticeorder: 'int',
    lessonpracticestatus: 'bool',
    lessonpracticename: 'string',
    lessonpracticedescription: 'string',
    points: 'int',
  },
  lessonpracticequestions: {
    lessonpracticequestionid: 'id',
    lessonpracticeid: 'string',
    lessonpracticequestionstatus: 'bool',
    questionid: 'string',
    lessonpracticequestionorder: 'int',
  },
  lessonquizzes: {
    lessonquizid: 'id',
    lessonid: 'string',
    lessonquizorder: 'int',
    lessonquizname: 'string',
    lessonquizstatus: 'bool',
    lessonquizdescription: 'string',
    points: 'int',
  },
  lessonquizquestions: {
    lessonquizquestionid: 'id',
    lessonquizid: 'string',
    questionid: 'string',
    lessonquizquestionstatus: 'bool',
    lessonquizquestionorder: 'int',
  },
  levelquizquestions: {
    levelquizquestionid: 'id',
    levelid: 'string',
    questionid: 'string',
    levelquizquestionstatus: 'bool',
    levelquizquestionorder: 'int',
    lessonid: 'string',
  },
  questions: {
    questionid: 'id',
    questionheading: 'json',
    questionoptions: 'json',
    questiontext: 'string',
    questiondistractors: 'json',
    questionfile: 'json',
    questionfeedback: 'json',
    templatetypeid: 'int',
    isdeleted: 'bool',
    questionstatus: 'bool',
    questionidentifier: 'string',
    questiontags: 'json',
    lastupdated: 'datetime',
    questioncorrectvalue: 'int',
  },
  documents: {
    documentid: 'id',
    documenttypeid: 'int',
    documentname: 'string',
    documents3meta: 'json',
    isdeleted: 'bool',
    documenttags: 'json',
    lastupdated: 'datetime',
  },
  // Audit columns the classroom schema also has are mirrored, so that re-importing the same package changes nothing.
  standards: {
    standardid: 'id',
    standardname: 'string',
    schoolname: 'string',
    schoolid: 'string',
    isdeleted: 'bool',
    created_at: 'datetime',
    updated_at: 'datetime',
  },
  schools: {
    schoolid: 'id',
    schoolname: 'string',
    expectedcontribution: 'number',
    expectedusage: 'number',
    countryid: 'string',
    curriculums: 'json',
    isdeleted: 'bool',
    uitheme: 'string',
    brandingconfig: 'json',
  },
  countries: { countryid: 'id', countryname: 'string', expectedusage: 'number', isdeleted: 'bool' },
  lessonplans: {
    lessonplanid: 'id',
    lessonplanname: 'string',
    lessonplandescription: 'string',
    lessonplanstatus: 'bool',
    lessonid: 'string',
    documentid: 'string',
    lessonplanorder: 'int',
    points: 'int',
  },
  subjects: {
    subjectid: 'id',
    subjectname: 'string',
    subjectstatus: 'bool',
    subjectdescription: 'string',
    isdeleted: 'bool',
    created_at: 'datetime',
    created_by: 'string',
    updated_at: 'datetime',
    updated_by: 'string',
    deleted_at: 'datetime',
    deleted_by: 'string',
  },
} as const;

export type ContentTable = keyof typeof CONTENT_COLUMNS;

/**
 * The 19 keys of `syncfile.ini` (format 2, `GET /sync/content`), in the order central writes them, with their classroom
 * table.
 */
export const CONTENT_KEYS = {
  curriculums: 'curriculums',
  curriculumbaselines: 'curriculumbaseline',
  baselinequestion: 'baselinequestion',
  grades: 'grades',
  levels: 'levels',
  lessons: 'lessons',
  lessonlearnings: 'lessonlearnings',
  lessonpractices: 'lessonpractices',
  lessonpracticequestions: 'lessonpracticequestions',
  lessonquizzes: 'lessonquizzes',
  lessonquizquestions: 'lessonquizquestions',
  levelquizquestions: 'levelquizquestions',
  questions: 'questions',
  documents: 'documents',
  standards: 'standards',
  schools: 'schools',
  countries: 'countries',
  lessonplans: 'lessonplans',
  subjects: 'subjects',
} as const satisfies Record<string, ContentTable>;

export type ContentKey = keyof typeof CONTENT_KEYS;
export const CONTENT_KEY_LIST = Object.keys(CONTENT_KEYS) as ContentKey[];

export type ContentRow<T extends ContentTable> = Partial<RowOf<(typeof CONTENT_COLUMNS)[T]>>;
/** A parsed curriculum package: every key present, rows reduced to the classroom's columns and normalised. */
export type ContentPackage = { [K in ContentKey]: Array<ContentRow<(typeof CONTENT_KEYS)[K]>> };

export const ROSTER_COLUMNS = {
  schoolusers: {
    schooluserid: 'id',
    schoolusername: 'string',
    schooluserpasswordhash: 'string',
    schooluserrole: 'int',
    schooluserstatus: 'bool',
    schoolname: 'string',
    isdisabled: 'bool',
    isdeleted: 'bool',
  },
  students: {
    studentid: 'id',
    studentfirstname: 'string',
    studentlastname: 'string',
    familyname: 'string',
    mothername: 'string',
    fathername: 'string',
    contact: 'string',
    dateofbirth: 'datetime',
    genderid: 'int',
    wg_seeing: 'int',
    wg_hearing: 'int',
    wg_walking: 'int',
    wg_remembering: 'int',
    wg_selfcare: 'int',
    wg_communicating: 'int',
    wg_source: 'int',
    wg_collected_at: 'datetime',
    standard: 'string',
    schooltype: 'string',
    schoolname: 'string',
    city: 'string',
    country: 'string',
    state: 'string',
    dateofjoin: 'datetime',
    curriculumid: 'string',
    curriculumids: 'json',
    gradeid: 'string',
    startinglevelid: 'string',
    studentcurrentlevelid: 'string',
    studentcurrentlessonid: 'string',
    isactive: 'bool',
    schooluserid: 'string',
    profileimage: 'string',
    type: 'string',
    is_teacher_acc: 'bool',
  },
} as const;

/**
 * A learner's identity (spec, Teacher rule 8): names, parents, contact, birth date, photo and the
 * Washington Group answers. Central shows it only to staff who may read learners; its access record covers every
 * answer that carries it.
 */
export const LEARNER_IDENTITY_COLUMNS = [
  'studentfirstname',
  'studentlastname',
  'familyname',
  'mothername',
  'fathername',
  'contact',
  'dateofbirth',
  'profileimage',
  'wg_seeing',
  'wg_hearing',
  'wg_walking',
  'wg_remembering',
  'wg_selfcare',
  'wg_communicating',
  'wg_source',
  'wg_collected_at',
] as const;

/** The identity a box needs: the learner app's sign-in, drawer and reports show names and the photo. */
const BOX_USED_IDENTITY_COLUMNS = ['studentfirstname', 'studentlastname', 'familyname', 'profileimage'] as const;

/**
 * Learner columns a classroom box has no use for: the rest of the identity. They never leave central in a box's
 * roster, and a box stores them empty whatever it is sent. The keys stay in the roster, as null, because an
 * existing system's box imports them by name.
 */
export const BOX_WITHHELD_STUDENT_COLUMNS = LEARNER_IDENTITY_COLUMNS.filter(
  (c) => !(BOX_USED_IDENTITY_COLUMNS as readonly string[]).includes(c),
);

/** A learner row as a box may hold it: the withheld columns present and null. */
export function minimisedForBox<T extends Record<string, unknown>>(student: T): T {
  const out: Record<string, unknown> = { ...student };
  for (const c of BOX_WITHHELD_STUDENT_COLUMNS) out[c] = null;
  return out as T;
}

export type SchoolUserRow = Partial<RowOf<typeof ROSTER_COLUMNS.schoolusers>>;
export type StudentRow = Partial<RowOf<typeof ROSTER_COLUMNS.students>>;

/** Columns a roster import overwrites on an existing row (contract C). */
export const ROSTER_MERGE_COLUMNS = {
  schoolusers: [
    'schoolusername',
    'schooluserpasswordhash',
    'schooluserrole',
    'schooluserstatus',
    'schoolname',
    'isdisabled',
    'isdeleted',
  ],
  students: [
    'studentfirstname',
    'studentlastname',
    'familyname',
    'mothername',
    'fathername',
    'contact',
    'dateofbirth',
    'genderid',
    'wg_seeing',
    'wg_hearing',
    'wg_walking',
    'wg_remembering',
    'wg_selfcare',
    'wg_communicating',
    'wg_source',
    'wg_collected_at',
    'standard',
    'schooltype',
    'schoolname',
    'city',
    'country',
    'state',
    'dateofjoin',
    'curriculumid',
    'gradeid',
    'startinglevelid',
    'studentcurrentlevelid',
    'studentcurrentlessonid',
    'isactive',
    'schooluserid',
    'type',
    'is_teacher_acc',
    'curriculumids',
  ],
} as const;

/** Progress a roster may carry (optional; central does not send it in the reference snapshot). */
export const ROSTER_PROGRESS_KEYS = {
  studentprogress: 'studentprogress',
  studentlearningprogress: 'studentlearningsprogress',
  studentgradesprogress: 'studentgradesprogress',
  studentlevelsprogress: 'studentlevelsprogress',
  studentlessonsprogress: 'studentlessonsprogress',
} as const;
export type RosterProgressKey = keyof typeof ROSTER_PROGRESS_KEYS;

export interface StudentsPackage {
  studentusers: Array<{ schooluser: SchoolUserRow; student: StudentRow }>;
  /** Raw rows per key; the importer normalises them with the log row specs. */
  studentprogresses?: Partial<Record<RosterProgressKey, unknown[]>>;
}

// ---------------------------------------------------------------------------------------------
// Parsing

const invalid = (message: string) => new ZipError('bad_document', message);

function asObject(value: unknown, what: string): Record<string, unknown> {
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw invalid(`${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * A `syncfile.ini` document as the classroom applies it. All 19 keys must be arrays (so the 16-key
 * `GET /sync` format is refused, as the original refused it); rows keep only the classroom's columns.
 */
export function parseContentPackage(json: unknown): ContentPackage {
  const doc = asObject(json, 'syncfile.ini');
  const out = {} as Record<ContentKey, unknown[]>;
  for (const key of CONTENT_KEY_LIST) {
    const rows = doc[key];
    if (!Array.isArray(rows)) throw invalid(`syncfile.ini: "${key}" must be an array`);
    const table = CONTENT_KEYS[key];
    const spec = CONTENT_COLUMNS[table];
    out[key] = rows.map((r) => {
      const row = normaliseRow(table, spec, r) as Record<string, unknown>;
      // Defaults for not-null columns an older central may send as null.
      for (const [column, kind] of Object.entries(spec)) {
        if (row[column] === null && kind === 'bool' && (column === 'isdeleted' || column.endsWith('status')))
          delete row[column];
      }
      return row;
    });
  }
  return out as ContentPackage;
}

/**
 * `students.ini`: `{studentusers: [schooluser + student], studentprogresses?}`; an item without `student` is refused.
 */
export function parseStudentsPackage(json: unknown): StudentsPackage {
  const doc = asObject(json, 'students.ini');
  if (!Array.isArray(doc.studentusers)) throw invalid('students.ini: "studentusers" must be an array');
  const studentusers = doc.studentusers.map((item, i) => {
    const o = asObject(item, `studentusers[${i}]`);
    if (!o.student) throw invalid(`studentusers[${i}]: "student" is required`);
    const schooluser = normaliseRow('schoolusers', ROSTER_COLUMNS.schoolusers, o);
    const student = normaliseRow('students', ROSTER_COLUMNS.students, o.student);
    // The student row belongs to the school user it is nested in.
    student.schooluserid = schooluser.schooluserid;
    return { schooluser, student };
  });
  const result: StudentsPackage = { studentusers };
  if (doc.studentprogresses !== undefined && doc.studentprogresses !== null) {
    const p = asObject(doc.studentprogresses, 'students.ini: "studentprogresses"');
    const progress: Partial<Record<RosterProgressKey, unknown[]>> = {};
    for (const key of Object.keys(ROSTER_PROGRESS_KEYS) as RosterProgressKey[]) {
      if (p[key] === undefined || p[key] === null) continue;
      if (!Array.isArray(p[key])) throw invalid(`students.ini: "studentprogresses.${key}" must be an array`);
      progress[key] = p[key] as unknown[];
    }
    result.studentprogresses = progress;
  }
  return result;
}

/** `teachers.ini`: a bare array of school user rows. */
export function parseTeachersPackage(json: unknown): SchoolUserRow[] {
  if (!Array.isArray(json)) throw invalid('teachers.ini must be a JSON array');
  return json.map((r) => normaliseRow('schoolusers', ROSTER_COLUMNS.schoolusers, r));
}

/**
 * The JSON of a package's FIRST entry, whatever its name (the classroom imports read it that way).
 * No entry, an unreadable entry or bad JSON: a ZipError.
 */
export async function readPackageJson(
  source: ZipSource,
  limits: Partial<ZipLimits> = {},
): Promise<{ name: string; json: unknown }> {
  return withZip(source, limits, async (zip) => {
    for await (const entry of zip.entries()) {
      if (entry.isDirectory) continue;
      const text = await entry.readText();
      try {
        return { name: entry.name, json: JSON.parse(text) as unknown };
      } catch {
        throw invalid(`${entry.name} is not valid JSON`);
      }
    }
    throw new ZipError('empty', 'Invalid file (Zip-file is empty)');
  });
}

// ---------------------------------------------------------------------------------------------
// Writing

/** Rows of one key: an array, or an async iterable so that a writer can page rows out of a database. */
export type RowSource = unknown[] | AsyncIterable<unknown>;

const isRowSource = (v: unknown): v is RowSource =>
  Array.isArray(v) || (!!v && typeof (v as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function');

/**
 * JSON of a document whose top-level values are arrays, one row at a time (a package of many questions never becomes
 * one string).
 */
async function* encodeArrays(doc: Record<string, RowSource>, keys: readonly string[]): AsyncGenerator<string> {
  let buffer = '';
  for (let k = 0; k < keys.length; k += 1) {
    buffer += `${k === 0 ? '{' : ','}${JSON.stringify(keys[k])}:[`;
    let i = 0;
    for await (const row of doc[keys[k]]) {
      buffer += (i ? ',' : '') + JSON.stringify(row);
      i += 1;
      if (buffer.length >= 64 * 1024) {
        yield buffer;
        buffer = '';
      }
    }
    buffer += ']';
  }
  yield `${buffer}}`;
}

// A fixed entry time (the DOS epoch cannot go lower than 1980) keeps a package byte-identical for the same data.
const ENTRY_MTIME = new Date(Date.UTC(2000, 0, 1));

/** A ZIP with one entry whose content is streamed in. */
export function singleEntryZip(name: string, content: Readable): Readable {
  const zip = new yazl.ZipFile();
  zip.addReadStream(content, name, { mtime: ENTRY_MTIME });
  zip.end();
  return zip.outputStream as Readable;
}

/**
 * The curriculum package (`syncfile.ini`) with the 19 keys in central's order. Rows are written as given
 * (central sends its full rows, audit columns included; the classroom keeps the columns it knows).
 */
export function writeContentZip(content: Record<ContentKey, RowSource>): Readable {
  for (const key of CONTENT_KEY_LIST) {
    if (!isRowSource(content[key])) throw new Error(`writeContentZip: "${key}" must be an array or an async iterable`);
  }
  return singleEntryZip(SYNCFILE_INI, Readable.from(encodeArrays(content, CONTENT_KEY_LIST)));
}

/** A roster of learners: `students.ini` with each school user row carrying its `student` row. */
export function writeStudentsZip(doc: {
  studentusers: Array<Record<string, unknown> & { student: Record<string, unknown> }>;
  studentprogresses?: Record<string, unknown[]>;
}): Readable {
  return singleEntryZip(STUDENTS_INI, Readable.from([Buffer.from(JSON.stringify(doc))]));
}

/** A roster of teachers: `teachers.ini`, a bare array of school user rows. */
export function writeTeachersZip(rows: Array<Record<string, unknown>>): Readable {
  return singleEntryZip(TEACHERS_INI, Readable.from([Buffer.from(JSON.stringify(rows))]));
}

/** Collects a stream (a ZIP written above) into one buffer, for an HTTP client that needs the bytes. */
export async function streamToBuffer(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(parts);
}
