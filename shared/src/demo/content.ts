import { DEMO_IDS } from './ids';

// What the demo curriculum holds beyond its ids: point values and the questions, in the central question
// format (the one the admin UI authors and the learner app renders).

/** The descriptions of the demo rows, and where its learners live: the same on both servers. */
export const DEMO_TEXT = {
  subject: 'Demo subject',
  curriculum: 'Demo curriculum',
  grade: 'Demo grade',
  level: 'Demo level',
  lesson: 'Demo lesson',
  learning: 'Demo learning video',
  practice: 'Demo practice set',
  quiz: 'Demo quiz',
  plan: 'Plan for the teacher',
  school: {
    schooltype: 'Public',
    city: 'Phnom Penh',
    state: 'Phnom Penh',
    expectedcontribution: 25,
    expectedusage: 40,
    uitheme: 'kids',
  },
} as const;

/** The documents the demo's learnings and plan show (their files ship in classroom/demo-media/). */
export const DEMO_DOCUMENTS = [
  ...[...DEMO_IDS.lessons, DEMO_IDS.level2.lesson].map((l) => ({
    documentid: l.documentid,
    documentname: l.documentname,
    documenttypeid: 2,
  })),
  { documentid: DEMO_IDS.lessonplan.documentid, documentname: DEMO_IDS.lessonplan.documentname, documenttypeid: 5 },
];

/** Point values of the demo content (a lesson is worth 100: its video 20, its practice 40, its quiz 40). */
export const DEMO_POINTS = {
  learning: 20,
  practice: 40,
  quiz: 40,
  /** What passing the level quiz adds to the level. */
  levelquiz: 20,
  lesson: 100,
  passing: 80,
} as const;

export interface DemoFile {
  filename: string;
  filetype: number;
  fileext: string;
}

export interface DemoQuestionOption {
  questionoptionid: string;
  questionoptiontext: string;
  questionoptionvalue: string;
  questionoptioniscorrect: boolean;
  questionoptionsequence: number;
  questionoptionistext: boolean;
  questionoptionisfraction: boolean;
  questionoptionisstaticfile: boolean;
  questionoptionfile: DemoFile | null;
  questionassociate: {
    questionoptionid: string;
    questionassociatetext: string;
    questionassociatefile: DemoFile | null;
  } | null;
  questionoptionnumeratorisstatic: boolean;
  questionoptionnumeratorvalue: string;
  questionoptiondenominatorisstatic: boolean;
  questionoptiondenominatorvalue: string;
}

export interface DemoQuestion {
  questionid: string;
  questionidentifier: string;
  templatetypeid: number;
  questionheading: { headingtext: string; headingfile: DemoFile | null };
  questiontext: string;
  questionoptions: DemoQuestionOption[];
  questiondistractors: Array<{ questiondistractorid: string; questiondistractortext: string }>;
  questionfile: DemoFile | null;
  questionfeedback: { correctmessage: string; incorrectmessage: string };
  questiontags: string[];
  questioncorrectvalue: number;
}

interface OptionSpec {
  text: string;
  correct: boolean;
  /** An image option: the file the app resolves against its media folder. */
  image?: string;
  /** Template 7: the text this option is matched with. */
  associate?: string;
}

const image = (filename: string): DemoFile => ({
  filename,
  filetype: 6,
  fileext: filename.slice(filename.lastIndexOf('.') + 1),
});

/** Option ids are unique across questions: the matching template keys its drop targets on them. */
function options(questionid: string, specs: OptionSpec[]): DemoQuestionOption[] {
  return specs.map((o, i) => {
    const questionoptionid = `${questionid}-opt-${i + 1}`;
    return {
      questionoptionid,
      questionoptiontext: o.text,
      questionoptionvalue: o.text,
      questionoptioniscorrect: o.correct,
      questionoptionsequence: i + 1,
      questionoptionistext: !o.image,
      questionoptionisfraction: false,
      questionoptionisstaticfile: false,
      questionoptionfile: o.image ? image(o.image) : null,
      questionassociate: o.associate
        ? { questionoptionid, questionassociatetext: o.associate, questionassociatefile: null }
        : null,
      questionoptionnumeratorisstatic: false,
      questionoptionnumeratorvalue: '',
      questionoptiondenominatorisstatic: false,
      questionoptiondenominatorvalue: '',
    };
  });
}

interface QuestionSpec {
  templatetypeid: number;
  identifier: string;
  /** The heading the app shows; also the question text, except for a fill-in-the-blank sentence. */
  heading: string;
  /** Template 8: the sentence, `-----` marking the blank. */
  text?: string;
  options: OptionSpec[];
  distractors?: string[];
  correct: string;
  incorrect: string;
}

