import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { central, createTestDatabase, type Knex } from '../src';
import { backfillQuizResults } from '../src/central/quiz-results';

// studentquizresults against the ranking the reports ran over every attempt before it existed: after any
// mix of inserts, merges that change an attempt's pass, time, quiz or type, and deletes, its rows are
// exactly what that ranking picks, on SQLite and PostgreSQL.

type Row = Record<string, unknown>;

/** The reports' former ranking, over all attempts: the best and the last attempt of each learner and quiz. */
async function rankedFromAttempts(db: Knex): Promise<Row[]> {
  const rows = (await db.raw(`
    select b.studentid, b.studentprogressreferenceid, b.progresstype,
      b.studentprogressid as best, l.studentprogressid as last
    from (select p.*, row_number() over (partition by studentid, studentprogressreferenceid, progresstype
            order by ispass desc, case when ispass then starttime end asc, starttime desc, studentprogressid) as rn
          from studentprogress p) b
    join (select p.*, row_number() over (partition by studentid, studentprogressreferenceid, progresstype
            order by starttime desc, studentprogressid desc) as rn
          from studentprogress p) l
      on l.studentid = b.studentid and l.studentprogressreferenceid = b.studentprogressreferenceid
     and l.progresstype = b.progresstype and l.rn = 1
    where b.rn = 1`)) as Row[] | { rows: Row[] };
  return sorted(Array.isArray(rows) ? rows : rows.rows);
}

async function kept(db: Knex): Promise<Row[]> {
  return sorted(
    (await db('studentquizresults').select('studentid', 'studentprogressreferenceid', 'progresstype', {
      best: 'bestprogressid',
      last: 'lastprogressid',
    })) as Row[],
  );
}

const sorted = (rows: Row[]) =>
  rows
    .map((r) => ({ ...r, progresstype: Number(r.progresstype) }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('studentquizresults', () => {
  let db: Knex;
  let close: () => Promise<void>;
  const learners = Array.from({ length: 4 }, () => crypto.randomUUID());
  const quizzes = Array.from({ length: 3 }, () => crypto.randomUUID());

  beforeAll(async () => {
    const t = await createTestDatabase({ kinds: central.kinds, migrations: central.migrations });
    db = t.db;
    close = () => t.dispose();
    await db('subjects').insert({ subjectid: crypto.randomUUID(), subjectname: 'S' });
    const subjectid = (await db('subjects').first('subjectid')).subjectid;
    const curriculumid = crypto.randomUUID();
    await db('curriculums').insert({ curriculumid, curriculumname: 'C', subjectid });
    for (const studentid of learners) {
      const schooluserid = crypto.randomUUID();
      await db('schoolusers').insert({
        schooluserid,
        schoolusername: `u${studentid.slice(0, 8)}`,
        schooluserpasswordhash: 'x',
        schooluserrole: 3,
      });
      await db('students').insert({
        studentid,
        studentfirstname: 'L',
        genderid: 1,
        city: '',
        country: '',
        state: '',
        curriculumid,
        schooluserid,
      });
    }
  });
  afterAll(async () => close?.());

  it('holds what the ranking over every attempt picks, through inserts, merges and deletes', async () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return Math.floor((seed / 2147483648) * n);
    };
    const ids: string[] = [];
    // Few distinct start times, so that ties on time (decided by the id) happen often.
    const time = () => new Date(Date.UTC(2026, 0, 1 + rand(4)));
    const attempt = () => ({
      studentid: learners[rand(learners.length)],
      studentprogressreferenceid: quizzes[rand(quizzes.length)],
      progresstype: 1 + rand(2),
      ispass: rand(2) === 1,
      starttime: time(),
    });
    for (let step = 0; step < 300; step += 1) {
      const op = rand(10);
      if (op < 6 || ids.length < 5) {
        const studentprogressid = crypto.randomUUID();
        ids.push(studentprogressid);
        await db('studentprogress').insert({ studentprogressid, ...attempt() });
      } else if (op < 9) {
        const studentprogressid = ids[rand(ids.length)];
        const change = [
          { ispass: rand(2) === 1 },
          { starttime: time() },
          { studentprogressreferenceid: quizzes[rand(3)] },
          { progresstype: 1 + rand(2) },
          { ispass: rand(2) === 1, starttime: time() },
        ][rand(5)];
        await db('studentprogress').where({ studentprogressid }).update(change);
      } else {
        const [studentprogressid] = ids.splice(rand(ids.length), 1);
        await db('studentprogress').where({ studentprogressid }).del();
      }
      if (step % 50 === 49) expect(await kept(db)).toEqual(await rankedFromAttempts(db));
    }
    expect((await kept(db)).length).toBeGreaterThan(10);
    expect(await kept(db)).toEqual(await rankedFromAttempts(db));
  });

  it('is rebuilt the same by the back-fill', async () => {
    const before = await kept(db);
    await db('studentquizresults').del();
    await backfillQuizResults(db, 3);
    expect(await kept(db)).toEqual(before);
  });
});
