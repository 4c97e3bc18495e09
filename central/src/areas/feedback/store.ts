import crypto from 'node:crypto';
import type { Knex } from '@lms/db';
import { FEEDBACK_PREFIX, httpError } from '@lms/shared';
import { z } from 'zod';
import { filterMap, multiPagingBody, pageRows, type MultiPaging } from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';
import {
  FEEDBACK_IMAGE_MAX_BYTES,
  FEEDBACK_MAX_IMAGES,
  UPLOAD_CLAIM_MS,
  checkFeedbackName,
  decodeChecked,
  releaseClaim,
  takeClaim,
  type CheckedName,
} from '../../http/uploads';
import { isObjectNotFound, type ObjectStore, type StoredObject } from '../../objects';

/** The six parts of a teacher's feedback form, in the order the form shows them. */
export const SECTIONS = ['rpi', 'router', 'tablet', 'content', 'app', 'general'] as const;
type Section = (typeof SECTIONS)[number];

export const FEEDBACK_MESSAGES = {
  notTeacher: 'Please login as a teacher!',
  curriculum: 'Invalid Curriculum id',
  duplicate: 'Duplicate file name, please check and rename your file!',
  exists: (name: string) => `${name} already exists, please rename your file!`,
  created: 'feedback is created successfully!',
  tooMany: `At most ${FEEDBACK_MAX_IMAGES} pictures can be sent with one feedback`,
} as const;

const image = z.object({
  filename: z.string({ error: 'is required' }).max(300),
  content: z.string({ error: 'is required' }),
});
const section = z.looseObject({
  feedback: z.string({ error: 'must be a string' }).max(10_000).nullish(),
  selected_error: z.array(z.number({ error: 'must be a number' })).max(100).nullish(),
  images: z.array(image).max(FEEDBACK_MAX_IMAGES, { error: FEEDBACK_MESSAGES.tooMany }).nullish(),
});
/** The original read this body without a schema; what it reads is typed here and anything else ignored. */
export const feedbackBody = z.looseObject({
  teachername: z
    .string({ error: 'is required' })
    .max(255, { error: 'length must be less than or equal to 255 characters long' }),
  curriculumid: z.string({ error: 'is required' }).max(36),
  ...Object.fromEntries(SECTIONS.map((s) => [s, section.nullish()])),
}) as z.ZodType<
  { teachername: string; curriculumid: string } & Partial<Record<Section, z.infer<typeof section> | null>>
>;
export type FeedbackBody = z.infer<typeof feedbackBody>;

export const feedbackListBody = multiPagingBody;
export const feedbackParams = z.object({ feedbackid: z.string().uuid({ error: 'must be a valid GUID' }) });

interface Picture {
  section: Section;
  name: CheckedName;
  bytes: Buffer;
  /** `<schooluserid>_<section>_<epochms>.<ext>` */
  newname?: string;
}

/** Every picture of the form, checked (names, sizes, real types) before anything is stored. */
function checkedPictures(body: FeedbackBody): Picture[] {
  const out: Picture[] = [];
  for (const s of SECTIONS) {
    const seen = new Set<string>();
    for (const img of body[s]?.images ?? []) {
      const name = checkFeedbackName(img.filename);
      // The same picture attached twice to one part of the form.
      if (seen.has(name.key.toLowerCase())) throw httpError(400, FEEDBACK_MESSAGES.duplicate);
      seen.add(name.key.toLowerCase());
      out.push({ section: s, name, bytes: decodeChecked(img.content, name, FEEDBACK_IMAGE_MAX_BYTES) });
    }
  }
  if (out.length > FEEDBACK_MAX_IMAGES) throw httpError(400, FEEDBACK_MESSAGES.tooMany);
  return out;
}

/**
 * Gives each picture its store name and claims it, so that no other request writes the same object.
 * Two pictures of one part sent in the same millisecond would get one name: the time is moved on instead.
 */
async function claimNames(db: Knex, schooluserid: string, pictures: Picture[], claims: string[]): Promise<void> {
  let ms = Date.now();
  for (const p of pictures) {
    for (let attempt = 0; ; attempt += 1) {
      const newname = `${schooluserid}_${p.section}_${ms}.${p.name.ext}`;
      ms += 1;
      const claim = `name:${FEEDBACK_PREFIX}${newname}`;
      if (await takeClaim(db, claim, UPLOAD_CLAIM_MS)) {
        claims.push(claim);
        p.newname = newname;
        break;
      }
      if (attempt > 100) throw httpError(400, FEEDBACK_MESSAGES.exists(newname));
    }
  }
}

/**
 * A teacher's feedback with its pictures, all or nothing: every picture is checked before the first is
 * stored, and when a store write or the row fails, the pictures already stored are removed.
 */
