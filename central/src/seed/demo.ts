import { DEMO, seedDemoContent, type Knex } from '@lms/db';

/** Demo data for development and test; returns the lines to print (sign-ins and what was loaded). */
export async function seedDemo(db: Knex): Promise<string[]> {
  await seedDemoContent(db);
  return [`central: demo school "${DEMO.schoolname}" with curriculum "${DEMO.curriculumname}"`];
}
