import type { Response } from 'express';
import { streamRows, type Knex } from '@lms/db';
import { sendCsv } from '../../http/csv';
import { filterMap, pageOf, type MultiPaging } from '../../http/paging';
import {
  ATTACH_BATCH, classReport, lastCompletedReport, oneLearnerReport, studentStatusQuery, studentStatusShape,
  type LearnerRows, type ReportCtx, type Unit,
} from './learners';
import { dateOf, num } from './values';

// The CSV downloads (contract §16.4): every file is `report.csv`, its rows streamed from the report's own
// query as they are read (a class or a country of learners never sits in memory), with the contract's
// column orders and missing values: school and class `N/A`, user id empty, marks and total questions
// `N/A` without an attempt, percentage `0%`, quiz score 0. A report with no learner chosen (decision 25)
// is the header line alone.

export const REPORT_CSV = 'report.csv';

type Row = Record<string, unknown>;

type Streamed = Pick<LearnerRows, 'query' | 'shape' | 'attach'>;

async function* mapped(db: Knex, r: Streamed, csv: (row: Row) => Row): AsyncGenerator<Row> {
  if (!r.query) return;
  if (!r.attach) {
    for await (const row of streamRows<Row>(db, r.query)) yield csv(r.shape(row));
    return;
  }
  // The learners stream; what is ranked per learner is read a batch of learners at a time, so that the file
  // flows at a steady rate whatever the number of learners, with one batch in memory.
  let batch: Row[] = [];
  const flush = async function* (): AsyncGenerator<Row> {
    await r.attach!(batch);
    for (const row of batch) yield csv(r.shape(row));
    batch = [];
  };
  for await (const row of streamRows<Row>(db, r.query)) {
    batch.push(row);
    if (batch.length >= ATTACH_BATCH) yield* flush();
  }
  if (batch.length) yield* flush();
}

/** Pass at 80 % and above, else Redo; no attempt: N/A. */
const resultOf = (attempt: Row | undefined) =>
  attempt ? (num(attempt.resultpercentage) >= 80 ? 'Pass' : 'Redo') : 'N/A';
const text = (v: unknown, missing: string) => (v === null || v === undefined ? missing : String(v));

/** The score columns shared by the quiz-score files. */
function scoreCells(attempt: Row | undefined): Row {
  return {
    marks: attempt ? text(attempt.marks, '') : 'N/A',
    totalquestions: attempt ? text(attempt.totalquestions, '0') : 'N/A',
    percentage: `${attempt ? num(attempt.resultpercentage) : 0}%`,
    quizscore: attempt ? num(attempt.scores) : 0,
    result: resultOf(attempt),
  };
}

export const QUIZ_COLUMNS = [
  'curriculum',
  'school',
  'userid',
  'class',
  'course',
  'level',
  'lesson',
  'marks',
  'totalquestions',
  'percentage',
  'quizscore',
  'result',
];
export const LEVEL_QUIZ_COLUMNS = [
  'curriculum',
  'school',
  'userid',
  'class',
  'course',
  'level',
  'marks',
  'totalquestions',
  'percentage',
  'quizscore',
  'result',
];
export const CURRENT_LEVEL_COLUMNS = [
  'curriculum',
  'country',
  'school',
  'userid',
  'class',
  'course',
  'level',
  'lesson',
  'score',
  'result',
];

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A quiz-score row as a CSV line: a per-lesson (per-level) row of one learner, a per-learner row of a
 * class, or a row of the classroom's own report; each names the curriculum, learner and content in its
 * own place, so every place is looked at.
 */
export function quizCsvRow(withLesson: boolean) {
  return (r: Obj): Row => {
    const grade = r.lesson?.level?.grade ?? r.level?.grade ?? r.grade;
    const attempt = r.laststudentprogress as Obj | undefined;
    return {
      curriculum: text(grade?.curriculum?.curriculumname ?? r.curriculum?.curriculumname, 'N/A'),
      school: text(r.student?.schoolname ?? r.schoolname ?? r.school?.schoolname, 'N/A'),
      userid: text(r.student?.schooluser?.schoolusername ?? r.schooluser?.schoolusername, ''),
      class: text(r.student?.class?.standardname ?? r.class?.standardname, 'N/A'),
      course: text(grade?.gradename, 'N/A'),
      level: text(r.lesson?.level?.levelname ?? r.level?.levelname ?? r.levelname, 'N/A'),
      ...(withLesson ? { lesson: text(r.lesson?.lessonname ?? r.lessonname, 'N/A') } : {}),
      ...scoreCells(attempt ? { totalquestions: r.totalquestions, ...attempt } : undefined),
    };
  };
}