export async function createFeedback(
  db: Knex,
  store: ObjectStore,
  body: FeedbackBody,
  schooluserid: string,
): Promise<string> {
  if (!(await db('curriculums').where({ curriculumid: body.curriculumid }).first('curriculumid')))
    throw httpError(400, FEEDBACK_MESSAGES.curriculum);
  const pictures = checkedPictures(body);
  const claims: string[] = [];
  const stored: StoredObject[] = [];
  let recorded = false;
  try {
    await claimNames(db, schooluserid, pictures, claims);
    for (const p of pictures) {
      const key = `${FEEDBACK_PREFIX}${p.newname}`;
      // An object no claim covers (left by an earlier system) is not written over.
      const there = await store.stat(key).then(() => true, (err: unknown) => {
        if (isObjectNotFound(err)) return false;
        throw err;
      });
      if (there) throw httpError(400, FEEDBACK_MESSAGES.exists(p.newname!));
    }
    for (const p of pictures)
      stored.push(await store.put(`${FEEDBACK_PREFIX}${p.newname}`, p.bytes, { contentType: p.name.contentType }));
    const feedback = Object.fromEntries(
      SECTIONS.map((s) => [
        s,
        {
          feedback: body[s]?.feedback ?? '',
          selected_error: body[s]?.selected_error ?? [],
          images: pictures.filter((p) => p.section === s).map((p) => p.newname),
        },
      ]),
    );
    const now = new Date().toISOString();
    await db.transaction(async (trx) => {
      await trx('feedbacks').insert({
        feedbackid: crypto.randomUUID(),
        feedback: JSON.stringify(feedback),
        image: JSON.stringify(pictures.map((p) => p.newname)),
        feedback3meta: JSON.stringify(stored),
        teachername: body.teachername,
        curriculumid: body.curriculumid,
        isdeleted: false,
        created_at: now,
        created_by: schooluserid,
        updated_at: now,
      });
    });
    recorded = true;
    return FEEDBACK_MESSAGES.created;
  } finally {
    if (!recorded) for (const s of stored) await store.delete(s.Key).catch(() => undefined);
    for (const c of claims) await releaseClaim(db, c);
  }
}

/** Feedback joined to the teacher who wrote it, the teacher's school and the curriculum, within the caller's scope. */
function joined(db: Knex, scope: Scope, left: boolean) {
  const q = db('feedbacks as f');
  const join = left ? 'leftJoin' : 'join';
  q[join]('schoolusers as u', 'u.schooluserid', 'f.created_by');
  q[join]('schools as s', 's.schoolname', 'u.schoolname');
  q[join]('curriculums as c', 'c.curriculumid', 'f.curriculumid');
  q.where('f.isdeleted', false);
  return applyScope(q, scope, { schoolid: 's.schoolid' });
}

const LIST_COLUMNS = [
  'f.feedbackid',
  'f.feedback',
  'f.image',
  'f.teachername',
  'f.created_at',
  'u.schooluserid',
  'u.schoolname as userschoolname',
  's.schoolname',
  's.countryid',
  'c.curriculumid',
  'c.curriculumname',
];

/**
 * The feedback page: newest first, filtered by country, school (name or id) and a period
 * (`startDate`, `endDate`: from the start to the end, or to now). Only feedback whose teacher, school
 * and curriculum exist is listed, as in the original.
 */
export async function listFeedback(db: Knex, body: MultiPaging, scope: Scope) {
  const f = filterMap(body);
  const base = joined(db, scope, false);
  const countries = f.get('countryid');
  if (countries) base.whereIn('s.countryid', countries);
  const schools = f.get('schoolname');
  if (schools) base.where((w) => w.whereIn('s.schoolname', schools).orWhereIn('s.schoolid', schools));
  const start = f.get('startDate')?.[0];
  const startAt = start ? new Date(start) : undefined;
  if (startAt && !Number.isNaN(startAt.getTime())) {
    const end = f.get('endDate')?.[0];
    const endAt = end && !Number.isNaN(new Date(end).getTime()) ? new Date(end) : new Date();
    base.whereBetween('f.created_at', [startAt.toISOString(), endAt.toISOString()]);
  }
  const page = await pageRows(
    base,
    body,
    [{ column: 'f.created_at', order: 'desc' }, { column: 'f.feedbackid' }],
    LIST_COLUMNS,
  );
  return {
    ...page,
    data: page.data.map((r) => ({
      feedbackid: r.feedbackid,
      feedback: r.feedback,
      image: r.image,
      teachername: r.teachername,
      created_at: r.created_at,
      schooluser: {
        schooluserid: r.schooluserid,
        schoolname: r.userschoolname,
        school: { schoolname: r.schoolname, countryid: r.countryid },
      },
      curriculum: { curriculumid: r.curriculumid, curriculumname: r.curriculumname },
    })),
  };
}

/** One feedback's text; null when there is none (or none the caller may see). */
export async function getFeedback(db: Knex, feedbackid: string, scope: Scope) {
  return (
    (await joined(db, scope, true)
      .where('f.feedbackid', feedbackid)
      .first('f.feedbackid', 'f.feedback', 'f.teachername')) ?? null
  );
}
