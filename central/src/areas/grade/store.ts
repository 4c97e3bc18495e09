import { readRows, type Knex } from '@lms/db';
import { z } from 'zod';

export const curriculumParams = z.object({ curriculumid: z.string().uuid({ error: 'must be a valid GUID' }) });

/** `GradeAll` rows: the grade with its curriculum's name. */
export async function gradesOfCurriculum(db: Knex, curriculumid: string) {
  return readRows(
    db('grades as g')
      .join('curriculums as c', 'c.curriculumid', 'g.curriculumid')
      .where({ 'g.curriculumid': curriculumid, 'g.isdeleted': false })
      .orderBy('g.gradeorder')
      .select(
        'g.curriculumid', 'g.gradedescription', 'g.isdeleted', 'g.gradeid', 'g.gradename', 'g.gradeorder', 'g.gradestatus',
        'c.curriculumname', 'g.passing_points', 'g.points',
      ),
  );
}