/** A row of /studentlastcompletedquiz as a CSV line. */
export function currentLevelCsvRow(r: Obj): Row {
  const last = r.laststudentprogress as Obj | undefined;
  const lesson = last?.lessonquiz?.lesson;
  return {
    curriculum: text(r.curriculum?.curriculumname, 'N/A'),
    country: text(r.school?.countries?.countryname, 'N/A'),
    school: text(r.school?.schoolname, 'N/A'),
    userid: text(r.schooluser?.schoolusername ?? r.student?.schooluser?.schoolusername, ''),
    class: text(r.class?.standardname, 'N/A'),
    course: text(lesson?.level?.grade?.gradename ?? (last ? r.grade?.gradename : undefined), 'N/A'),
    level: text(lesson?.level?.levelname ?? (last ? r.level?.levelname : undefined), 'N/A'),
    lesson: text(lesson?.lessonname ?? (last ? r.lesson?.lessonname : undefined), 'N/A'),
    score: last ? `${num(last.resultpercentage)} %` : 'N/A',
    result: resultOf(last),
  };
}

export async function oneLearnerCsv(res: Response, c: ReportCtx, body: MultiPaging, unit: Unit): Promise<void> {
  const r = await oneLearnerReport(c, body, unit);
  const columns = unit === 'lesson' ? QUIZ_COLUMNS : LEVEL_QUIZ_COLUMNS;
  await sendCsv(res, REPORT_CSV, columns, mapped(c.db, r, quizCsvRow(unit === 'lesson')));
}

export async function classCsv(res: Response, c: ReportCtx, body: MultiPaging, unit: Unit): Promise<void> {
  const r = await classReport(c, body, unit);
  const columns = unit === 'lesson' ? QUIZ_COLUMNS : LEVEL_QUIZ_COLUMNS;
  await sendCsv(res, REPORT_CSV, columns, mapped(c.db, r, quizCsvRow(unit === 'lesson')));
}

export async function currentLevelCsv(res: Response, c: ReportCtx, body: MultiPaging): Promise<void> {
  const r = lastCompletedReport(c, body);
  await sendCsv(res, REPORT_CSV, CURRENT_LEVEL_COLUMNS, mapped(c.db, r, currentLevelCsvRow));
}

// ---- /studentstatus/download: the original's odd layout ------------------------------------------------

/** `Start Date`, `End Date`, then six keys of 0 to 5 spaces (the original converter's column keys). */
export const ACTIVITY_COLUMNS = ['Start Date', 'End Date', '', ' ', '  ', '   ', '    ', '     '];
const ACTIVITY_TITLES = [
  'curriculum',
  'country',
  'schoolname',
  'userid',
  'class',
  'active',
  'totalusages',
  'lastlogin',
];

const lineOf = (cells: unknown[]): Row => Object.fromEntries(ACTIVITY_COLUMNS.map((k, i) => [k, cells[i] ?? '']));
const localDate = (d: Date) => d.toLocaleDateString('en-US', { timeZone: 'UTC' });
// Newer ICU puts a narrow no-break space before AM/PM; spreadsheets parse the plain space the original wrote.
const localTime = (d: Date) => d.toLocaleTimeString('en-US', { timeZone: 'UTC' }).replace(/\u202f/g, ' ');

/** The activity rows in the file's layout: the period, a blank line, the titles, one line per learner. */
export async function* activityLines(
  learners: AsyncIterable<Row>,
  start: Date | undefined,
  end: Date | undefined,
): AsyncGenerator<Row> {
  yield lineOf([start ? localDate(start) : 'N/A', end ? localDate(end) : 'N/A']);
  yield lineOf([]);
  yield lineOf(ACTIVITY_TITLES);
  for await (const r of learners as AsyncIterable<Obj>) {
    const last = r.lastLogin ? new Date(r.lastLogin as string) : undefined;
    yield lineOf([
      text(r.curriculum?.curriculumname, ''),
      text(r.school?.countries?.countryname, 'N/A'),
      text(r.schoolname, ''),
      text(r.schooluser?.schoolusername, 'N/A'),
      text(r.class?.standardname, 'N/A'),
      r.status ? 'true' : 'false',
      num(r.totalusages),
      last ? `${localDate(last)} ${localTime(last)}` : '',
    ]);
  }
}

/**
 * /studentstatus/download: all learners matching the filters; without any filter but the school (the
 * page as first opened), only the page asked for, as the original did.
 */
export async function activityCsv(res: Response, c: ReportCtx, body: MultiPaging): Promise<void> {
  const f = filterMap(body);
  const start = dateOf(f.get('startDate')?.[0], 'startDate');
  const end = dateOf(f.get('endDate')?.[0], 'endDate');
  const q = studentStatusQuery(c, f, { start, end });
  if (![...f.keys()].some((k) => k !== 'schoolid')) {
    const { limit, offset } = pageOf(body);
    q.limit(limit).offset(offset);
  }
  const shape = studentStatusShape();
  async function* learners(): AsyncGenerator<Row> {
    for await (const row of streamRows<Row>(c.db, q)) yield shape(row);
  }
  await sendCsv(res, REPORT_CSV, ACTIVITY_COLUMNS, activityLines(learners(), start, end));
}
