import { DEMO, seedDemoContent, type Knex } from '@lms/db';
import { hashPassword } from '../auth/passwords';

const id = (n: number) => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** Fixed ids of the classroom demo content beyond the shared skeleton (DEMO). */
export const CLASSROOM_DEMO = {
  lesson2id: id(101),
  document: { video: id(110), audio: id(111), plan: id(112) },
  learningid: id(120),
  learning2id: id(121),
  planid: id(125),
  practiceid: id(130),
  quizid: id(140),
  questions: [id(150), id(151), id(152), id(153)],
  practicequestions: [id(160), id(161)],
  quizquestions: [id(170), id(171), id(172)],
  levelquizquestions: [id(180), id(181)],
  baselineid: id(190),
  baselinequestions: [id(191), id(192)],
  teacher: { schooluserid: id(200), schoolusername: 'demo.teacher' },
  students: [
    { schooluserid: id(210), studentid: id(211), schoolusername: 'demo.student', first: 'Amina', last: 'Okafor', genderid: 2 },
    { schooluserid: id(220), studentid: id(221), schoolusername: 'demo.student2', first: 'Jonas', last: 'Meyer', genderid: 1 },
  ],
  password: 'demo',
} as const;

const question = (questionid: string, n: number, text: string, options: string[], correct: number) => ({
  questionid,
  questionheading: JSON.stringify({ text: `Question ${n}` }),
  questionoptions: JSON.stringify(options),
  questiontext: text,
  questiondistractors: JSON.stringify([]),
  questionfile: null,
  templatetypeid: 1,
  questionidentifier: `DEMO-Q${n}`,
  questioncorrectvalue: correct,
  questionfeedback: JSON.stringify({ correct: 'Well done!', incorrect: 'Try counting again.' }),
});

