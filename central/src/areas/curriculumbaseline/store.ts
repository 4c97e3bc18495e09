import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';

export const BASELINE_RESULT_COLUMNS = ['student', 'username', 'schoolname', 'baselinename', 'ispass', 'resultpercentage', 'correct', 'totalquestions', 'scores'] as const;

interface ResultRow {
  studentfirstname?: string | null;
  schoolusername?: string | null;
  schoolname?: string | null;
  baselinename?: string | null;
  ispass?: unknown;
  resultpercentage?: unknown;
  marks?: unknown;
  totalquestions?: unknown;
  scores?: unknown;
}

function csvRow(r: ResultRow) {
  const passed = r.ispass === true || r.ispass === 1 || r.ispass === '1' || r.ispass === 'true';
  return {
    student: r.studentfirstname ?? '',
    username: r.schoolusername ?? '',
    schoolname: r.schoolname ?? '',
    baselinename: r.baselinename ?? '',
    ispass: passed ? 'Pass' : '',
    resultpercentage: r.resultpercentage ?? '',
    correct: r.marks ?? '',
    totalquestions: r.totalquestions ?? '',
    scores: r.scores ?? '',
  };
}

/** The classroom server's rows for the same assessment (a bare array, contract sync-formats D). */
async function classroomResults(config: { rpiCloud: string; serverSyncKey: string }, id: string): Promise<ResultRow[]> {
  let rows: unknown;
  try {
    const res = await fetch(`${config.rpiCloud}/curriculum/${encodeURIComponent(id)}/getstudentresult`, { headers: { Authorization: config.serverSyncKey } });
    if (!res.ok) throw new Error(String(res.status));
    rows = await res.json();
  } catch {
    throw httpError(500, 'Could not read the classroom server results');
  }
  if (!Array.isArray(rows)) throw httpError(500, 'Could not read the classroom server results');
  return rows.map((r: Record<string, any>) => ({ // eslint-disable-line @typescript-eslint/no-explicit-any
    studentfirstname: r.student?.studentfirstname,
    schoolusername: r.student?.schooluser?.schoolusername,
    schoolname: r.student?.schoolname,
    baselinename: r.curriculumbaseline?.baselinename,
    ispass: r.ispass,
    resultpercentage: r.resultpercentage,
    marks: r.marks,
    totalquestions: r.totalquestions,
    scores: r.scores,
  }));
}

/** Learner identity with assessment results, from the cloud and the classroom server, as CSV rows. */
export async function baselineResultRows(db: Knex, config: { rpiCloud: string; serverSyncKey: string }, id: string): Promise<Array<Record<string, unknown>>> {
  const baseline = await db('curriculumbaseline').where({ curriculumbaselineid: id }).first('curriculumbaselineid', 'baselinename');
  if (!baseline) throw httpError(400, 'Invalid curriculum Baseline');
  const totalquestions = Number(
    (await db('baselinequestion').where({ curriculumbaselineid: id, isdeleted: false }).count({ n: '*' }).first())?.n ?? 0,
  );
  const cloud: ResultRow[] = (
    await db('studentprogress as p')
      .join('students as s', 's.studentid', 'p.studentid')
      .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .where('p.studentprogressreferenceid', id)
      .orderBy('p.starttime')
      .select('s.studentfirstname', 'u.schoolusername', 's.schoolname', 'p.ispass', 'p.resultpercentage', 'p.marks', 'p.scores')
  ).map((r: ResultRow) => ({ ...r, baselinename: baseline.baselinename, totalquestions }));
  const classroom = await classroomResults(config, id);
  return [...cloud, ...classroom].map(csvRow);
}
