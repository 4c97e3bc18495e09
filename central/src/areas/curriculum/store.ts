import { readRows, type Knex } from '@lms/db';
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
    const [student] = await readRows(
      db('students')
        .where((w) => {
          if (q.studentid) w.orWhere('studentid', q.studentid);
          if (q.standardid) w.orWhere('standard', q.standardid);
        })
        .select('curriculumids', 'curriculumid')
        .limit(1),
    );
    const ids: string[] = student ? (Array.isArray(student.curriculumids) && student.curriculumids.length ? student.curriculumids : [student.curriculumid]) : [];
    query.whereIn('curriculumid', ids);
  }
  if (q.schoolname) {
    const [school] = await readRows(db('schools').where({ schoolname: q.schoolname }).select('curriculums').limit(1));
    query.whereIn('curriculumid', Array.isArray(school?.curriculums) ? school.curriculums : []);
  }
  return readRows(query.select());
}

/** Curricula offered in a country; baseline curricula are assessments, not courses, and stay out. */
export async function curriculaOfCountry(db: Knex, countryid: string) {
  const [country] = await readRows(db('countries').where({ countryid, isdeleted: false }).select('countryid').limit(1));
  if (!country) throw httpError(400, 'Invalid country id');
  const rows = await readRows<{ curriculumname: string }>(
    db('curriculums as c')
      .join('curriculumcountry as cc', 'cc.curriculumid', 'c.curriculumid')
      .where({ 'cc.countryid': countryid, 'c.isdeleted': false })
      .orderBy('c.curriculumname')
      .select('c.*'),
  );
  return rows.filter((r) => !/baseline/i.test(r.curriculumname));
}
