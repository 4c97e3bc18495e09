import { z } from 'zod';
import { anyUser, httpError } from '@lms/shared';
import { route } from '../../http/route';
import type { ClassroomRoute } from '../../http/types';
import { idParams, learnerOf, queryText } from '../common';
import { gradesOfCurriculum, gradesProgress, searchGrades, totalGradeProgress } from './store';

const allQuery = z.object({ grade: queryText, curid: queryText, standardid: queryText, schoolname: queryText });
const curriculumParams = idParams('curriculumid', 'Invalid Curriculum id');

export const gradeRoutes: ClassroomRoute[] = [
  route('GET', '/grade/all', anyUser(), { query: allQuery },
    ({ db, query }) => searchGrades(db, query), { summary: 'Grades by name, curriculum or class' }),
  route('GET', '/grade/curriculum/:curriculumid', anyUser(), { params: curriculumParams },
    async ({ db, caller, params }) => {
    return gradesOfCurriculum(db, params.curriculumid, (await learnerOf(db, caller))?.studentid);
  },
    { summary: "A curriculum's grades with the caller's progress" }),
  route('GET', '/grade/progress/curriculum/:curriculumid', anyUser(), { params: curriculumParams },
    async ({ db, caller, params }) => {
    return gradesProgress(db, params.curriculumid, (await learnerOf(db, caller))?.studentid);
  },
    { summary: "The caller's progress per grade of a curriculum" }),
  route('GET', '/grade/totalgradeprogress/:gradeid', anyUser(), { params: idParams('gradeid', 'Invalid grade id') },
    async ({ db, caller, params }) => {
    const grade = await db('grades')
      .where({ gradeid: params.gradeid, isdeleted: false })
      .first('gradeid', 'curriculumid');
    if (!grade) throw httpError(400, 'Invalid grade id');
    return totalGradeProgress(db, grade, (await learnerOf(db, caller))?.studentid);
  },
    { summary: "The caller's grade and curriculum progress; grants the grade's reward at 100 %" }),
];
