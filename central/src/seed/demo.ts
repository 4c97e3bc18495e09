import crypto from 'node:crypto';
import { DEMO as EARLIER_DEMO, type Knex } from '@lms/db';
import { DEMO_DOCUMENTS, DEMO_IDS, DEMO_QUESTIONS, DEMO_TEXT, ROLE_IDS, type DemoLesson } from '@lms/shared';
import { countryBody, createCountry } from '../areas/country/store';
import { createCurriculum, curriculumBody } from '../areas/curriculum/store';
import { createGrade, gradeBody } from '../areas/grade/store';
import { createLesson, lessonBody } from '../areas/lesson/store';
import { createLevel, levelBody } from '../areas/level/store';
import { createQuestion, questionBody } from '../areas/question/store';
import { createSubject, subjectBody } from '../areas/subject/store';
import { hashPassword } from '../auth/passwords';
import { learningKind, lessonItems, planKind, practiceKind, quizKind } from '../content/lesson-items';
import {
  levelQuizQuestionKind,
  practiceQuestionKind,
  questionLinks,
  quizQuestionKind,
  setLevelQuizLesson,
} from '../content/question-links';
import type { Caller } from '../http/types';

/**
 * The demo data set on central. Its curriculum is authored the way the admin UI authors one: every
 * body goes through the route's own schema and the route's own store function (so the points model,
 * the ordering and the "already exists" rules run as they would), only with the data set's fixed ids,
 * which the classroom server's demo seed uses as well: central's curriculum package of this data is
 * what that seed wrote. The school, its class, the documents, the baseline check and the roster have
 * no authoring route yet and are written as rows.
 *
 * Every row is written once: a row of that id already there (edited in the admin UI, or from an
 * earlier run) is left as it is, so a second run changes nothing.
 */

const D = DEMO_IDS;
const T = DEMO_TEXT;
const L3 = D.level2.lesson;

/**
 * Staff sign-ins per RBAC role (passwords meet the staff policy).
 * API Key has no account: it is the APPLICATION_API_KEY.
 */
export const DEMO_STAFF = [
  {
    lmsusername: 'superadmin@demo.lms',
    password: 'DemoSuper1',
    roleid: ROLE_IDS.superadmin,
    role: 'Super Admin',
    firstname: 'Sam',
  },
  { lmsusername: 'admin@demo.lms', password: 'DemoAdmin1', roleid: ROLE_IDS.admin, role: 'Admin', firstname: 'Ada' },
  {
    lmsusername: 'teacher@demo.lms',
    password: 'DemoTeacher1',
    roleid: ROLE_IDS.teacher,
    role: 'Teacher',
    firstname: 'Tom',
  },
  { lmsusername: 'user@demo.lms', password: 'DemoUser1', roleid: ROLE_IDS.user, role: 'User', firstname: 'Uma' },
] as const;

/** Instants of rows that carry no audit column of their own: fixed, so that both servers hold the same values. */
const SEEDED_AT = '2026-01-05T00:00:00.000Z';

const WG = ['wg_seeing', 'wg_hearing', 'wg_walking', 'wg_remembering', 'wg_selfcare', 'wg_communicating'] as const;
/** Washington Group answers (1 no difficulty … 4 cannot do at all) of some learners; the others were never asked. */
const WG_ANSWERS: Record<string, readonly number[]> = {
  'demo.student': [1, 1, 2, 1, 1, 1],
  'demo.student2': [1, 3, 1, 1, 1, 2],
  'demo.sophea': [1, 1, 1, 1, 1, 1],
  'demo.dara': [2, 1, 1, 1, 1, 1],
};

/** The learners of the original data set (the others are this project's own). */
const ORIGINAL_LEARNERS: readonly string[] = ['demo.sophea', 'demo.dara', 'demo.bopha'];

/** What one run wrote, by kind of row, in the order first written. */
type Tally = Map<string, number>;