/** Demo data for development and test; returns the lines to print (sign-ins and what was loaded). */
export async function seedDemo(db: Knex): Promise<string[]> {
  await seedDemoContent(db);
  const c = CLASSROOM_DEMO;
  const hash = await hashPassword(c.password);
  const rows: Array<[string, string, Array<Record<string, unknown>>]> = [
    ['lessons', 'lessonid', [
      { lessonid: DEMO.lessonid, levelid: DEMO.levelid, lessonname: DEMO.lessonname, lessonorder: 1, lessonstatus: true },
      { lessonid: c.lesson2id, levelid: DEMO.levelid, lessonname: 'Lesson 2: Adding small numbers', lessonorder: 2, lessonstatus: true },
    ]],
    ['levels', 'levelid', [{ levelid: DEMO.levelid, gradeid: DEMO.gradeid, levelname: DEMO.levelname, levelorder: 1, levelstatus: true, quiz_points: 50 }]],
    ['documents', 'documentid', [
      { documentid: c.document.video, documenttypeid: 2, documentname: 'counting-to-ten.mp4' },
      { documentid: c.document.audio, documenttypeid: 1, documentname: 'adding-song.mp3' },
      { documentid: c.document.plan, documenttypeid: 3, documentname: 'counting-plan.pdf' },
    ]],
    ['lessonlearnings', 'lessonlearningid', [
      { lessonlearningid: c.learningid, lessonlearningname: 'Watch: counting to ten', lessonlearningdescription: 'A short video', lessonid: DEMO.lessonid, documentid: c.document.video, lessonlearningorder: 1, points: 10 },
      { lessonlearningid: c.learning2id, lessonlearningname: 'Listen: the adding song', lessonlearningdescription: 'A song', lessonid: c.lesson2id, documentid: c.document.audio, lessonlearningorder: 1, points: 10 },
    ]],
    ['lessonplans', 'lessonplanid', [
      { lessonplanid: c.planid, lessonplanname: 'Teaching counting', lessonplandescription: 'Plan for the teacher', lessonid: DEMO.lessonid, documentid: c.document.plan, lessonplanorder: 1 },
    ]],
    ['lessonpractices', 'lessonpracticeid', [
      { lessonpracticeid: c.practiceid, lessonid: DEMO.lessonid, lessonpracticeorder: 1, lessonpracticename: 'Practice counting', lessonpracticedescription: 'Count the apples', points: 20 },
    ]],
    ['lessonquizzes', 'lessonquizid', [
      { lessonquizid: c.quizid, lessonid: DEMO.lessonid, lessonquizorder: 1, lessonquizname: 'Counting quiz', lessonquizdescription: 'Three questions', points: 30 },
    ]],
    ['questions', 'questionid', [
      question(c.questions[0], 1, 'How many apples?', ['3', '4', '5'], 1),
      question(c.questions[1], 2, 'What comes after 6?', ['5', '7', '8'], 1),
      question(c.questions[2], 3, 'How many fingers on one hand?', ['4', '5', '6'], 1),
      question(c.questions[3], 4, 'What is 2 + 3?', ['5', '6', '4'], 0),
    ]],
    ['lessonpracticequestions', 'lessonpracticequestionid', [
      { lessonpracticequestionid: c.practicequestions[0], lessonpracticeid: c.practiceid, questionid: c.questions[0], lessonpracticequestionorder: 1 },
      { lessonpracticequestionid: c.practicequestions[1], lessonpracticeid: c.practiceid, questionid: c.questions[1], lessonpracticequestionorder: 2 },
    ]],
    ['lessonquizquestions', 'lessonquizquestionid', [
      { lessonquizquestionid: c.quizquestions[0], lessonquizid: c.quizid, questionid: c.questions[0], lessonquizquestionorder: 1 },
      { lessonquizquestionid: c.quizquestions[1], lessonquizid: c.quizid, questionid: c.questions[1], lessonquizquestionorder: 2 },
      { lessonquizquestionid: c.quizquestions[2], lessonquizid: c.quizid, questionid: c.questions[2], lessonquizquestionorder: 3 },
    ]],
    ['levelquizquestions', 'levelquizquestionid', [
      { levelquizquestionid: c.levelquizquestions[0], levelid: DEMO.levelid, questionid: c.questions[2], levelquizquestionorder: 1, lessonid: DEMO.lessonid },
      { levelquizquestionid: c.levelquizquestions[1], levelid: DEMO.levelid, questionid: c.questions[3], levelquizquestionorder: 2, lessonid: c.lesson2id },
    ]],
    ['curriculumbaseline', 'curriculumbaselineid', [
      { curriculumbaselineid: c.baselineid, curriculumid: DEMO.curriculumid, baselineid: c.baselineid, baselinename: 'Start of year check', baselinetype: 1, baselinestatus: true, schoolid: JSON.stringify([DEMO.schoolid]) },
    ]],
    ['baselinequestion', 'baselinequestionid', [
      { baselinequestionid: c.baselinequestions[0], curriculumbaselineid: c.baselineid, questionid: c.questions[0], baselinequestionstatus: true, baselinequestionorder: 1 },
      { baselinequestionid: c.baselinequestions[1], curriculumbaselineid: c.baselineid, questionid: c.questions[3], baselinequestionstatus: true, baselinequestionorder: 2 },
    ]],
    ['schoolusers', 'schooluserid', [
      { schooluserid: c.teacher.schooluserid, schoolusername: c.teacher.schoolusername, schooluserpasswordhash: hash, schooluserrole: 3, schoolname: DEMO.schoolname },
      ...c.students.map((s) => ({ schooluserid: s.schooluserid, schoolusername: s.schoolusername, schooluserpasswordhash: hash, schooluserrole: 4, schoolname: DEMO.schoolname })),
    ]],
    ['students', 'studentid', c.students.map((s) => ({
      studentid: s.studentid, studentfirstname: s.first, studentlastname: s.last, genderid: s.genderid, standard: DEMO.standardname, schoolname: DEMO.schoolname,
      city: 'Demo Town', country: DEMO.countryname, state: 'Demo State', curriculumid: DEMO.curriculumid, curriculumids: JSON.stringify([DEMO.curriculumid]),
      gradeid: DEMO.gradeid, startinglevelid: DEMO.levelid, studentcurrentlevelid: DEMO.levelid, studentcurrentlessonid: DEMO.lessonid, isactive: true,
      schooluserid: s.schooluserid, dateofjoin: '2026-01-05T00:00:00.000Z',
    }))],
  ];
  await db.transaction(async (trx) => {
    for (const [table, key, list] of rows) {
      for (const row of list) await trx(table).insert(row).onConflict(key).merge();
    }
  });
  return [
    `classroom: demo school "${DEMO.schoolname}" with curriculum "${DEMO.curriculumname}" (1 grade, 1 level, 2 lessons, a practice, a quiz, a level quiz, a baseline)`,
    `classroom sign-ins (POST /auth/login): teacher ${c.teacher.schoolusername} / ${c.password}; learners ${c.students.map((s) => s.schoolusername).join(', ')} / ${c.password}`,
  ];
}
