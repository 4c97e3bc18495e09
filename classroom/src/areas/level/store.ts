import { whereContains, type Knex } from '@lms/db';
import { num, round2 } from '../common';

export function searchLevels(db: Knex, q: { gradeid?: string; level?: string }) {
  const query = whereContains(db('levels').where('isdeleted', false), 'levelname', q.level);
  if (q.gradeid) query.andWhere('gradeid', q.gradeid);
  return query.orderBy('levelorder');
}

const activeLevels = (db: Knex, gradeid: string) =>
  db('levels').where({ gradeid, isdeleted: false, levelstatus: true }).orderBy('levelorder');

async function levelProgressRows(db: Knex, studentid: string | undefined, levelIds: string[]) {
  if (!studentid || !levelIds.length) return [];
  return db('studentlevelsprogress')
    .where({ studentid })
    .whereIn('levelid', levelIds)
    .select('levelid', 'points', 'completed', 'scores', 'progress');
}

export async function levelsOfGrade(db: Knex, gradeid: string, studentid: string | undefined) {
  const levels = await activeLevels(db, gradeid);
  const progress = await levelProgressRows(db, studentid, levels.map((l) => l.levelid));
  return levels.map((l) => {
    const mine = progress.filter((p) => p.levelid === l.levelid);
    return {
      ...l,
      studentlevelsprogresses: mine.map((p) => ({
        points: num(p.points),
        completed: Boolean(p.completed),
        scores: num(p.scores),
      })),
      progress: round2(num(mine[0]?.progress)),
    };
  });
}

export async function levelsProgress(db: Knex, gradeid: string, studentid: string | undefined) {
  const levels = await activeLevels(db, gradeid);
  const ids = levels.map((l) => l.levelid);
  const progress = await levelProgressRows(db, studentid, ids);
  const done = new Map<string, number>();
  if (studentid && ids.length) {
    const rows: Array<Record<string, unknown>> = await db('studentlessonsprogress')
      .where({ studentid, completed: true })
      .whereIn('levelid', ids)
      .groupBy('levelid')
      .select('levelid')
      .count({ n: '*' });
    for (const r of rows) done.set(String(r.levelid), Number(r.n));
  }
  return {
    levelsresult: levels.map((l) => ({
      ...l,
      number_completed_lessons: done.get(l.levelid) ?? 0,
      studentlevelsprogresses: progress
        .filter((p) => p.levelid === l.levelid)
        .map((p) => ({
          points: num(p.points),
          completed: Boolean(p.completed),
          scores: num(p.scores),
          progress: round2(num(p.progress)),
        })),
    })),
    total_points: Math.round(progress.reduce((s, p) => s + num(p.points), 0)),
  };
}