/** Runs `write` unless `table` holds a row of that id; counts what it wrote. A failure names the row. */
async function once(
  db: Knex,
  tally: Tally,
  what: string,
  table: string,
  column: string,
  id: string,
  write: () => Promise<unknown>,
): Promise<void> {
  if (await db(table).where(column, id).first(column)) return;
  try {
    await write();
  } catch (err) {
    throw new Error(`demo seed: could not write the ${what} ${id}: ${(err as Error).message}`, { cause: err });
  }
  tally.set(what, (tally.get(what) ?? 0) + 1);
}

/** A database seeded by the earlier demo data set holds a school of the same name under another id. */
async function refuseEarlierDemo(db: Knex): Promise<void> {
  const school = await db('schools')
    .where({ schoolname: D.schoolname })
    .whereNot({ schoolid: D.schoolid })
    .first('schoolid');
  const country = await db('countries')
    .where({ countryname: D.countryname })
    .whereNot({ countryid: D.countryid })
    .first('countryid');
  if (!school && !country) return;
  const earlier = school?.schoolid === EARLIER_DEMO.schoolid ? ' (the earlier demo data set)' : '';
  const found = school
    ? `a school "${D.schoolname}" (${school.schoolid})`
    : `a country "${D.countryname}" (${country.countryid})`;
  throw new Error(
    `demo seed: this database already has ${found}${earlier} ` +
      "under another id than the demo data set's; nothing was changed. " +
      'For a fresh demo, remove the development databases (data/central.sqlite, data/classroom.sqlite) ' +
      'and run make seed-demo again.',
  );
}

/** The staff accounts; an account already there keeps its password (and so its hash). Returns the superadmin's id. */
async function seedStaff(db: Knex, tally: Tally): Promise<string> {
  let superadminid = '';
  for (const s of DEMO_STAFF) {
    const existing = await db('lmsusers').where({ lmsusername: s.lmsusername }).first('lmsuserid');
    const lmsuserid: string = existing?.lmsuserid ?? crypto.randomUUID();
    if (s.roleid === ROLE_IDS.superadmin) superadminid = lmsuserid;
    if (existing) continue;
    const hash = await hashPassword(s.password);
    await db.transaction(async (trx) => {
      await trx('lmsusers').insert({
        lmsuserid,
        lmsusername: s.lmsusername,
        lmsuserpasswordhash: hash,
        firstname: s.firstname,
        lastname: 'Demo',
        lmsuserrole: ROLE_IDS.superadmin,
        isverified: true,
        isdisabled: false,
        countries: JSON.stringify([]),
        schools: JSON.stringify([]),
      });
      await trx('lmsusers_roles').insert({ lmsuserid, roleid: s.roleid });
    });
    tally.set('staff account', (tally.get('staff account') ?? 0) + 1);
  }
  return superadminid;
}

/** The demo superadmin as the author of the curriculum: its rows name it in created_by. */
function authorOf(lmsuserid: string): Caller {
  return {
    kind: 'staff',
    lmsuserid,
    lmsusername: DEMO_STAFF[0].lmsusername,
    roleids: [ROLE_IDS.superadmin],
    permissions: [],
    wildcard: true,
    jti: 'demo-seed',
    sessionid: null,
    claims: {},
  };
}

