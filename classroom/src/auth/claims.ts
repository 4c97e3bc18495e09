import type { Knex } from '@lms/db';

/** Dates of birth and joining are rendered as the original did (en-ZA locale: YYYY/MM/DD). */
function zaDate(value: unknown): string | null {
  if (!value) return null;
  const d = new Date(String(value));
  if (Number.isNaN(d.getTime())) return null;
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())}`;
}

export interface SchoolUserRow {
  schooluserid: string;
  schoolusername: string;
  schooluserrole: number;
  schoolname: string | null;
}

/**
 * The profile claims of a classroom access token. The learner app decodes the token and uses these as the
 * profile, so a learner's student fields travel in it; a user without a students row gets only the two name
 * claims the app's drawer reads.
 */
export async function profileClaims(
  db: Knex,
  user: SchoolUserRow,
  // The user's students row when the caller has read it already (null: none).
  studentRow?: Record<string, unknown> | null,
): Promise<Record<string, unknown>> {
  const student =
    studentRow === undefined ? await db('students').where('schooluserid', user.schooluserid).first() : studentRow;
  const schoolname: string = (student?.schoolname || user.schoolname || '') as string;
  const school = schoolname
    ? await db('schools')
        .whereRaw('lower(schoolname) = ?', [schoolname.toLowerCase()])
        .andWhere('isdeleted', false)
        .first('schoolid', 'uitheme')
    : undefined;
  const base: Record<string, unknown> = {
    schooluserid: user.schooluserid,
    schoolusername: user.schoolusername,
    schooluserrole: Number(user.schooluserrole),
    schoolname,
    baselineid: null,
    baselinepassed: false,
    is_teacher_acc: student?.is_teacher_acc === true,
    uitheme: school?.uitheme === 'corporate' ? 'corporate' : 'kids',
    schoolid: school?.schoolid ?? null,
  };
  // The app's drawer shows "<studentfirstname> <studentlastname>" for every user: a teacher (no students row)
  // gets the account name there instead of "undefined undefined".
  if (!student) return { ...base, studentfirstname: user.schoolusername, studentlastname: '' };
  return {
    ...base,
    studentid: student.studentid,
    studentfirstname: student.studentfirstname,
    studentlastname: student.studentlastname ?? null,
    familyname: student.familyname ?? null,
    fathername: student.fathername ?? null,
    mothername: student.mothername ?? null,
    contact: student.contact ?? null,
    city: student.city ?? null,
    state: student.state ?? null,
    country: student.country ?? null,
    standard: student.standard ?? null,
    schooltype: student.schooltype ?? null,
    profileimage: student.profileimage ?? null,
    genderid: student.genderid === null || student.genderid === undefined ? null : Number(student.genderid),
    dateofbirth: zaDate(student.dateofbirth),
    dateofjoin: zaDate(student.dateofjoin),
    curriculumid: student.curriculumid,
    // A real array: the app and GET /curriculum/subjects treat it as a list.
    curriculumids: Array.isArray(student.curriculumids)
      ? student.curriculumids
      : student.curriculumid
        ? [student.curriculumid]
        : [],
    startinglevelid: student.startinglevelid ?? null,
    studentcurrentlevelid: student.studentcurrentlevelid ?? null,
    studentcurrentlessonid: student.studentcurrentlessonid ?? null,
  };
}
