import crypto from 'node:crypto';
import { whereContains, type Knex } from '@lms/db';
import { num, round2 } from '../common';
import { curriculumIdsOfLearner, curriculumProgress } from '../curriculum/store';
import { gradeFullPoints } from '../result/progress';

export async function searchGrades(
  db: Knex,
  q: { grade?: string; curid?: string; standardid?: string; schoolname?: string },
) {
  const query = whereContains(db('grades').where('isdeleted', false), 'gradename', q.grade);
  if (q.curid) query.andWhere('curriculumid', q.curid);
  else if (q.standardid) {
    const ids = (await curriculumIdsOfLearner(db, { standardid: q.standardid, schoolname: q.schoolname })) ?? [];
    query.whereIn('curriculumid', ids);
  }
  return query.orderBy('gradeorder');
}

const activeGrades = (db: Knex, curriculumid: string) =>
  db('grades').where({ curriculumid, isdeleted: false, gradestatus: true }).orderBy('gradeorder');

async function levelCounts(db: Knex, gradeIds: string[]): Promise<Map<string, number>> {
  if (!gradeIds.length) return new Map();
  const rows: Array<Record<string, unknown>> = await db('levels')
    .whereIn('gradeid', gradeIds)
    .andWhere({ isdeleted: false, levelstatus: true })
    .groupBy('gradeid')
    .select('gradeid')
    .count({ n: '*' });
  return new Map(rows.map((r) => [String(r.gradeid), Number(r.n)]));
}

async function gradeProgressRows(db: Knex, studentid: string | undefined, gradeIds: string[]) {
  if (!studentid || !gradeIds.length) return [];
  return db('studentgradesprogress')
    .where({ studentid })
    .whereIn('gradeid', gradeIds)
    .select('gradeid', 'points', 'completed', 'scores', 'progress');
}

export async function gradesOfCurriculum(db: Knex, curriculumid: string, studentid: string | undefined) {
  const grades = await activeGrades(db, curriculumid);
  const ids = grades.map((g) => g.gradeid);
  const [counts, progress] = await Promise.all([levelCounts(db, ids), gradeProgressRows(db, studentid, ids)]);
  return grades.map((g) => {
    const mine = progress.filter((p) => p.gradeid === g.gradeid);
    return {
      ...g,
      studentgradesprogresses: mine.map((p) => ({ points: num(p.points), completed: Boolean(p.completed) })),
      progress: round2(num(mine[0]?.progress)),
      number_levels: counts.get(g.gradeid) ?? 0,
    };
  });
}

export async function gradesProgress(db: Knex, curriculumid: string, studentid: string | undefined) {
  const grades = await activeGrades(db, curriculumid);
  const ids = grades.map((g) => g.gradeid);
  const [counts, progress] = await Promise.all([levelCounts(db, ids), gradeProgressRows(db, studentid, ids)]);
  const completedLevels = new Map<string, number>();
  if (studentid && ids.length) {
    const rows: Array<Record<string, unknown>> = await db('studentlevelsprogress')
      .where({ studentid, completed: true })
      .whereIn('gradeid', ids)
      .groupBy('gradeid')
      .select('gradeid')
      .count({ n: '*' });
    for (const r of rows) completedLevels.set(String(r.gradeid), Number(r.n));
  }
  const gradesresult = grades.map((g) => ({
    gradeid: g.gradeid,
    gradename: g.gradename,
    gradeorder: g.gradeorder,
    number_levels: counts.get(g.gradeid) ?? 0,
    number_completed_levels: completedLevels.get(g.gradeid) ?? 0,
    studentgradesprogresses: progress
      .filter((p) => p.gradeid === g.gradeid)
      .map((p) => ({ points: num(p.points), completed: Boolean(p.completed), scores: num(p.scores) })),
  }));
  return { gradesresult, total_points: Math.round(progress.reduce((s, p) => s + num(p.points), 0)) };
}

/**
 * A learner's standing in a grade and in its curriculum. Reaching 100 % of a grade earns one reward (a
 * studenttrash row, types 1..10 in turn); `show` is true only on the call that created it.
 */
export async function totalGradeProgress(
  db: Knex,
  grade: { gradeid: string; curriculumid: string },
  studentid: string | undefined,
) {
  if (!studentid) return { gradeprogress: 0, totalgradeprogress: 0, show: false, trashtype: null };
  const row = await db('studentgradesprogress')
    .where({ studentid, gradeid: grade.gradeid })
    .first('progress', 'points');
  const full = await gradeFullPoints(db, grade.gradeid);
  const gradeprogress = round2(num(row?.progress));
  const totalgradeprogress = await curriculumProgress(db, studentid, grade.curriculumid);
  let trash = await db('studenttrash').where({ studentid, gradeid: grade.gradeid }).first('trashtype');
  let show = false;
  if (!trash && gradeprogress >= 100) {
    const earned = await db('studenttrash').where({ studentid }).count({ n: '*' }).first();
    const trashtype = (Number(earned?.n ?? 0) % 10) + 1;
    await db('studenttrash').insert({
      studenttrashid: crypto.randomUUID(),
      studentid,
      gradeid: grade.gradeid,
      trashtype,
      totalprogress: full ? num(row?.points) : 100,
      status: 1,
    });
    trash = { trashtype };
    show = true;
  }
  return { gradeprogress, totalgradeprogress, show, trashtype: trash ? Number(trash.trashtype) : null };
}
