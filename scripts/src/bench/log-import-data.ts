import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { PROGRESS_KEYS, writeLogZip, type LogSource, type ProgressKey } from '@lms/shared';

/**
 * A realistic six-month activity log of one school, generated deterministically (the same seed gives the
 * same rows), so that the import and the ceiling it is compared with write exactly the same rows.
 */
export interface LogShape {
  learners: number;
  results: number;
  questionsPerResult: number;
  progressRows: number;
  accessRows: number;
}

export const SIX_MONTH_SCHOOL: LogShape = {
  learners: 40,
  results: 20_000,
  questionsPerResult: 5,
  progressRows: 20_000,
  accessRows: 5_000,
};

export interface Learner {
  studentid: string;
  schooluserid: string;
}

/** Mulberry32: small, fast, and enough for spreading timestamps and scores. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A v4-shaped id from the generator, so that ids are as long as real ones and the same across runs. */
function idFrom(rand: () => number): string {
  const hex = (n: number) => Math.floor(rand() * 16 ** n).toString(16).padStart(n, '0');
  return `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(8)}${hex(4)}`;
}

export function learnersOf(shape: LogShape, seed = 7): Learner[] {
  const rand = prng(seed);
  return Array.from({ length: shape.learners }, () => ({ studentid: idFrom(rand), schooluserid: idFrom(rand) }));
}

export interface Content {
  curriculumid: string;
  gradeid: string;
  levelid: string;
  lessonid: string;
}