async function seedCurriculum(db: Knex, tally: Tally, author: Caller, by: string): Promise<void> {
  await once(db, tally, 'country', 'countries', 'countryid', D.countryid, () =>
    createCountry(
      db,
      countryBody.parse({ countryname: D.countryname, expectedusage: T.school.expectedusage }),
      by,
      D.countryid,
    ),
  );
  await once(db, tally, 'subject', 'subjects', 'subjectid', D.subjectid, () =>
    createSubject(
      db,
      subjectBody.parse({ subjectname: D.subjectname, subjectdescription: T.subject }),
      by,
      D.subjectid,
    ),
  );
  await once(db, tally, 'curriculum', 'curriculums', 'curriculumid', D.curriculumid, () =>
    createCurriculum(
      db,
      curriculumBody.parse({
        curriculumname: D.curriculumname,
        curriculumdescription: T.curriculum,
        countryid: [D.countryid],
        subjectid: D.subjectid,
      }),
      author,
      undefined,
      { curriculumid: D.curriculumid, curriculumcountryids: [D.curriculumcountryid] },
    ));
  await once(db, tally, 'grade', 'grades', 'gradeid', D.gradeid, () =>
    createGrade(
      db,
      gradeBody.parse({
        gradename: D.gradename,
        gradedescription: T.grade,
        gradeorder: 1,
        curriculumid: D.curriculumid,
        passing_points: 80,
      }),
      by,
      undefined,
      D.gradeid,
    ),
  );

  for (const q of DEMO_QUESTIONS) {
    await once(db, tally, 'question', 'questions', 'questionid', q.questionid, () =>
      createQuestion(db, questionBody.parse(q), by, { questionid: q.questionid, keepOptionIds: true }));
  }
  for (const doc of DEMO_DOCUMENTS) {
    await once(db, tally, 'document', 'documents', 'documentid', doc.documentid, () =>
      db('documents').insert({
        ...doc,
        documents3meta: JSON.stringify({ seeded: true }),
        isdeleted: false,
        documenttags: JSON.stringify(['demo']),
        lastupdated: SEEDED_AT,
        created_by: by,
        updated_by: by,
      }),
    );
  }

  const levels = [
    {
      levelid: D.levelid,
      levelname: D.levelname,
      levelorder: 1,
      lessons: D.lessons as readonly DemoLesson[],
      levelquiz: D.levelquiz,
    },
    {
      levelid: D.level2.levelid,
      levelname: D.level2.levelname,
      levelorder: 2,
      lessons: [L3] as readonly DemoLesson[],
      levelquiz: D.level2.levelquiz,
    },
  ];
  const learning = lessonItems(learningKind);
  const practice = lessonItems(practiceKind);
  const quiz = lessonItems(quizKind);
  const practiceLink = questionLinks(practiceQuestionKind);
  const quizLink = questionLinks(quizQuestionKind);
  const levelQuizLink = questionLinks(levelQuizQuestionKind);
  for (const v of levels) {
    await once(db, tally, 'level', 'levels', 'levelid', v.levelid, () =>
      createLevel(
        db,
        levelBody.parse({
          levelname: v.levelname,
          leveldescription: T.level,
          levelorder: v.levelorder,
          gradeid: D.gradeid,
          quiz_points: 100,
          passing_points: 0,
        }),
        by,
        v.levelid,
      ),
    );
    for (const l of v.lessons) {
      await once(db, tally, 'lesson', 'lessons', 'lessonid', l.lessonid, () =>
        createLesson(
          db,
          lessonBody.parse({
            lessonname: l.lessonname,
            lessondescription: T.lesson,
            lessonorder: l.lessonorder,
            total_points: 100,
            levelid: v.levelid,
            passing_points: 0,
          }),
          by,
          l.lessonid,
        ),
      );
      await once(db, tally, 'learning', 'lessonlearnings', 'lessonlearningid', l.lessonlearningid, () =>
        learning.add(
          db,
          l.lessonid,
          learning.inputs.create.body.parse({
            documentid: l.documentid,
            lessonlearningname: l.lessonlearningname,
            lessonlearningdescription: T.learning,
            lessonlearningorder: 1,
          }),
          by,
          l.lessonlearningid,
        ),
      );
      await once(db, tally, 'practice', 'lessonpractices', 'lessonpracticeid', l.lessonpracticeid, () =>
        practice.add(
          db,
          l.lessonid,
          practice.inputs.create.body.parse({
            lessonpracticename: l.lessonpracticename,
            lessonpracticedescription: T.practice,
            lessonpracticeorder: 1,
            points: 0,
          }),
          by,
          l.lessonpracticeid,
        ),
      );
      await once(db, tally, 'quiz', 'lessonquizzes', 'lessonquizid', l.lessonquizid, () =>
        quiz.add(db, l.lessonid, quiz.inputs.create.body.parse({
          lessonquizname: l.lessonquizname, lessonquizdescription: T.quiz, lessonquizorder: 1, points: 0,
        }), by, l.lessonquizid));
      for (const [i, questionid] of l.questionids.entries()) {
        await once(
          db,
          tally,
          'practice question',
          'lessonpracticequestions',
          'lessonpracticequestionid',
          l.lessonpracticequestionids[i],
          () => practiceLink.add(db, l.lessonpracticeid, questionid, i + 1, l.lessonpracticequestionids[i]),
        );
        await once(
          db,
          tally,
          'quiz question',
          'lessonquizquestions',
          'lessonquizquestionid',
          l.lessonquizquestionids[i],
          () => quizLink.add(db, l.lessonquizid, questionid, i + 1, l.lessonquizquestionids[i]),
        );
      }
    }
    // Each level-quiz question reviews the lesson that asks it.
    for (const [i, questionid] of v.levelquiz.questionids.entries()) {
      const id = v.levelquiz.levelquizquestionids[i];
      const lesson = v.lessons.find((l) => l.questionids.includes(questionid));
      await once(db, tally, 'level quiz question', 'levelquizquestions', 'levelquizquestionid', id, async () => {
        await levelQuizLink.add(db, v.levelid, questionid, i + 1, id);
        if (lesson) await setLevelQuizLesson(db, id, lesson.lessonid);
      });
    }
  }

  const plan = lessonItems(planKind);
  await once(db, tally, 'lesson plan', 'lessonplans', 'lessonplanid', D.lessonplan.lessonplanid, () =>
    plan.add(
      db,
      D.lessons[0].lessonid,
      plan.inputs.create.body.parse({
        documentid: D.lessonplan.documentid,
        lessonplanname: D.lessonplan.lessonplanname,
        lessonplandescription: T.plan,
        lessonplanorder: 1,
      }),
      by,
      D.lessonplan.lessonplanid,
    ),
  );

  const b = D.baseline;
  await once(db, tally, 'baseline check', 'curriculumbaseline', 'curriculumbaselineid', b.curriculumbaselineid, () =>
    db('curriculumbaseline').insert({
      curriculumbaselineid: b.curriculumbaselineid,
      curriculumid: D.curriculumid,
      baselineid: b.curriculumbaselineid,
      baselinename: b.baselinename,
      baselinetype: 1,
      baselinestatus: true,
      startdate: null,
      enddate: null,
      schoolid: JSON.stringify([D.schoolid]),
      isdeleted: false,
      created_by: by,
      updated_by: by,
    }),
  );
  for (const [i, id] of b.baselinequestionids.entries()) {
    await once(db, tally, 'baseline question', 'baselinequestion', 'baselinequestionid', id, () =>
      db('baselinequestion').insert({
        baselinequestionid: id,
        curriculumbaselineid: b.curriculumbaselineid,
        questionid: b.questionids[i],
        baselinequestionstatus: true,
        baselinequestionorder: i + 1,
        isdeleted: false,
        created_by: by,
        updated_by: by,
      }),
    );
  }
}

