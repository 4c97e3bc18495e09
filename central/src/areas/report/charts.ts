import { streamRows, type Knex } from '@lms/db';
import { z } from 'zod';
import { applyScope, type Scope } from '../../http/scope';

/** The database and the caller's scope. */
type Where = { db: Knex; scope: Scope };
import { anyCountry, monthsBefore, notTeacherAccount, num, startOfMonth } from './values';

// The dashboards and charts (contract §16.1): counts only, never a learner row, each one or a few
// aggregate queries whatever the number of learners. Deleted schools, learners and teachers, and the
// learner rows of teachers' own accounts, are not counted anywhere, so that the dashboard's pies add up
// to the same learners.

const queryText = (max: number) => z.string().max(max, { error: `must be at most ${max} characters` }).optional();

/** `countryid` and `schoolname` of the pies (the admin UI sends both, often empty). */
export const reachQuery = z.looseObject({ countryid: queryText(100), schoolname: queryText(250) });
type Reach = z.infer<typeof reachQuery>;

/** Learners of the charts: a country (by the name learners carry), a school by exact name, the caller's scope. */
function reachLearners(db: Knex, scope: Scope, q: Reach): Knex.QueryBuilder {
  const b = notTeacherAccount(db('students as s').where('s.isdeleted', false));
  // A country that does not exist matches no learner (the comparison with null is never true).
  if (!anyCountry(q.countryid))
    b.where('s.country', db('countries').where('countryid', q.countryid!).select('countryname'));
  // No `all` convention for the school (contract): `schoolname=all` names a school nobody attends.
  if (q.schoolname) b.where('s.schoolname', q.schoolname);
  return applyScope(b, scope, { schoolname: 's.schoolname' });
}

const sumWhen = (db: Knex, condition: string, alias: string) =>
  db.raw(`coalesce(sum(case when ${condition} then 1 else 0 end), 0) as ??`, [alias]);

/** GET /report/gender: girls (genderid 2), then boys (1). */
export async function genderCounts({ db, scope }: Where, q: Reach) {
  const row = await reachLearners(db, scope, q).first(
    sumWhen(db, 's.genderid = 2', 'girls'),
    sumWhen(db, 's.genderid = 1', 'boys'),
  );
  return [
    { name: 'girls', value: num(row?.girls) },
    { name: 'boys', value: num(row?.boys) },
  ];
}

const WG = ['wg_seeing', 'wg_hearing', 'wg_walking', 'wg_remembering', 'wg_selfcare', 'wg_communicating'];
/** The Washington Group's cutoff: "a lot of difficulty" (3) or "cannot do at all" (4) in any domain. */
const WG_CUTOFF = 3;

/** GET /report/disability: with a disability, without, not asked (counts only). */
export async function disabilityCounts({ db, scope }: Where, q: Reach) {
  const collected = WG.map((c) => `s.${c} is not null`).join(' or ');
  const withDisability = WG.map((c) => `s.${c} >= ${WG_CUTOFF}`).join(' or ');
  const row = await reachLearners(db, scope, q).first(
    db.raw('count(*) as total'),
    sumWhen(db, collected, 'collected'),
    sumWhen(db, withDisability, 'disabled'),
  );
  const total = num(row?.total);
  const asked = num(row?.collected);
  const disabled = num(row?.disabled);
  return [
    { name: 'with disability', value: disabled },
    { name: 'no disability', value: asked - disabled },
    { name: 'not collected', value: total - asked },
  ];
}

/** GET /report/offlineonline: active learners by the app they use. */
export async function offlineOnlineCounts({ db, scope }: Where, q: Reach) {
  const row = await reachLearners(db, scope, q)
    .where('s.isactive', true)
    .first(sumWhen(db, "s.type = 'online'", 'online'), sumWhen(db, "s.type = 'offline'", 'offline'));
  return [
    { name: 'Online', value: num(row?.online) },
    { name: 'Offline', value: num(row?.offline) },
  ];
}

// ---- GET /report/dashboard ---------------------------------------------------------------------------

export const dashboardQuery = z.looseObject({
  countryid: queryText(100),
  year: z.string().regex(/^\d{4}$/, { error: 'must be a year' }).optional(),
});

/**
 * Schools, learners and teachers added up to the end of each month of `year`, cumulative from the
 * beginning (January's window starts at the epoch), each series preceded by a point dated the day before
 * 1 January carrying January's figure (the admin UI's line chart is drawn from it). One query per series:
 * twelve conditional counts over the rows created before the year's end.
 */
