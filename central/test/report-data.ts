import crypto from 'node:crypto';
import type { Knex } from '@lms/db';

// A small world for the report tests, written straight into the tables (the people and curriculum
// areas' own routes are not needed to read reports): two countries, three schools with a class each,
// a curriculum of two grades, three levels and five lessons (one inactive), each lesson with one quiz,
// learners with attempts whose best attempt is known in advance.

export const uuid = () => crypto.randomUUID();

const fixed = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export const W = {
  country: { kh: fixed(1), jo: fixed(2) },
  countryname: { kh: 'Cambodia', jo: 'Jordan' },
  school: { sunrise: fixed(11), lotus: fixed(12), amman: fixed(13) },
  schoolname: { sunrise: 'Sunrise School', lotus: 'Lotus School', amman: 'Amman School' },
  class: { sunrise: fixed(21), lotus: fixed(22), amman: fixed(23) },
  classname: { sunrise: 'Class A', lotus: 'Class B', amman: 'Class C' },
  curriculum: fixed(31),
  curriculumname: 'Maths',
  grade: { g1: fixed(41), g2: fixed(42) },
  level: { l1: fixed(51), l2: fixed(52), l3: fixed(53) },
  lesson: { ls1: fixed(61), ls2: fixed(62), ls3: fixed(63), ls4: fixed(64), off: fixed(65) },
  quiz: { ls1: fixed(71), ls2: fixed(72), ls3: fixed(73), ls4: fixed(74), off: fixed(75) },
  question: [fixed(81), fixed(82), fixed(83)],
  teacher: fixed(91),
} as const;

export interface Learner {
  studentid: string;
  schooluserid: string;
  schoolusername: string;
}

async function insertMany(db: Knex, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  for (let i = 0; i < rows.length; i += 50) await db(table).insert(rows.slice(i, i + 50));
}

/** Countries, schools, classes, the curriculum tree and one teacher. */
export async function seedWorld(db: Knex): Promise<void> {
  await db('countries').insert([
    { countryid: W.country.kh, countryname: W.countryname.kh, expectedusage: 20 },
    { countryid: W.country.jo, countryname: W.countryname.jo, expectedusage: 10 },
  ]);
  await db('subjects').insert({ subjectid: fixed(30), subjectname: 'Mathematics' });
  await db('curriculums').insert({
    curriculumid: W.curriculum,
    curriculumname: W.curriculumname,
    subjectid: fixed(30),
  });
  const school = (key: 'sunrise' | 'lotus' | 'amman', country: string, created: string) => ({
    schoolid: W.school[key],
    schoolname: W.schoolname[key],
    countryid: country,
    curriculums: JSON.stringify([W.curriculum]),
    created_at: new Date(created),
  });
  await db('schools').insert([
    school('sunrise', W.country.kh, '2026-01-10T00:00:00Z'),
    school('lotus', W.country.kh, '2026-03-05T00:00:00Z'),
    school('amman', W.country.jo, '2025-06-01T00:00:00Z'),
  ]);
  await db('standards').insert(
    (['sunrise', 'lotus', 'amman'] as const).map((k) => ({
      standardid: W.class[k],
      standardname: W.classname[k],
      schoolid: W.school[k],
      schoolname: W.schoolname[k],
    })),
  );
  await db('grades').insert([
    { gradeid: W.grade.g1, curriculumid: W.curriculum, gradename: 'Grade 1', gradeorder: 1 },
    { gradeid: W.grade.g2, curriculumid: W.curriculum, gradename: 'Grade 2', gradeorder: 2 },
  ]);
  await db('levels').insert([
    { levelid: W.level.l1, gradeid: W.grade.g1, levelname: 'Level 1', levelorder: 1 },
    { levelid: W.level.l2, gradeid: W.grade.g1, levelname: 'Level 2', levelorder: 2 },
    { levelid: W.level.l3, gradeid: W.grade.g2, levelname: 'Level 3', levelorder: 1 },
  ]);
  await db('lessons').insert([
    { lessonid: W.lesson.ls1, levelid: W.level.l1, lessonname: 'Counting', lessonorder: 1, lessonstatus: true },
    { lessonid: W.lesson.ls2, levelid: W.level.l1, lessonname: 'Adding', lessonorder: 2, lessonstatus: true },
    { lessonid: W.lesson.ls3, levelid: W.level.l2, lessonname: 'Taking away', lessonorder: 1, lessonstatus: true },
    { lessonid: W.lesson.ls4, levelid: W.level.l3, lessonname: 'Times tables', lessonorder: 1, lessonstatus: true },
    { lessonid: W.lesson.off, levelid: W.level.l1, lessonname: 'Retired lesson', lessonorder: 3, lessonstatus: false },
  ]);
  await db('lessonquizzes').insert(
    (['ls1', 'ls2', 'ls3', 'ls4', 'off'] as const).map((k) => ({
      lessonquizid: W.quiz[k],
      lessonid: W.lesson[k],
      lessonquizorder: 1,
      lessonquizname: `Quiz ${k}`,
      lessonquizdescription: '',
    })),
  );
  await db('questions').insert(
    W.question.map((questionid, i) => ({ questionid, templatetypeid: 1, questionidentifier: `q${i + 1}` })),
  );
  // Two questions in every lesson quiz, three in level 1's quiz.
  await insertMany(
    db,
    'lessonquizquestions',
    (['ls1', 'ls2', 'ls3', 'ls4'] as const).flatMap((k) =>
      [1, 2].map((n) => ({
        lessonquizquestionid: uuid(),
        lessonquizid: W.quiz[k],
        questionid: W.question[n - 1],
        lessonquizquestionorder: n,
      })),
    ),
  );
  await insertMany(
    db,
    'levelquizquestions',
    [1, 2, 3].map((n) => ({
      levelquizquestionid: uuid(),
      levelid: W.level.l1,
      questionid: W.question[n - 1],
      levelquizquestionorder: n,
    })),
  );
  await db('schoolusers').insert({
    schooluserid: W.teacher,
    schoolusername: 'teacher1',
    schooluserpasswordhash: 'x',
    schooluserrole: 3,
    schoolname: W.schoolname.sunrise,
    created_at: new Date('2026-02-02T00:00:00Z'),
  });
}

