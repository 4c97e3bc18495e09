import type { Knex } from '@lms/db';
import {
  DEMO_DOCUMENTS,
  DEMO_IDS,
  DEMO_POINTS,
  DEMO_QUESTIONS,
  DEMO_TEXT,
  HttpError,
  parseContentPackage,
  parseStudentsPackage,
  parseTeachersPackage,
} from '@lms/shared';
import { applyContent, applyStudents, applyTeachers } from '../areas/import/store';
import { hashPassword } from '../auth/passwords';

const D = DEMO_IDS;
const [L1, L2] = D.lessons;
const L3 = D.level2.lesson;
const T = DEMO_TEXT;

/**
 * The demo data under the names the tests and scripts use: the skeleton's ids and names, lesson 1's
 * practice and quiz with their link rows, lesson 2, the level quiz, the baseline and the sign-ins.
 */
export const CLASSROOM_DEMO = {
  countryid: D.countryid,
  countryname: D.countryname,
  schoolid: D.schoolid,
  schoolname: D.schoolname,
  standardid: D.standardid,
  standardname: D.standardname,
  subjectid: D.subjectid,
  subjectname: D.subjectname,
  curriculumid: D.curriculumid,
  curriculumname: D.curriculumname,
  gradeid: D.gradeid,
  gradename: D.gradename,
  levelid: D.levelid,
  levelname: D.levelname,
  /** Level 2: one lesson (3) and a level quiz of its own. */
  level2id: D.level2.levelid,
  level2name: D.level2.levelname,
  lesson3id: L3.lessonid,
  lesson3name: L3.lessonname,
  learning3id: L3.lessonlearningid,
  practice3id: L3.lessonpracticeid,
  practice3questions: L3.lessonpracticequestionids,
  quiz3id: L3.lessonquizid,
  quiz3questions: L3.lessonquizquestionids,
  lesson3questions: L3.questionids,
  level2quizquestions: D.level2.levelquiz.levelquizquestionids,
  lessonid: L1.lessonid,
  lessonname: L1.lessonname,
  learningid: L1.lessonlearningid,
  practiceid: L1.lessonpracticeid,
  quizid: L1.lessonquizid,
  lesson2id: L2.lessonid,
  lesson2name: L2.lessonname,
  learning2id: L2.lessonlearningid,
  practice2id: L2.lessonpracticeid,
  quiz2id: L2.lessonquizid,
  practice2questions: L2.lessonpracticequestionids,
  quiz2questions: L2.lessonquizquestionids,
  /** Every demo question; lesson 1's practice and quiz link the first four, in order. */
  questions: D.questionids,
  practicequestions: L1.lessonpracticequestionids,
  quizquestions: L1.lessonquizquestionids,
  levelquizquestions: D.levelquiz.levelquizquestionids,
  baselineid: D.baseline.curriculumbaselineid,
  baselinequestions: D.baseline.baselinequestionids,
  planid: D.lessonplan.lessonplanid,
  teacher: D.teacher,
  students: D.learners.map((l) => ({
    schooluserid: l.schooluserid,
    studentid: l.studentid,
    schoolusername: l.schoolusername,
    first: l.studentfirstname,
    last: l.studentlastname,
    genderid: l.genderid,
  })),
  password: D.password,
} as const;

// Fixed instants keep a second run of the seed from changing a row.
const SEEDED_AT = '2026-01-05T00:00:00.000Z';