export async function dashboardSeries({ db, scope }: Where, q: z.infer<typeof dashboardQuery>, now = new Date()) {
  const year = q.year ? Number(q.year) : now.getUTCFullYear();
  const ends = Array.from({ length: 12 }, (_, m) => new Date(Date.UTC(year, m + 1, 1)));
  const cumulative = async (base: Knex.QueryBuilder, column: string): Promise<number[]> => {
    const row = await base
      .where(column, '<', ends[11])
      .first(
        ...ends.map((end, m) =>
          db.raw(`coalesce(sum(case when ${column} < ? then 1 else 0 end), 0) as ??`, [end, `m${m}`]),
        ),
      );
    return ends.map((_, m) => num(row?.[`m${m}`]));
  };
  const country = anyCountry(q.countryid) ? undefined : q.countryid!;

  const schools = db('schools as sc').where('sc.isdeleted', false);
  if (country) schools.where('sc.countryid', country);
  applyScope(schools, scope, { schoolid: 'sc.schoolid' });

  const learners = notTeacherAccount(db('students as s').where('s.isdeleted', false));
  if (country) learners.where('s.country', db('countries').where('countryid', country).select('countryname'));
  applyScope(learners, scope, { schoolname: 's.schoolname' });

  const teachers = db('schoolusers as u')
    .join('schools as sc', 'sc.schoolname', 'u.schoolname')
    .where('u.schooluserrole', 3)
    .where('u.isdeleted', false);
  if (country) teachers.where('sc.countryid', country);
  applyScope(teachers, scope, { schoolid: 'sc.schoolid' });

  const names = [
    new Date(Date.UTC(year - 1, 11, 31)),
    ...Array.from({ length: 12 }, (_, m) => new Date(Date.UTC(year, m, 1))),
  ].map((d) => d.toISOString());
  const series = (name: string, values: number[]) => ({
    name,
    series: [values[0], ...values].map((value, i) => ({ name: names[i], value })),
  });
  return [
    series('Schools', await cumulative(schools, 'sc.created_at')),
    series('Students', await cumulative(learners, 's.created_at')),
    series('Teachers', await cumulative(teachers, 'u.created_at')),
  ];
}

// ---- GET /report/dashboard/country/:countryid, /dashboard/school/:schoolname ---------------------------

export const countryParams = z.object({ countryid: z.string().max(100) });
export const schoolParams = z.object({ schoolname: z.string().max(250) });

const countOf = (q: Knex.QueryBuilder) => q.clearSelect().count('*');

/** School users of a role whose school (by name) matches `where`, within the scope. */
function schoolUsers(db: Knex, scope: Scope, role: number, where: (q: Knex.QueryBuilder) => void): Knex.QueryBuilder {
  const q = db('schoolusers as u')
    .join('schools as sc', 'sc.schoolname', 'u.schoolname')
    .where('u.schooluserrole', role)
    .where('u.isdeleted', false);
  where(q);
  return applyScope(q, scope, { schoolid: 'sc.schoolid' });
}

/** Teachers, schools and learners (school users of role 4) of one country: one query. */
export async function countryDashboard({ db, scope }: Where, countryid: string) {
  const inCountry = (q: Knex.QueryBuilder) => q.where('sc.countryid', countryid).where('sc.isdeleted', false);
  const schools = applyScope(db('schools as sc').modify(inCountry), scope, { schoolid: 'sc.schoolid' });
  const row = await db
    .select({
      teachers: countOf(schoolUsers(db, scope, 3, inCountry)),
      schools: countOf(schools),
      students: countOf(schoolUsers(db, scope, 4, inCountry)),
    })
    .first();
  return [
    { name: 'Teachers', value: num(row?.teachers) },
    { name: 'Schools', value: num(row?.schools) },
    { name: 'Students', value: num(row?.students) },
  ];
}

/** Teachers and learners of one school (by name): one query. */
export async function schoolDashboard({ db, scope }: Where, schoolname: string) {
  const learners = applyScope(
    db('students as s').where('s.schoolname', schoolname).where('s.isdeleted', false),
    scope,
    { schoolname: 's.schoolname' },
  );
  notTeacherAccount(learners);
  const row = await db
    .select({
      teachers: countOf(schoolUsers(db, scope, 3, (q) => q.where('sc.schoolname', schoolname))),
      students: countOf(learners),
    })
    .first();
  return [
    { name: 'Teachers', value: num(row?.teachers) },
    { name: 'Students', value: num(row?.students) },
  ];
}