export interface LearnerOptions {
  school: 'sunrise' | 'lotus' | 'amman';
  username: string;
  genderid?: number;
  teacherAccount?: boolean;
  created_at?: string;
  type?: 'online' | 'offline';
  isactive?: boolean;
  wg?: number | null;
}

/** Learners of a school's class (in batches: the query-count test writes hundreds). */
export async function addLearners(db: Knex, list: LearnerOptions[]): Promise<Learner[]> {
  const users: Array<Record<string, unknown>> = [];
  const students: Array<Record<string, unknown>> = [];
  const out: Learner[] = [];
  for (const o of list) {
    const schooluserid = uuid();
    const studentid = uuid();
    users.push({
      schooluserid,
      schoolusername: o.username,
      schooluserpasswordhash: 'x',
      schooluserrole: 4,
      schoolname: W.schoolname[o.school],
      created_at: new Date(o.created_at ?? '2026-04-01T00:00:00Z'),
    });
    students.push({
      studentid,
      studentfirstname: `First ${o.username}`,
      studentlastname: 'Family',
      mothername: 'Mother',
      contact: '+855 12 345 678',
      genderid: o.genderid ?? 1,
      city: 'City',
      state: 'State',
      country: o.school === 'amman' ? W.countryname.jo : W.countryname.kh,
      curriculumid: W.curriculum,
      schooluserid,
      schoolname: W.schoolname[o.school],
      standard: W.class[o.school],
      is_teacher_acc: o.teacherAccount ?? false,
      type: o.type ?? 'offline',
      isactive: o.isactive ?? true,
      wg_seeing: o.wg === undefined ? null : o.wg,
      created_at: new Date(o.created_at ?? '2026-04-01T00:00:00Z'),
    });
    out.push({ studentid, schooluserid, schoolusername: o.username });
  }
  await insertMany(db, 'schoolusers', users);
  await insertMany(db, 'students', students);
  return out;
}

export interface Attempt {
  studentid: string;
  reference: string;
  type?: number;
  ispass: boolean;
  pct: number;
  at: string;
  marks?: number;
  scores?: number;
}