/** The demo curriculum as central's `GET /sync/content` would send it (format 2, all 19 keys). */
export function demoContentPackage(): Record<string, Array<Record<string, unknown>>> {
  const levels = [
    { levelid: D.levelid, levelname: D.levelname, levelorder: 1, lessons: D.lessons, levelquiz: D.levelquiz },
    {
      levelid: D.level2.levelid,
      levelname: D.level2.levelname,
      levelorder: 2,
      lessons: [L3],
      levelquiz: D.level2.levelquiz,
    },
  ];
  const lessons = levels.flatMap((v) => v.lessons.map((l) => ({ ...l, levelid: v.levelid })));
  const lessonOf = (levelid: string, questionid: string) =>
    lessons.find((l) => l.levelid === levelid && l.questionids.includes(questionid))!.lessonid;
  return {
    curriculums: [
      {
        curriculumid: D.curriculumid,
        curriculumname: D.curriculumname,
        curriculumstatus: true,
        curriculumdescription: T.curriculum,
        isdeleted: false,
        subjectid: D.subjectid,
      },
    ],
    curriculumbaselines: [
      {
        curriculumbaselineid: D.baseline.curriculumbaselineid,
        curriculumid: D.curriculumid,
        baselineid: D.baseline.curriculumbaselineid,
        baselinename: D.baseline.baselinename,
        baselinetype: 1,
        baselinestatus: true,
        startdate: null,
        enddate: null,
        schoolid: [D.schoolid],
        isdeleted: false,
      },
    ],
    baselinequestion: D.baseline.baselinequestionids.map((id, i) => ({
      baselinequestionid: id,
      curriculumbaselineid: D.baseline.curriculumbaselineid,
      questionid: D.baseline.questionids[i],
      baselinequestionstatus: true,
      baselinequestionorder: i + 1,
      isdeleted: false,
    })),
    grades: [
      {
        gradeid: D.gradeid,
        curriculumid: D.curriculumid,
        gradestatus: true,
        gradename: D.gradename,
        gradedescription: T.grade,
        gradeorder: 1,
        isdeleted: false,
        passing_points: DEMO_POINTS.passing,
        points: levels.length * DEMO_POINTS.lesson,
      },
    ],
    levels: levels.map((v) => ({
      levelid: v.levelid,
      gradeid: D.gradeid,
      levelname: v.levelname,
      leveldescription: T.level,
      isdeleted: false,
      levelstatus: true,
      levelorder: v.levelorder,
      passing_points: DEMO_POINTS.passing,
      quiz_points: DEMO_POINTS.levelquiz,
      points: DEMO_POINTS.lesson,
    })),
    lessons: lessons.map((l) => ({
      lessonid: l.lessonid,
      levelid: l.levelid,
      lessonname: l.lessonname,
      lessondescription: T.lesson,
      practicecount: 1,
      quizcount: 1,
      lessonpasspercentage: DEMO_POINTS.passing,
      lessonorder: l.lessonorder,
      lessonstatus: true,
      isdeleted: false,
      total_points: DEMO_POINTS.lesson,
      brick_points: 0,
      passing_points: DEMO_POINTS.passing,
      learning_points: DEMO_POINTS.learning,
      quizzes_points: DEMO_POINTS.quiz,
      practices_points: DEMO_POINTS.practice,
    })),
    lessonlearnings: lessons.map((l) => ({
      lessonlearningid: l.lessonlearningid,
      lessonlearningname: l.lessonlearningname,
      lessonlearningdescription: T.learning,
      lessonlearningstatus: true,
      lessonid: l.lessonid,
      documentid: l.documentid,
      lessonlearningorder: 1,
      points: DEMO_POINTS.learning,
    })),
    lessonpractices: lessons.map((l) => ({
      lessonpracticeid: l.lessonpracticeid,
      lessonid: l.lessonid,
      lessonpracticeorder: 1,
      lessonpracticestatus: true,
      lessonpracticename: l.lessonpracticename,
      lessonpracticedescription: T.practice,
      points: DEMO_POINTS.practice,
    })),
    lessonpracticequestions: lessons.flatMap((l) =>
      l.lessonpracticequestionids.map((id, i) => ({
        lessonpracticequestionid: id,
        lessonpracticeid: l.lessonpracticeid,
        lessonpracticequestionstatus: true,
        questionid: l.questionids[i],
        lessonpracticequestionorder: i + 1,
      })),
    ),
    lessonquizzes: lessons.map((l) => ({
      lessonquizid: l.lessonquizid,
      lessonid: l.lessonid,
      lessonquizorder: 1,
      lessonquizname: l.lessonquizname,
      lessonquizstatus: true,
      lessonquizdescription: T.quiz,
      points: DEMO_POINTS.quiz,
    })),
    lessonquizquestions: lessons.flatMap((l) =>
      l.lessonquizquestionids.map((id, i) => ({
        lessonquizquestionid: id,
        lessonquizid: l.lessonquizid,
        questionid: l.questionids[i],
        lessonquizquestionstatus: true,
        lessonquizquestionorder: i + 1,
      })),
    ),
    levelquizquestions: levels.flatMap((v) =>
      v.levelquiz.levelquizquestionids.map((id, i) => ({
        levelquizquestionid: id,
        levelid: v.levelid,
        questionid: v.levelquiz.questionids[i],
        levelquizquestionstatus: true,
        levelquizquestionorder: i + 1,
        lessonid: lessonOf(v.levelid, v.levelquiz.questionids[i]),
      })),
    ),
    questions: DEMO_QUESTIONS.map((q) => ({ ...q, isdeleted: false, questionstatus: true, lastupdated: SEEDED_AT })),
    documents: DEMO_DOCUMENTS.map((doc) => ({
      ...doc,
      documents3meta: { seeded: true },
      isdeleted: false,
      documenttags: ['demo'],
      lastupdated: SEEDED_AT,
    })),
    standards: [
      {
        standardid: D.standardid,
        standardname: D.standardname,
        schoolname: D.schoolname,
        schoolid: D.schoolid,
        isdeleted: false,
        created_at: SEEDED_AT,
        updated_at: SEEDED_AT,
      },
    ],
    schools: [
      {
        schoolid: D.schoolid,
        schoolname: D.schoolname,
        expectedcontribution: T.school.expectedcontribution,
        expectedusage: T.school.expectedusage,
        countryid: D.countryid,
        curriculums: [D.curriculumid],
        isdeleted: false,
        uitheme: T.school.uitheme,
        brandingconfig: null,
      },
    ],
    countries: [
      { countryid: D.countryid, countryname: D.countryname, expectedusage: T.school.expectedusage, isdeleted: false },
    ],
    lessonplans: [
      {
        lessonplanid: D.lessonplan.lessonplanid,
        lessonplanname: D.lessonplan.lessonplanname,
        lessonplandescription: T.plan,
        lessonplanstatus: true,
        lessonid: L1.lessonid,
        documentid: D.lessonplan.documentid,
        lessonplanorder: 1,
        points: 0,
      },
    ],
    subjects: [
      {
        subjectid: D.subjectid,
        subjectname: D.subjectname,
        subjectstatus: true,
        subjectdescription: T.subject,
        isdeleted: false,
        created_at: SEEDED_AT,
        updated_at: SEEDED_AT,
      },
    ],
  };
}