// ---- GET /report/studentusage ------------------------------------------------------------------------

/**
 * Per country: the app time of the last month of its schools' users, per day (÷ 30) and per active
 * learner of any school (the original's denominator, kept), against the country's expected usage.
 * Two queries: the countries with their sums, and the active learners.
 */
export async function studentUsage({ db, scope }: Where, now = new Date()) {
  const since = monthsBefore(now, 1);
  const spent = db('studentappusages as a')
    .join('schoolusers as u', 'u.schooluserid', 'a.schooluserid')
    .join('schools as sc', 'sc.schoolname', 'u.schoolname')
    .whereRaw('sc.countryid = co.countryid')
    .where('sc.isdeleted', false)
    .where('a.created_at', '>=', since)
    .sum('a.time_spent');
  applyScope(spent, scope, { schoolid: 'sc.schoolid' });
  const countries = db('countries as co')
    .where('co.isdeleted', false)
    .select('co.countryid', 'co.countryname', 'co.expectedusage', { spent })
    .orderBy('co.countryname');
  applyScope(countries, scope, { countryid: 'co.countryid' });
  const rows = (await countries) as Array<{ countryname: string | null; expectedusage: number | null; spent: unknown }>;

  const active = notTeacherAccount(
    db('students as s')
      .join('schools as sc', 'sc.schoolname', 's.schoolname')
      .where('s.isactive', true)
      .where('s.isdeleted', false),
  );
  applyScope(active, scope, { schoolid: 'sc.schoolid' });
  const learners = num((await active.count({ n: '*' }).first())?.n);

  return rows.map((c) => ({
    name: c.countryname ?? 'N/A',
    series: [
      { name: 'Expected', value: num(c.expectedusage) },
      {
        name: 'Actual',
        value: learners > 0 ? Math.round((num(c.spent) / 30 / learners + Number.EPSILON) * 100) / 100 : 0,
      },
    ],
  }));
}

// ---- POST /report/techdowntime -------------------------------------------------------------------------

const dateText = z.union([z.string().max(100), z.null()]).optional();
export const techDowntimeBody = z.looseObject({ startDate: dateText, endDate: dateText });

const SECTIONS = [
  ['RPI', 'rpi'],
  ['Router', 'router'],
  ['Content', 'content'],
  ['Tablet', 'tablet'],
  ['App', 'app'],
  ['General', 'general'],
] as const;

const filled = (v: unknown): boolean => (typeof v === 'string' || Array.isArray(v)) && v.length > 0;

/** A feedback section reports a problem when it has text, an image or a selected error. */
function reported(section: unknown): boolean {
  if (!section || typeof section !== 'object') return false;
  const s = section as { feedback?: unknown; images?: unknown; selected_error?: unknown };
  return filled(s.feedback) || filled(s.images) || filled(s.selected_error);
}

/**
 * Feedbacks of a period (default: the last month until now; a given date snaps to the start of its month)
 * counted per section. One query, read as a stream: the feedback documents are counted, not held.
 */
export async function techDowntime({ db, scope }: Where, body: z.infer<typeof techDowntimeBody>, now = new Date()) {
  const parse = (v: string | null | undefined) => {
    const d = v ? new Date(v) : undefined;
    return d && !Number.isNaN(d.getTime()) ? startOfMonth(d) : undefined;
  };
  const start = parse(body.startDate) ?? monthsBefore(now, 1);
  const end = parse(body.endDate) ?? now;
  const q = db('feedbacks as f')
    .where('f.isdeleted', false)
    .whereBetween('f.created_at', [start, end])
    .select('f.feedback');
  if (!scope.all) {
    // A feedback belongs to the school of the teacher who wrote it.
    q.join('schoolusers as u', 'u.schooluserid', 'f.created_by');
    applyScope(q, scope, { schoolname: 'u.schoolname' });
  }
  const counts = new Map<string, number>(SECTIONS.map(([name]) => [name, 0]));
  for await (const row of streamRows<{ feedback: unknown }>(db, q)) {
    let doc = row.feedback;
    if (typeof doc === 'string') {
      try { doc = JSON.parse(doc); } catch { doc = null; }
    }
    if (!doc || typeof doc !== 'object') continue;
    for (const [name, key] of SECTIONS)
      if (reported((doc as Record<string, unknown>)[key])) counts.set(name, counts.get(name)! + 1);
  }
  return SECTIONS.map(([name]) => ({ name, value: counts.get(name)! }));
}