async function seedSchool(db: Knex, tally: Tally, by: string): Promise<void> {
  await once(db, tally, 'school', 'schools', 'schoolid', D.schoolid, () =>
    db('schools').insert({
      schoolid: D.schoolid,
      schoolname: D.schoolname,
      countryid: D.countryid,
      curriculums: JSON.stringify([D.curriculumid]),
      expectedcontribution: T.school.expectedcontribution,
      expectedusage: T.school.expectedusage,
      uitheme: T.school.uitheme,
      brandingconfig: null,
      isdeleted: false,
      created_by: by,
      updated_by: by,
    }),
  );
  await once(db, tally, 'class', 'standards', 'standardid', D.standardid, () =>
    db('standards').insert({
      standardid: D.standardid,
      standardname: D.standardname,
      schoolid: D.schoolid,
      schoolname: D.schoolname,
      isdeleted: false,
      created_by: by,
      updated_by: by,
    }),
  );
}

/** The school's teacher and learners, as a roster push would carry them to the classroom server. */
async function seedRoster(db: Knex, tally: Tally): Promise<void> {
  const hash = await hashPassword(D.password);
  const schooluser = (schooluserid: string, schoolusername: string, schooluserrole: number) => ({
    schooluserid,
    schoolusername,
    schooluserpasswordhash: hash,
    schooluserrole,
    schooluserstatus: true,
    schoolname: D.schoolname,
    isdisabled: false,
    isdeleted: false,
  });
  await once(db, tally, 'school teacher', 'schoolusers', 'schooluserid', D.teacher.schooluserid, () =>
    db('schoolusers').insert(schooluser(D.teacher.schooluserid, D.teacher.schoolusername, 3)));
  const collectedAt = new Date().toISOString();
  for (const l of D.learners) {
    const wg = WG_ANSWERS[l.schoolusername];
    await once(db, tally, 'learner', 'students', 'studentid', l.studentid, () =>
      db.transaction(async (trx) => {
        if (!(await trx('schoolusers').where('schooluserid', l.schooluserid).first('schooluserid'))) {
          await trx('schoolusers').insert(schooluser(l.schooluserid, l.schoolusername, 4));
        }
        await trx('students').insert({
          studentid: l.studentid,
          schooluserid: l.schooluserid,
          studentfirstname: l.studentfirstname,
          studentlastname: l.studentlastname,
          familyname: '',
          mothername: 'Demo Mother',
          fathername: 'Demo Father',
          contact: '',
          dateofbirth: '2017-03-14T00:00:00.000Z',
          genderid: l.genderid,
          ...Object.fromEntries(WG.map((k, i) => [k, wg ? wg[i] : null])),
          wg_source: wg ? 1 : null,
          wg_collected_at: wg ? collectedAt : null,
          standard: D.standardid,
          schooltype: T.school.schooltype,
          schoolname: D.schoolname,
          city: T.school.city,
          country: D.countryname,
          state: T.school.state,
          dateofjoin: SEEDED_AT,
          curriculumid: D.curriculumid,
          curriculumids: JSON.stringify([D.curriculumid]),
          gradeid: D.gradeid,
          startinglevelid: D.levelid,
          studentcurrentlevelid: D.levelid,
          studentcurrentlessonid: D.lessons[0].lessonid,
          isactive: true,
          type: 'offline',
          is_teacher_acc: false,
        });
      }));
  }
}