/** The demo roster as central's roster push would send it (`students.ini`), every learner in the demo class. */
export function demoStudentsPackage(passwordhash: string) {
  return {
    studentusers: D.learners.map((l) => ({
      schooluserid: l.schooluserid,
      schoolusername: l.schoolusername,
      schooluserpasswordhash: passwordhash,
      schooluserrole: 4,
      schooluserstatus: true,
      schoolname: D.schoolname,
      isdisabled: false,
      isdeleted: false,
      student: {
        studentid: l.studentid,
        studentfirstname: l.studentfirstname,
        studentlastname: l.studentlastname,
        genderid: l.genderid,
        standard: D.standardid,
        schooltype: T.school.schooltype,
        schoolname: D.schoolname,
        city: T.school.city,
        country: D.countryname,
        state: T.school.state,
        dateofjoin: SEEDED_AT,
        curriculumid: D.curriculumid,
        curriculumids: [D.curriculumid],
        gradeid: D.gradeid,
        startinglevelid: D.levelid,
        studentcurrentlevelid: D.levelid,
        studentcurrentlessonid: L1.lessonid,
        isactive: true,
        type: 'offline',
        is_teacher_acc: false,
      },
    })),
  };
}

/**
 * Demo data for development and test; returns the lines to print. The curriculum and the roster go in
 * through the same code as central's pushes, so the result is what a push of this data set leaves:
 * the classroom's content becomes the demo curriculum, and learners other than the demo's keep their rows.
 */
export async function seedDemo(db: Knex): Promise<string[]> {
  const hash = await hashPassword(D.password);
  const content = parseContentPackage(demoContentPackage());
  const roster = parseStudentsPackage(demoStudentsPackage(hash));
  const teachers = parseTeachersPackage([
    {
      schooluserid: D.teacher.schooluserid,
      schoolusername: D.teacher.schoolusername,
      schooluserpasswordhash: hash,
      schooluserstatus: true,
      schoolname: D.schoolname,
      isdisabled: false,
      isdeleted: false,
    },
  ]);
  try {
    await db.transaction(async (trx) => {
      // The demo learners may still point at the grade, level and lesson of an earlier demo curriculum, which the
      // content push removes; the roster below points them at the new ones.
      await trx('students').whereIn('studentid', D.learners.map((l) => l.studentid))
        .update({ gradeid: null, startinglevelid: null, studentcurrentlevelid: null, studentcurrentlessonid: null });
      await applyContent(trx, content);
      await applyTeachers(trx, teachers);
      await applyStudents(trx, roster);
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    // The content import names the learners in the way (409) before the database's foreign keys would refuse it.
    const inTheWay = err instanceof HttpError && err.status === 409;
    if (inTheWay || code === '23503' || code === 'SQLITE_CONSTRAINT_FOREIGNKEY') {
      throw new Error(
        'the demo curriculum replaces this classroom\'s curriculum, and a learner outside the demo still points at '
          + 'a grade, level or lesson it would remove; nothing was changed'
          + (inTheWay ? ` (${(err as Error).message})` : ''),
        { cause: err },
      );
    }
    throw err;
  }
  return [
    `classroom: demo school "${D.schoolname}", class "${D.standardname}", curriculum "${D.curriculumname}": 1 grade, ` +
      `2 levels each with a level quiz, 3 lessons each with a video, a practice and a quiz, ${DEMO_QUESTIONS.length} ` +
      `questions (template types 1–8), a baseline`,
    `classroom sign-ins (POST /auth/login): teacher ${D.teacher.schoolusername} / ${D.password}; ` +
      `learners ${D.learners.map((l) => l.schoolusername).join(', ')} / ${D.password}`,
  ];
}