/** Rows of every collection in the shape of `log.ini`, pulled lazily. */
export function logSource(
  shape: LogShape,
  learners: Learner[],
  content: Content,
  now = Date.UTC(2026, 10, 20),
  seed = 11,
): LogSource {
  const span = 180 * 86_400_000;
  const when = (rand: () => number) => new Date(now - Math.floor(rand() * span)).toISOString();
  const pick = (rand: () => number) => learners[Math.floor(rand() * learners.length)];

  // A curriculum has a few hundred questions and learning items: the rows name them again and again.
  const poolRand = prng(seed + 300);
  const questionPool = Array.from({ length: 600 }, () => idFrom(poolRand));
  const learningPool = Array.from({ length: 200 }, () => idFrom(poolRand));
  const fromPool = (pool: string[], rand: () => number) => pool[Math.floor(rand() * pool.length)];

  function* results() {
    const rand = prng(seed);
    for (let i = 0; i < shape.results; i += 1) {
      const l = pick(rand);
      const studentprogressid = idFrom(rand);
      const start = when(rand);
      const pct = Math.round(rand() * 10_000) / 100;
      const type = 1 + Math.floor(rand() * 4);
      yield {
        studentid: l.studentid,
        ispass: pct >= 80,
        studentprogressreferenceid: content.lessonid,
        starttime: start,
        endtime: new Date(Date.parse(start) + 120_000).toISOString(),
        studentprogressid,
        progresstype: type,
        resultpercentage: pct,
        marks: Math.floor(pct / 20),
        points: Math.floor(pct / 2),
        scores: type === 1 ? 0 : Math.floor(pct / 34),
        fullpoints: 50,
        studentprogressquestions: Array.from({ length: shape.questionsPerResult }, () => ({
          studentprogressid,
          studentprogressquestionid: idFrom(rand),
          tries: Math.floor(rand() * 3),
          iscorrect: rand() < 0.7,
          referencequestionid: fromPool(questionPool, rand),
        })),
      };
    }
  }

  const per = Math.floor(shape.progressRows / PROGRESS_KEYS.length);
  const extra = shape.progressRows - per * PROGRESS_KEYS.length;
  function* progress(key: ProgressKey, k: number): Generator<Record<string, unknown>> {
    const rand = prng(seed + 100 + k);
    const n = per + (k < extra ? 1 : 0);
    for (let i = 0; i < n; i += 1) {
      const l = pick(rand);
      const t = when(rand);
      const c = content;
      const score = Math.floor(rand() * 4);
      switch (key) {
        case 'studentactives':
          yield {
            studentactiveid: idFrom(rand),
            studentid: l.studentid,
            referenceid: c.lessonid,
            referencetype: 1 + Math.floor(rand() * 5),
            created_at: t,
          };
          break;
        case 'studentlearningprogress':
          yield {
            studentlearningprogressid: idFrom(rand),
            studentid: l.studentid,
            userid: null,
            lessonlearningid: fromPool(learningPool, rand),
            points: 5,
            progress: Math.floor(rand() * 600),
            progress_percentage: Math.round(rand() * 100),
            content_length: 600,
            viewed: Math.floor(rand() * 3),
            lastupdated: t,
          };
          break;
        case 'studentgradesprogress':
          yield {
            studentgradeprogressid: idFrom(rand),
            studentid: l.studentid,
            curriculumid: c.curriculumid,
            gradeid: c.gradeid,
            progress: Math.round(rand() * 100),
            points: Math.floor(rand() * 500),
            scores: score,
            lastupdated: t,
            completed: rand() < 0.2,
          };
          break;
        case 'studentlevelsprogress':
          yield {
            studentlevelprogressid: idFrom(rand),
            studentid: l.studentid,
            levelid: c.levelid,
            gradeid: c.gradeid,
            curid: c.curriculumid,
            progress: Math.round(rand() * 100),
            points: Math.floor(rand() * 200),
            scores: score,
            lastupdated: t,
            completed: rand() < 0.3,
            added_default_score: false,
          };
          break;
        case 'studentlessonsprogress':
          yield {
            studentlessonprogressid: idFrom(rand),
            studentid: l.studentid,
            lessonid: c.lessonid,
            levelid: c.levelid,
            gradeid: c.gradeid,
            curid: c.curriculumid,
            progress: Math.round(rand() * 100),
            points: Math.floor(rand() * 50),
            scores: score,
            lastupdated: t,
            completed: rand() < 0.5,
            added_completed_scores: rand() < 0.5,
          };
          break;
        case 'studentpoints':
          yield {
            studentpointid: idFrom(rand),
            studentid: l.studentid,
            levelid: c.levelid,
            lessonid: c.lessonid,
            gradepoints: 40,
            totalgradepoints: 400,
            levelpoints: 40,
            totallevelpoints: 200,
            levelquizscores: score,
            lessonpoints: 40,
            learningpoints: 5,
            practicepoints: 10,
            quizpoints: 25,
            totallearningpoints: 10,
            totalpracticepoints: 20,
            totalquizpoints: 50,
            scores: score,
            created_at: t,
          };
          break;
        case 'studentappusages':
          yield {
            studentappusageid: idFrom(rand),
            schooluserid: l.schooluserid,
            time_spent: Math.floor(rand() * 3600),
            last_updated: t,
            created_at: t,
          };
          break;
      }
    }
  }

  function* access() {
    const rand = prng(seed + 200);
    for (let i = 0; i < shape.accessRows; i += 1) {
      const l = pick(rand);
      const t = when(rand);
      yield {
        userid: l.schooluserid,
        logintime: t,
        logouttime: new Date(Date.parse(t) + 1_800_000).toISOString(),
        timespent: '1800',
        status: 2,
        ipaddress: `10.0.${Math.floor(rand() * 255)}.${Math.floor(rand() * 255)}`,
        rpiuseraccessid: idFrom(rand),
      };
    }
  }

  return {
    result: results(),
    access: access(),
    progress: Object.fromEntries(PROGRESS_KEYS.map((k, i) => [k, progress(k, i)])) as unknown as LogSource['progress'],
  };
}

/** Writes the ZIP the classroom server's export would produce for this log (log.ini plus one text log). */
export async function writeLogZipFile(file: string, source: LogSource): Promise<number> {
  const logText = Buffer.from(
    '{"level":"info","message":"teacher export log","metadata":{"application":"RPI-API","logaccesstype":12}}\n',
  );
  const { Readable } = await import('node:stream');
  await pipeline(
    writeLogZip(source, [{ name: 'RPI-API-info-2026-11-20.log', stream: Readable.from([logText]) }]),
    fs.createWriteStream(file),
  );
  return fs.statSync(file).size;
}