/**
 * Results central holds before any classroom log arrives, so that its reports show something: the
 * original data set's three learners did the practice and the quiz of lessons 1 and 2, one attempt in
 * three failed (half its answers right), on the days before the first run.
 */
async function seedProgress(db: Knex, tally: Tally): Promise<void> {
  const learners = D.learners.filter((l) => ORIGINAL_LEARNERS.includes(l.schoolusername));
  const firstRun = Date.now();
  let n = 0;
  for (const l of learners) {
    for (const lesson of D.lessons) {
      for (const [progresstype, table, column, refid] of [
        [1, 'lessonpractices', 'lessonpracticeid', lesson.lessonpracticeid],
        [2, 'lessonquizzes', 'lessonquizid', lesson.lessonquizid],
      ] as const) {
        const id = D.progressids[n];
        const pass = n % 3 !== 2;
        const day = n + 1;
        n += 1;
        await once(db, tally, 'learner result', 'studentprogress', 'studentprogressid', id, async () => {
          const item = await db(table).where(column, refid).first('points');
          const fullpoints = Number(item?.points ?? 0);
          const questions = lesson.questionids.length;
          const marks = pass ? questions : Math.floor(questions / 2);
          const start = firstRun - day * 86_400_000;
          await db('studentprogress').insert({
            studentprogressid: id,
            studentid: l.studentid,
            ispass: pass,
            studentprogressreferenceid: refid,
            progresstype,
            starttime: new Date(start).toISOString(),
            endtime: new Date(start + 300_000).toISOString(),
            resultpercentage: (marks / questions) * 100,
            marks,
            scores: marks,
            points: pass ? fullpoints : 0,
            fullpoints,
          });
        });
      }
    }
  }
}

