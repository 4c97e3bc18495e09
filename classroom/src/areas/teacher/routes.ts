import { z } from 'zod';
import { staff } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { userOf } from '../../auth/guards';
import { idParams, queryText, schoolScopeOf, schoolnameOf } from '../common';
import { filtersOf, first, page, pagingBody } from '../common/paging';
import { PROGRESS } from '../result/progress';
import {
  attemptsWithContent, classScoreSheet, lastPassedQuiz, standardsLike, standardsOf, statsOf, studentStats, studentsOf,
  teacherProfile, visibleStudent,
} from './store';

const studentParams = idParams('studentid', 'Invalid Student ID');

/** Staff of every role see their own school's learners only (schoolScopeOf). */
const scopeOf = schoolScopeOf;

const attemptKinds = [['practice', PROGRESS.practice], ['quiz', PROGRESS.quiz], ['level', PROGRESS.levelquiz]] as const;

export const teacherRoutes: ClassroomRoute[] = [
  route('GET', '/teacher/standards', staff(), {}, async ({ db, caller }) => {
    return standardsOf(db, await schoolnameOf(db, caller));
  }, { summary: "Classes among the learners of the caller's school" }),
  route('GET', '/teacher/stats', staff(), {}, async ({ db, caller }) => {
    return statsOf(db, await schoolnameOf(db, caller));
  }, { summary: "Learner count by gender in the caller's school" }),
  route('GET', '/teacher/students', staff(), {}, async ({ db, caller }) => {
    return studentsOf(db, await schoolnameOf(db, caller));
  }, { summary: "The learners of the caller's school" }),
  route('GET', '/teacher/profile', staff(), { query: z.object({ standard: queryText }) },
    ({ db, caller, query }) =>
    teacherProfile(db, userOf(caller).schooluserid, query.standard),
    { summary: "The teacher's last sign-ins, class size and average usage" }),
  route('GET', '/teacher/stats/student/:studentid', staff(), { params: studentParams },
    async ({ db, caller, params }) => {
    return studentStats(db, await visibleStudent(db, params.studentid, await scopeOf(db, caller)));
  },
    { summary: "One learner's last sign-in and current lesson, level and grade" }),
  ...attemptKinds.map(([name, type]) =>
    route('GET', `/teacher/stats/student/:studentid/${name}`, staff(), { params: studentParams },
      async ({ db, caller, params }) => {
      const student = await visibleStudent(db, params.studentid, await scopeOf(db, caller));
      return attemptsWithContent(db, student.studentid, type);
    },
      {
        summary: `One learner's ${name === 'level' ? 'level-quiz' : name} attempts with their place in the curriculum`,
      })),
  route('GET', '/teacher/standard/all', staff(), { query: z.object({ standard: queryText }) },
    async ({ db, caller, query }) => {
    return standardsLike(db, await schoolnameOf(db, caller), query.standard);
  },
    { summary: "Classes of the caller's school by name" }),
  route('POST', '/teacher/studentprogress', staff(), { body: pagingBody },
    async ({ db, caller, body }) => {
    const f = filtersOf(body);
    const rows = await classScoreSheet(db, await schoolnameOf(db, caller), {
      standard: first(f, 'standard'), lessonid: first(f, 'lessonid'),
    });
    return page(rows, body);
  },
    { summary: 'Class score sheet for one lesson (filters: standard, lessonid)' }),
  route('GET', '/teacher/studentinfo', staff(),
    { query: z.object({ studentid: z.string().uuid({ message: 'Invalid Student ID' }) }) },
    async ({ db, caller, query }) => {
    const student = await visibleStudent(db, query.studentid, await scopeOf(db, caller));
    return (await lastPassedQuiz(db, student.studentid)) ?? null;
  },
    { summary: "A learner's last completed lesson quiz" }),
];