export async function addAttempts(db: Knex, list: Attempt[]): Promise<string[]> {
  const rows = list.map((a) => ({
    studentprogressid: uuid(),
    studentid: a.studentid,
    ispass: a.ispass,
    studentprogressreferenceid: a.reference,
    starttime: new Date(a.at),
    endtime: new Date(Date.parse(a.at) + 60_000),
    progresstype: a.type ?? 2,
    resultpercentage: a.pct,
    marks: a.marks ?? Math.round(a.pct / 50),
    scores: a.scores ?? Math.round(a.pct / 10),
    points: 10,
    fullpoints: 20,
  }));
  await insertMany(db, 'studentprogress', rows);
  return rows.map((r) => r.studentprogressid);
}

export async function addLessonProgress(
  db: Knex,
  studentid: string,
  lessons: Array<keyof typeof W.lesson>,
): Promise<void> {
  const levelOf = { ls1: W.level.l1, ls2: W.level.l1, ls3: W.level.l2, ls4: W.level.l3, off: W.level.l1 };
  await insertMany(
    db,
    'studentlessonsprogress',
    lessons.map((k) => ({
      studentlessonprogressid: uuid(),
      studentid,
      lessonid: W.lesson[k],
      levelid: levelOf[k],
      gradeid: k === 'ls4' ? W.grade.g2 : W.grade.g1,
      curid: W.curriculum,
      progress: 50,
      scores: 3,
    })),
  );
}

export async function addLevelProgress(
  db: Knex,
  studentid: string,
  levels: Array<keyof typeof W.level>,
): Promise<void> {
  await insertMany(
    db,
    'studentlevelsprogress',
    levels.map((k) => ({
      studentlevelprogressid: uuid(),
      studentid,
      levelid: W.level[k],
      gradeid: k === 'l3' ? W.grade.g2 : W.grade.g1,
      curid: W.curriculum,
      progress: 40,
      scores: 2,
    })),
  );
}

/**
 * The reference learner "ana" of Sunrise's class with attempts whose best is known: lesson 1 failed then
 * passed twice (best: the first pass), lesson 2 failed twice (best: the later failure), lesson 3 attempted
 * without a progress row (no best shown), level 1's quiz failed then passed.
 */
export async function seedAna(db: Knex): Promise<{ ana: Learner; best: Record<string, string> }> {
  const [ana] = await addLearners(db, [
    { school: 'sunrise', username: 'ana', genderid: 2, created_at: '2026-01-15T00:00:00Z' },
  ]);
  const [ls1fail, ls1pass, ls1later, ls2early, ls2late, , l1fail, l1pass] = await addAttempts(db, [
    { studentid: ana.studentid, reference: W.quiz.ls1, ispass: false, pct: 40, at: '2026-05-01T08:00:00Z' },
    {
      studentid: ana.studentid,
      reference: W.quiz.ls1,
      ispass: true,
      pct: 85,
      at: '2026-05-02T08:00:00Z',
      marks: 2,
      scores: 9,
    },
    { studentid: ana.studentid, reference: W.quiz.ls1, ispass: true, pct: 100, at: '2026-05-03T08:00:00Z' },
    { studentid: ana.studentid, reference: W.quiz.ls2, ispass: false, pct: 30, at: '2026-05-04T08:00:00Z' },
    {
      studentid: ana.studentid,
      reference: W.quiz.ls2,
      ispass: false,
      pct: 60,
      at: '2026-05-05T08:00:00Z',
      marks: 1,
      scores: 6,
    },
    { studentid: ana.studentid, reference: W.quiz.ls3, ispass: true, pct: 90, at: '2026-05-06T08:00:00Z' },
    { studentid: ana.studentid, reference: W.level.l1, type: 3, ispass: false, pct: 50, at: '2026-05-07T08:00:00Z' },
    {
      studentid: ana.studentid,
      reference: W.level.l1,
      type: 3,
      ispass: true,
      pct: 90,
      at: '2026-05-08T08:00:00Z',
      marks: 3,
      scores: 8,
    },
  ]);
  void ls1fail; void ls1later; void ls2early; void l1fail;
  await addLessonProgress(db, ana.studentid, ['ls1', 'ls2']);
  await addLevelProgress(db, ana.studentid, ['l1']);
  return { ana, best: { ls1: ls1pass, ls2: ls2late, l1: l1pass } };
}
