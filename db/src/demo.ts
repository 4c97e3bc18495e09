import type { Knex } from 'knex';

/**
 * Demo content shared by both databases' demo seeds, with fixed ids so that the classroom server's
 * copy matches the central one as if it had been synced.
 */
export const DEMO = {
  countryid: 'd0000000-0000-4000-8000-000000000001',
  countryname: 'Demo Country',
  schoolid: 'd0000000-0000-4000-8000-000000000002',
  schoolname: 'Demo Primary School',
  standardid: 'd0000000-0000-4000-8000-000000000003',
  standardname: 'Class 1',
  subjectid: 'd0000000-0000-4000-8000-000000000004',
  subjectname: 'Mathematics',
  curriculumid: 'd0000000-0000-4000-8000-000000000005',
  curriculumname: 'Demo Mathematics',
  gradeid: 'd0000000-0000-4000-8000-000000000006',
  gradename: 'Grade 1',
  levelid: 'd0000000-0000-4000-8000-000000000007',
  levelname: 'Level 1',
  lessonid: 'd0000000-0000-4000-8000-000000000008',
  lessonname: 'Counting to ten',
} as const;

/** Inserts or refreshes the demo geography and curriculum skeleton; both schemas have these tables. */
export async function seedDemoContent(db: Knex): Promise<void> {
  const d = DEMO;
  const rows: Array<[string, string, Record<string, unknown>]> = [
    ['countries', 'countryid', { countryid: d.countryid, countryname: d.countryname }],
    ['subjects', 'subjectid', { subjectid: d.subjectid, subjectname: d.subjectname }],
    [
      'curriculums',
      'curriculumid',
      {
        curriculumid: d.curriculumid,
        curriculumname: d.curriculumname,
        subjectid: d.subjectid,
        curriculumstatus: true,
      },
    ],
    [
      'schools',
      'schoolid',
      {
        schoolid: d.schoolid,
        schoolname: d.schoolname,
        countryid: d.countryid,
        curriculums: JSON.stringify([d.curriculumid]),
      },
    ],
    [
      'standards',
      'standardid',
      { standardid: d.standardid, standardname: d.standardname, schoolid: d.schoolid, schoolname: d.schoolname },
    ],
    [
      'grades',
      'gradeid',
      { gradeid: d.gradeid, curriculumid: d.curriculumid, gradename: d.gradename, gradeorder: 1, gradestatus: true },
    ],
    [
      'levels',
      'levelid',
      { levelid: d.levelid, gradeid: d.gradeid, levelname: d.levelname, levelorder: 1, levelstatus: true },
    ],
    [
      'lessons',
      'lessonid',
      { lessonid: d.lessonid, levelid: d.levelid, lessonname: d.lessonname, lessonorder: 1, lessonstatus: true },
    ],
  ];
  await db.transaction(async (trx) => {
    for (const [table, key, row] of rows) {
      await trx(table).insert(row).onConflict(key).merge();
    }
  });
}
