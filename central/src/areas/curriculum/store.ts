import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';

const optional = z.string().optional();

export const allCurriculaQuery = z.looseObject({ cur: optional, curid: optional, studentid: optional, standardid: optional, schoolname: optional });
export const countryParams = z.object({ countryid: z.string().uuid({ error: 'must be a valid GUID' }) });

/** Active curricula for the filter dropdowns, narrowed to a learner's, a class's or a school's curricula when asked. */
export async function allCurricula(db: Knex, q: z.infer<typeof allCurriculaQuery>) {
  const query = db('curriculums').where({ isdeleted: false, curriculumstatus: true }).orderBy('curriculumname');
  if (q.cur) query.where('curriculumname', 'like', `%${q.cur}%`);
  if (q.curid) query.where('curriculumid', q.curid);
  if (q.studentid || q.standardid) {
    const student = await db('students')
      .where((w) => {
        if (q.studentid) w.orWhere('studentid', q.studentid);
        if (q.standardid) w.orWhere('standard', q.standardid);
      })
      .first('curriculumids', 'curriculumid');
    const ids: string[] = student ? (Array.isArray(student.curriculumids) && student.curriculumids.length ? student.curriculumids : [student.curriculumid]) : [];
    query.whereIn('curriculumid', ids);
  }
  if (q.schoolname) {
    const school = await db('schools').where({ schoolname: q.schoolname }).first('curriculums');
    query.whereIn('curriculumid', Array.isArray(school?.curriculums) ? school.curriculums : []);
  }
  return query.select();
}

/** Curricula offered in a country; baseline curricula are assessments, not courses, and stay out. */
export async function curriculaOfCountry(db: Knex, countryid: string) {
  const country = await db('countries').where({ countryid, isdeleted: false }).first('countryid');
  if (!country) throw httpError(400, 'Invalid country id');
  const rows = await db('curriculums as c')
    .join('curriculumcountry as cc', 'cc.curriculumid', 'c.curriculumid')
    .where({ 'cc.countryid': countryid, 'c.isdeleted': false })
    .orderBy('c.curriculumname')
    .select('c.*');
  return rows.filter((r: { curriculumname: string }) => !/baseline/i.test(r.curriculumname));
}