const SPECS: QuestionSpec[] = [
  {
    templatetypeid: 1,
    identifier: 'DEMO-T01-mcq-single-text',
    heading: 'Which number is larger?',
    options: [
      { text: '7', correct: false },
      { text: '12', correct: true },
      { text: '3', correct: false },
    ],
    correct: 'Yes: 12 is the largest of the three.',
    incorrect: 'Count up from 3: which number do you reach last?',
  },
  {
    templatetypeid: 2,
    identifier: 'DEMO-T02-mcq-single-image',
    heading: 'Tap the triangle.',
    options: [
      { text: 'triangle', correct: true, image: 'triangle.png' },
      { text: 'square', correct: false, image: 'square.png' },
    ],
    correct: 'That is the triangle: it has three sides.',
    incorrect: 'A triangle has three sides. Count the sides of each shape.',
  },
  {
    templatetypeid: 3,
    identifier: 'DEMO-T03-mcq-multi-text',
    heading: 'Select every even number.',
    options: [
      { text: '2', correct: true },
      { text: '5', correct: false },
      { text: '8', correct: true },
    ],
    correct: 'Right: 2 and 8 are even.',
    incorrect: 'An even number splits into two equal groups. Try 2, 5 and 8.',
  },
  {
    templatetypeid: 4,
    identifier: 'DEMO-T04-mcq-multi-image',
    heading: 'Select every shape with four sides.',
    options: [
      { text: 'square', correct: true, image: 'square.png' },
      { text: 'circle', correct: false, image: 'circle.png' },
      { text: 'rectangle', correct: true, image: 'rectangle.png' },
    ],
    correct: 'Yes: the square and the rectangle have four sides each.',
    incorrect: 'A circle has no sides. Look for the shapes with four.',
  },
  {
    templatetypeid: 5,
    identifier: 'DEMO-T05-order-text',
    heading: 'Put these words in order to make a sentence.',
    options: [
      { text: 'The', correct: true },
      { text: 'dog', correct: true },
      { text: 'runs', correct: true },
    ],
    correct: 'The dog runs. Well read!',
    incorrect: 'A sentence starts with a capital letter. Which word has one?',
  },
  {
    templatetypeid: 6,
    identifier: 'DEMO-T06-order-image',
    heading: 'Put the pictures in the order the story happens.',
    options: [
      { text: 'story-1', correct: true, image: 'story-1.png' },
      { text: 'story-2', correct: true, image: 'story-2.png' },
      { text: 'story-3', correct: true, image: 'story-3.png' },
    ],
    correct: 'That is how the story goes.',
    incorrect: 'What happens first? Start with that picture.',
  },
  {
    templatetypeid: 7,
    identifier: 'DEMO-T07-associate',
    heading: 'Match each word to the word it rhymes with.',
    options: [
      { text: 'cat', correct: true, associate: 'hat' },
      { text: 'dog', correct: true, associate: 'log' },
    ],
    correct: 'Cat and hat, dog and log: they rhyme.',
    incorrect: 'Say the words aloud and listen to how they end.',
  },
  {
    templatetypeid: 8,
    identifier: 'DEMO-T08-fill-blank',
    heading: 'Fill in the missing word.',
    text: 'The cat sat on the -----.',
    options: [{ text: 'mat', correct: true }],
    distractors: ['hat', 'dog'],
    correct: 'The cat sat on the mat.',
    incorrect: 'Which word rhymes with cat and is something to sit on?',
  },
  {
    templatetypeid: 1,
    identifier: 'DEMO-L2-add-single',
    heading: 'What is 3 + 4?',
    options: [
      { text: '6', correct: false },
      { text: '7', correct: true },
      { text: '8', correct: false },
    ],
    correct: 'Yes: 3 and 4 more make 7.',
    incorrect: 'Start at 3 and count on four more.',
  },
  {
    templatetypeid: 3,
    identifier: 'DEMO-L2-add-multi',
    heading: 'Select every sum that makes 10.',
    options: [
      { text: '4 + 6', correct: true },
      { text: '3 + 5', correct: false },
      { text: '7 + 3', correct: true },
    ],
    correct: 'Right: 4 + 6 and 7 + 3 both make 10.',
    incorrect: 'Add each pair on your fingers: which ones reach 10?',
  },
];

/** The demo questions, one per renderable template type (1–8), then level 2's; ids in `DEMO_IDS.questionids` order. */
export const DEMO_QUESTIONS: DemoQuestion[] = SPECS.map((s, i) => {
  const questionid = DEMO_IDS.questionids[i];
  return {
    questionid,
    questionidentifier: s.identifier,
    templatetypeid: s.templatetypeid,
    questionheading: { headingtext: s.heading, headingfile: null },
    questiontext: s.text ?? s.heading,
    questionoptions: options(questionid, s.options),
    questiondistractors: (s.distractors ?? []).map((text, j) => ({
      questiondistractorid: `${questionid}-dis-${j + 1}`,
      questiondistractortext: text,
    })),
    questionfile: null,
    questionfeedback: { correctmessage: s.correct, incorrectmessage: s.incorrect },
    questiontags: ['demo'],
    questioncorrectvalue: 0,
  };
});
