// The demo data set's fixed ids and names. Both databases' demo seeds write these rows, so that a classroom
// server seeded on its own holds what central would push to it, and the admin UI's and learner app's local
// set-ups can rely on the ids and sign-ins of the original system's demo data.

/** The original demo data set numbers its ids with a hexadecimal counter in the last group. */
const b = (n: number): string => `b0000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
/** Sign-ins central's roster holds with these ids: a classroom's activity log then names learners central knows. */
const d = (n: number): string => `d0000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export interface DemoLesson {
  lessonid: string;
  lessonname: string;
  lessonorder: number;
  documentid: string;
  documentname: string;
  lessonlearningid: string;
  lessonlearningname: string;
  lessonpracticeid: string;
  lessonpracticename: string;
  lessonquizid: string;
  lessonquizname: string;
  /** The questions of the lesson; each one sits in both its practice and its quiz, in this order. */
  questionids: readonly string[];
  /** Link rows, one per question and in the same order as `questionids`. */
  lessonpracticequestionids: readonly string[];
  lessonquizquestionids: readonly string[];
}

export interface DemoLearner {
  schooluserid: string;
  studentid: string;
  schoolusername: string;
  studentfirstname: string;
  studentlastname: string;
  genderid: number;
}

/** The eight template-type questions of lessons 1 and 2, then the two of level 2's lesson. */
const questionids = Array.from({ length: 10 }, (_, i) => b(0x100 + i));

function lesson(
  n: 0 | 1,
  fields: Omit<DemoLesson, 'questionids' | 'lessonpracticequestionids' | 'lessonquizquestionids' | 'lessonorder'>,
): DemoLesson {
  const slice = questionids.slice(n * 4, n * 4 + 4);
  return {
    ...fields,
    lessonorder: n + 1,
    questionids: slice,
    lessonpracticequestionids: slice.map((_, i) => b(0x300 + n * 4 + i)),
    lessonquizquestionids: slice.map((_, i) => b(0x400 + n * 4 + i)),
  };
}

export const DEMO_IDS = {
  countryid: b(0x1),
  countryname: 'Cambodia',
  schoolid: b(0x2),
  schoolname: 'Demo Primary School',
  /** The class. Learners' `students.standard` holds this id, never the name. */
  standardid: b(0x3),
  standardname: 'Class 4A',
  subjectid: b(0x4),
  subjectname: 'Foundational Skills',
  curriculumid: b(0x5),
  curriculumname: 'Demo Curriculum',
  /** Central's curriculum–country link (the classroom has no such table). */
  curriculumcountryid: b(0x6),
  gradeid: b(0x7),
  gradename: 'Grade 1',
  levelid: b(0x8),
  levelname: 'Level 1',
  lessons: [
    lesson(0, {
      lessonid: b(0x9),
      lessonname: 'Counting to ten',
      documentid: b(0xb),
      documentname: 'demo/counting-to-ten.mp4',
      lessonlearningid: b(0xd),
      lessonlearningname: 'Counting to ten video',
      lessonpracticeid: b(0xf),
      lessonpracticename: 'Counting to ten practice',
      lessonquizid: b(0x11),
      lessonquizname: 'Counting to ten quiz',
    }),
    lesson(1, {
      lessonid: b(0xa),
      lessonname: 'Reading simple words',
      documentid: b(0xc),
      documentname: 'demo/reading-simple-words.mp4',
      lessonlearningid: b(0xe),
      lessonlearningname: 'Reading simple words video',
      lessonpracticeid: b(0x10),
      lessonpracticename: 'Reading simple words practice',
      lessonquizid: b(0x12),
      lessonquizname: 'Reading simple words quiz',
    }),
  ] as const,
  /**
   * One question per template type the tablet renders and a curriculum author can fill in (1–8, in order,
   * lessons 1 and 2), then level 2's two.
   */
  questionids,
  /** Beyond the original data set: a level quiz (one question of each lesson), a baseline check and a lesson plan. */
  levelquiz: { levelquizquestionids: [b(0x500), b(0x501)], questionids: [questionids[0], questionids[4]] },
  /** Beyond the original data set too: a second level of one lesson, with a level quiz of its own. */
  level2: {
    levelid: b(0x800),
    levelname: 'Level 2',
    lesson: {
      lessonid: b(0x801),
      lessonname: 'Adding within ten',
      lessonorder: 1,
      documentid: b(0x802),
      documentname: 'demo/adding-within-ten.mp4',
      lessonlearningid: b(0x803),
      lessonlearningname: 'Adding within ten video',
      lessonpracticeid: b(0x804),
      lessonpracticename: 'Adding within ten practice',
      lessonquizid: b(0x805),
      lessonquizname: 'Adding within ten quiz',
      questionids: questionids.slice(8, 10),
      lessonpracticequestionids: [b(0x810), b(0x811)],
      lessonquizquestionids: [b(0x820), b(0x821)],
    } satisfies DemoLesson,
    levelquiz: { levelquizquestionids: [b(0x830), b(0x831)], questionids: questionids.slice(8, 10) },
  },
  /**
   * Results central holds before any classroom log arrives, so that its reports show something: every
   * learner of the original data set did the practice and the quiz of lessons 1 and 2.
   */
  progressids: Array.from({ length: 12 }, (_, i) => b(0x200 + i)),
  baseline: {
    curriculumbaselineid: b(0x600),
    baselinename: 'Start of year check',
    baselinequestionids: [b(0x601), b(0x602)],
    questionids: [questionids[0], questionids[7]],
  },
  lessonplan: {
    lessonplanid: b(0x700),
    lessonplanname: 'Teaching counting',
    documentid: b(0x701),
    documentname: 'demo/teaching-counting.pdf',
  },
  password: 'demo',
  teacher: { schooluserid: d(200), schoolusername: 'demo.teacher' },
  /** Every learner sits in the one demo class. */
  learners: [
    {
      schooluserid: d(210),
      studentid: d(211),
      schoolusername: 'demo.student',
      studentfirstname: 'Amina',
      studentlastname: 'Okafor',
      genderid: 2,
    },
    {
      schooluserid: d(220),
      studentid: d(221),
      schoolusername: 'demo.student2',
      studentfirstname: 'Jonas',
      studentlastname: 'Meyer',
      genderid: 1,
    },
    {
      schooluserid: b(0x20),
      studentid: b(0x21),
      schoolusername: 'demo.sophea',
      studentfirstname: 'Sophea',
      studentlastname: 'Chan',
      genderid: 2,
    },
    {
      schooluserid: b(0x22),
      studentid: b(0x23),
      schoolusername: 'demo.dara',
      studentfirstname: 'Dara',
      studentlastname: 'Sok',
      genderid: 1,
    },
    {
      schooluserid: b(0x24),
      studentid: b(0x25),
      schoolusername: 'demo.bopha',
      studentfirstname: 'Bopha',
      studentlastname: 'Neang',
      genderid: 2,
    },
  ] as const satisfies readonly DemoLearner[],
} as const;