/** A fixed id for a demo row that DEMO_IDS does not name, derived from what the row is. */
function demoId(what: string): string {
  const h = crypto.createHash('sha256').update(`lms-demo:${what}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * What the reports read beside the attempts, as a classroom's log would bring it: each learner's level
 * quiz of Level 1 (two passes, one fail), and the lesson and level progress rows that the attempts add
 * up to (points of passed attempts, done when the quiz is passed, the best quiz's scores, the last
 * attempt's time), without which a report shows a lesson as never started.
 */
async function seedProgressRows(db: Knex, tally: Tally): Promise<void> {
  const learners = D.learners.filter((l) => ORIGINAL_LEARNERS.includes(l.schoolusername));
  const level = await db('levels').where('levelid', D.levelid).first('quiz_points');
  const levelQuestions = D.levelquiz.questionids.length;
  for (const [i, l] of learners.entries()) {
    const id = demoId(`levelquiz:${l.studentid}`);
    const pass = i !== 2;
    await once(db, tally, 'level quiz result', 'studentprogress', 'studentprogressid', id, async () => {
      const marks = pass ? levelQuestions : Math.floor(levelQuestions / 2);
      const fullpoints = Number(level?.quiz_points ?? 0);
      const start = Date.now() - (20 + i) * 86_400_000;
      await db('studentprogress').insert({
        studentprogressid: id,
        studentid: l.studentid,
        ispass: pass,
        studentprogressreferenceid: D.levelid,
        progresstype: 3,
        starttime: new Date(start).toISOString(),
        endtime: new Date(start + 240_000).toISOString(),
        resultpercentage: (marks / levelQuestions) * 100,
        marks,
        scores: pass ? 3 : 0,
        points: pass ? fullpoints : 0,
        fullpoints,
      });
    });
  }
  for (const l of learners) {
    let levelPoints = 0;
    let levelDone = true;
    let levelLast = '';
    let levelFull = 0;
    for (const lesson of D.lessons) {
      const attempts: Array<Record<string, unknown>> = await db('studentprogress').where('studentid', l.studentid)
        .whereIn('studentprogressreferenceid', [lesson.lessonpracticeid, lesson.lessonquizid]).select();
      const row = await db('lessons').where('lessonid', lesson.lessonid).first('total_points');
      const full = Number(row?.total_points ?? 0);
      const points = attempts.filter((a) => a.ispass).reduce((sum, a) => sum + Number(a.points ?? 0), 0);
      const quizzes = attempts.filter((a) => a.studentprogressreferenceid === lesson.lessonquizid);
      const completed = quizzes.some((a) => a.ispass);
      const last = attempts.map((a) => new Date(a.endtime as string).toISOString()).sort().pop() ?? SEEDED_AT;
      levelPoints += points;
      levelFull += full;
      levelDone &&= completed;
      if (last > levelLast) levelLast = last;
      const id = demoId(`lessonprogress:${l.studentid}:${lesson.lessonid}`);
      await once(db, tally, 'lesson progress row', 'studentlessonsprogress', 'studentlessonprogressid', id, () =>
        db('studentlessonsprogress').insert({
          studentlessonprogressid: id,
          studentid: l.studentid,
          lessonid: lesson.lessonid,
          levelid: D.levelid,
          gradeid: D.gradeid,
          curid: D.curriculumid,
          progress: full > 0 ? Math.min(100, Math.round((points * 10000) / full) / 100) : 0,
          points,
          lastupdated: last,
          completed,
          added_completed_scores: completed,
          scores: Math.max(0, ...quizzes.filter((a) => a.ispass).map((a) => Number(a.scores ?? 0))),
        }),
      );
    }
    const quiz = await db('studentprogress')
      .where({ studentid: l.studentid, studentprogressreferenceid: D.levelid, ispass: true })
      .first('points', 'scores', 'endtime');
    levelPoints += Number(quiz?.points ?? 0);
    levelFull += Number(level?.quiz_points ?? 0);
    const id = demoId(`levelprogress:${l.studentid}:${D.levelid}`);
    await once(db, tally, 'level progress row', 'studentlevelsprogress', 'studentlevelprogressid', id, () =>
      db('studentlevelsprogress').insert({
        studentlevelprogressid: id,
        studentid: l.studentid,
        levelid: D.levelid,
        gradeid: D.gradeid,
        curid: D.curriculumid,
        progress: levelFull > 0 ? Math.min(100, Math.round((levelPoints * 10000) / levelFull) / 100) : 0,
        points: levelPoints,
        lastupdated: quiz ? new Date(quiz.endtime as string).toISOString() : levelLast || SEEDED_AT,
        completed: levelDone && Boolean(quiz),
        scores: Number(quiz?.scores ?? 0),
        added_default_score: false,
      }),
    );
  }
}

/**
 * The ids of the learner rows the seed writes, by table (for
 * tools and tests that tell them from rows a classroom sent).
 */
export function demoSeededRowIds(): Record<
  'studentprogress' | 'studentlessonsprogress' | 'studentlevelsprogress',
  string[]
> {
  const learners = D.learners.filter((l) => ORIGINAL_LEARNERS.includes(l.schoolusername));
  return {
    studentprogress: [...D.progressids, ...learners.map((l) => demoId(`levelquiz:${l.studentid}`))],
    studentlessonsprogress: learners.flatMap((l) =>
      D.lessons.map((lesson) => demoId(`lessonprogress:${l.studentid}:${lesson.lessonid}`)),
    ),
    studentlevelsprogress: learners.map((l) => demoId(`levelprogress:${l.studentid}:${D.levelid}`)),
  };
}

/** The tag the demo's questions and documents carry, as rows of the tag lists that the admin UI's pickers read. */
async function seedTags(db: Knex, tally: Tally, by: string): Promise<void> {
  await once(db, tally, 'question tag', 'questiontags', 'questiontagid', demoId('questiontag:demo'), () =>
    db('questiontags').insert({
      questiontagid: demoId('questiontag:demo'),
      questiontagname: 'demo',
      isdeleted: false,
      created_by: by,
      updated_by: by,
    }),
  );
  await once(db, tally, 'document tag', 'documenttags', 'documenttagid', demoId('documenttag:demo'), () =>
    db('documenttags').insert({
      documenttagid: demoId('documenttag:demo'),
      documenttagname: 'demo',
      isdeleted: false,
      created_by: by,
      updated_by: by,
    }),
  );
}

/** Demo data for development and test; returns the lines to print: what this run wrote, and how to sign in. */
export async function seedDemo(db: Knex): Promise<string[]> {
  await refuseEarlierDemo(db);
  const tally: Tally = new Map();
  const superadminid = await seedStaff(db, tally);
  await seedCurriculum(db, tally, authorOf(superadminid), superadminid);
  await seedSchool(db, tally, superadminid);
  await seedRoster(db, tally);
  await seedProgress(db, tally);
  await seedProgressRows(db, tally);
  await seedTags(db, tally, superadminid);

  const written = [...tally].map(
    ([what, count]) => `${count} ${count === 1 ? what : what === 'quiz' ? 'quizzes' : `${what}s`}`,
  );
  return [
    written.length
      ? `central: wrote ${written.join(', ')}`
      : 'central: the demo data set is in place already; nothing was written',
    `central: demo school "${D.schoolname}" (class "${D.standardname}", ${D.countryname}), ` +
      `curriculum "${D.curriculumname}" of subject "${D.subjectname}": ` +
      `${D.gradename} with ${D.levelname} (lessons "${D.lessons[0].lessonname}", "${D.lessons[1].lessonname}") ` +
      `and ${D.level2.levelname} (lesson "${L3.lessonname}"), ` +
      `each level with a level quiz; ${DEMO_QUESTIONS.length} questions in the question bank; ` +
      'a baseline check; results of 3 learners',
    'central staff sign-ins (POST /auth/login):',
    ...DEMO_STAFF.map((s) => `  ${s.role.padEnd(11)} ${s.lmsusername} / ${s.password}`),
    `central school sign-in (POST /auth/school/login): teacher ${D.teacher.schoolusername} / ${D.password}`,
    'learners on the central roster (they sign in on the classroom server): ' +
      `${D.learners.map((l) => l.schoolusername).join(', ')} / ${D.password}`,
    `the curriculum in the admin UI: sign in as ${DEMO_STAFF[0].lmsusername}, ` +
      `open Curriculum (or GET /curriculum/tree/${D.curriculumid})`,
    'API key: Authorization: Bearer <APPLICATION_API_KEY>; ' +
      'superadmin@superadmin.com has no password until `npm run set-password -w central`',
  ];
}
