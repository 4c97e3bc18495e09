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

type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const groupBy = (rows: Row[], key: string) => {
  const out = new Map<string, Row[]>();
  for (const r of rows) out.set(r[key], [...(out.get(r[key]) ?? []), r]);
  return out;
};
/** The first progress row of each id, as the per-tier routes read `[0]`. */
const firstBy = (rows: Row[], key: string) => {
  const out = new Map<string, Row>();
  for (const r of rows) if (!out.has(r[key])) out.set(r[key], r);
  return out;
};

/**
 * Every curriculum, grade and level open to the learner, with the progress the per-tier routes show (the learner
 * app's library tab, read once and kept for offline use). A lesson counts as completed when its progress row says
 * so or reaches 100 %. A caller without a learner record, or with no curriculum, gets an empty library.
 */
export async function library(db: Knex, learner: { studentid: string; curriculumids: string[] } | undefined) {
  const empty = { generated_at: new Date().toISOString(), curricula: [] as unknown[] };
  if (!learner?.curriculumids.length) return empty;
  const { studentid } = learner;
  const curricula = await db('curriculums')
    .whereIn('curriculumid', learner.curriculumids)
    .where({ curriculumstatus: true, isdeleted: false })
    .orderBy('curriculumname')
    .select('curriculumid', 'curriculumname', 'curriculumdescription');
  if (!curricula.length) return empty;
  const grades = await db('grades')
    .whereIn('curriculumid', curricula.map((c) => c.curriculumid))
    .where({ gradestatus: true, isdeleted: false })
    .orderBy('gradeorder')
    .select('gradeid', 'curriculumid', 'gradename', 'gradeorder');
  const gradeIds = grades.map((g) => g.gradeid);
  const levels = gradeIds.length
    ? await db('levels').whereIn('gradeid', gradeIds).where({ levelstatus: true, isdeleted: false })
        .orderBy('levelorder').select('levelid', 'gradeid', 'levelname', 'leveldescription', 'levelorder')
    : [];
  const levelIds = levels.map((l) => l.levelid);
  const lessons = levelIds.length
    ? await db('lessons').whereIn('levelid', levelIds).where({ lessonstatus: true, isdeleted: false })
        .select('lessonid', 'levelid')
    : [];
  const [gradeRows, levelRows, lessonRows] = await Promise.all([
    gradeIds.length
      ? db('studentgradesprogress').where({ studentid }).whereIn('gradeid', gradeIds).select('gradeid', 'progress')
      : [],
    levelIds.length
      ? db('studentlevelsprogress').where({ studentid }).whereIn('levelid', levelIds).select('levelid', 'progress')
      : [],
    lessons.length
      ? db('studentlessonsprogress').where({ studentid }).whereIn('lessonid', lessons.map((l) => l.lessonid))
          .select('lessonid', 'progress', 'completed')
      : [],
  ]);
  const gradeProgress = firstBy(gradeRows, 'gradeid');
  const levelProgress = firstBy(levelRows, 'levelid');
  const lessonProgress = firstBy(lessonRows, 'lessonid');
  const gradesOf = groupBy(grades, 'curriculumid');
  const levelsOf = groupBy(levels, 'gradeid');
  const lessonsOf = groupBy(lessons, 'levelid');
  const completed = (lessonid: string) => {
    const p = lessonProgress.get(lessonid);
    return Boolean(p && (Boolean(p.completed) || num(p.progress) >= 100));
  };
  return {
    generated_at: empty.generated_at,
    curricula: curricula.map((c) => {
      const gradesOut = (gradesOf.get(c.curriculumid) ?? []).map((g) => ({
        gradeid: g.gradeid,
        gradename: g.gradename,
        gradeorder: g.gradeorder,
        progress: round2(num(gradeProgress.get(g.gradeid)?.progress)),
        levels: (levelsOf.get(g.gradeid) ?? []).map((l) => {
          const mine = lessonsOf.get(l.levelid) ?? [];
          return {
            levelid: l.levelid,
            levelname: l.levelname,
            leveldescription: l.leveldescription ?? null,
            levelorder: l.levelorder,
            progress: round2(num(levelProgress.get(l.levelid)?.progress)),
            number_lessons: mine.length,
            number_completed_lessons: mine.filter((x) => completed(x.lessonid)).length,
          };
        }),
      }));
      return {
        curriculumid: c.curriculumid,
        curriculumname: c.curriculumname,
        curriculumdescription: c.curriculumdescription ?? null,
        // The mean of its grades' progress, as the existing server's library gives it.
        progress: gradesOut.length ? round2(gradesOut.reduce((n, g) => n + g.progress, 0) / gradesOut.length) : 0,
        grades: gradesOut,
      };
    }),
  };
}
