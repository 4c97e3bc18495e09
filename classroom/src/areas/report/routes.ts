import { z } from 'zod';
import type { Knex } from '@lms/db';
import { syncKeyOrStaff } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomCtx, ClassroomRoute } from '../../http/types';
import { queryText, schoolScopeOf } from '../common';
import { filtersOf, page, pagingBody } from '../common/paging';
import { PROGRESS } from '../result/progress';
import {
  aggregateRows,
  byClass,
  lastCompletedQuiz,
  latestAttempts,
  onlineCount,
  studentStatus,
  type Filters,
} from './store';

/**
 * Reports are for staff and for the central API (decision #9). The sync key sees every school on this server;
 * staff see their own school only (schoolScopeOf).
 */
const scopeOf = schoolScopeOf;

/** What a paged report reads (input is declared with the routes below). */
type Ctx = ClassroomCtx<typeof input>;

type Rows = (db: Knex, f: Filters, school: string | undefined) => Promise<Array<Record<string, unknown>>>;

function paged(rows: Rows): (ctx: Ctx) => Promise<unknown> {
  return async ({ db, caller, body }) => {
    return page(await rows(db, filtersOf(body), await scopeOf(db, caller)), body);
  };
}

function download(rows: Rows): (ctx: Ctx) => Promise<unknown> {
  return async ({ db, caller, body }) => {
    return rows(db, filtersOf(body), await scopeOf(db, caller));
  };
}

const lessonQuizzes: Rows = (db, f, s) =>
  latestAttempts(db, f, PROGRESS.quiz, ['studentid', 'curriculumid', 'standard'], s);
const lessonQuizzesByClass: Rows = async (db, f, s) =>
  byClass(await latestAttempts(db, f, PROGRESS.quiz, ['standard'], s));
const levelQuizzes: Rows = (db, f, s) => latestAttempts(db, f, PROGRESS.levelquiz, ['studentid', 'curriculumid'], s);
const levelQuizzesByClass: Rows = async (db, f, s) =>
  byClass(await latestAttempts(db, f, PROGRESS.levelquiz, ['standard'], s));
const lastCompleted: Rows = (db, f, s) => lastCompletedQuiz(db, f, s);
const status: Rows = (db, f, s) => studentStatus(db, f, s);

function progressReport(kind: 'grade' | 'level' | 'lesson', withStudent: boolean): (ctx: Ctx) => Promise<unknown> {
  return async ({ db, caller, body }) => {
    const { rows, student } = await aggregateRows(db, filtersOf(body), kind, await scopeOf(db, caller));
    const out: Record<string, unknown> = page(rows, body);
    return withStudent ? { ...out, student } : out;
  };
}

const input = { body: pagingBody };
const gate = syncKeyOrStaff;

export const reportRoutes: ClassroomRoute[] = [
  route('POST', '/report/studentprogress', gate(), input,
    paged(lessonQuizzes), { summary: 'Lesson-quiz results per learner (paged)' }),
  route('POST', '/report/studentprogress/class', gate(), input,
    paged(lessonQuizzesByClass), { summary: 'Lesson-quiz results per class (paged)' }),
  route('POST', '/report/studentlastcompletedquiz', gate(), input,
    paged(lastCompleted), { summary: 'Last completed lesson quiz per learner (paged)' }),
  route('POST', '/report/studentlevelquiz', gate(), input,
    paged(levelQuizzes), { summary: 'Level-quiz results per learner (paged)' }),
  route('POST', '/report/studentlevelquiz/class', gate(), input,
    paged(levelQuizzesByClass), { summary: 'Level-quiz results per class (paged)' }),
  route('POST', '/report/studentstatus', gate(), input,
    paged(status), { summary: 'Sign-in status and usage per learner (paged)' }),
  route('POST', '/report/student-grade-progress', gate(), input,
    progressReport('grade', false), { summary: 'Grade progress of learners (paged)' }),
  route('POST', '/report/student-level-progress', gate(), input,
    progressReport('level', true), { summary: 'Level progress of a learner (paged)' }),
  route('POST', '/report/student-lesson-progress', gate(), input,
    progressReport('lesson', true), { summary: 'Lesson progress of a learner (paged)' }),
  route('GET', '/report/offlineonline', gate(), { query: z.object({ schoolname: queryText, countryid: queryText }) },
    async ({ db, caller, query }) => {
    const pick = (v: string | undefined) => (v && v !== 'all' ? v : undefined);
    return onlineCount(db, pick(query.schoolname), pick(query.countryid), await scopeOf(db, caller));
  },
    { summary: 'Number of active learners' }),
  route('POST', '/report/studentprogress/download', gate(), input,
    download(lessonQuizzes), { summary: 'Lesson-quiz results per learner (all rows)' }),
  route('POST', '/report/studentlastcompletedquiz/download', gate(), input,
    download(lastCompleted), { summary: 'Last completed lesson quiz per learner (all rows)' }),
  route('POST', '/report/studentlevelquiz/download', gate(), input,
    download(levelQuizzes), { summary: 'Level-quiz results per learner (all rows)' }),
  route('POST', '/report/studentlevelquiz/class/download', gate(), input,
    download(levelQuizzesByClass), { summary: 'Level-quiz results per class (all rows)' }),
  route('POST', '/report/studentstatus/download', gate(), input,
    download(status), { summary: 'Sign-in status and usage per learner (all rows)' }),
  route('POST', '/report/studentprogress/class/download', gate(), input,
    download(lessonQuizzesByClass), { summary: 'Lesson-quiz results per class (all rows)' }),
];
