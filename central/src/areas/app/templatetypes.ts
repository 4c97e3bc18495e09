/** The question template types the question editor offers (ids are referenced by questions.templatetypeid). */
const NAMES = [
  'MCQ (Single response) Text and Audio',
  'MCQ (Single response) Picture',
  'MCQ (Multi Correct) Text and Audio',
  'MCQ (Multi Correct) Picture',
  'Correct Ordering (Text sequence)',
  'Correct Ordering (Pic sequence)',
  'Associate',
  'Fill in the blanks',
  'Q-Text & Audio-A-Audio',
  'Q-Text-A-Audio',
  'Q-Audio-A-Text',
  'Q-Text-A-Image',
  'Q-Audio-A-Audio',
  'Q-Text-A-Text',
  'Q-Image-A-Text',
  'Q-Image-A-Image',
  'Q-Audio-A-Image',
  'DOption1',
  'DOption3',
  'DOption4',
  'FOption1',
  'FOption2',
  'FOption4',
  'Fraction',
];

export interface TemplateType {
  templatename: string;
  oldtemplatename: string;
  templateinstructions: string;
  templateid: number;
  oldtemplateid: number;
}

export const templateTypes: readonly TemplateType[] = Object.freeze(
  NAMES.map((name, i) => ({
    templatename: name,
    oldtemplatename: name,
    // The original's last two instructions carry a trailing space; clients display them as they are.
    templateinstructions: i >= 22 ? `${name} ` : name,
    templateid: i + 1,
    oldtemplateid: i + 1,
  })),
);
