import type { Knex } from '@lms/db';
import { httpError } from '@lms/shared';
import { z } from 'zod';
import { filterMap, pageOf, type MultiPaging } from '../../http/paging';

export { multiPagingBody, type MultiPaging } from '../../http/paging';

// ---- POST /report/studentstatus ---------------------------------------------------------------------

const MONTH_MS = 30 * 24 * 60 * 60 * 1000;

function dateOf(v: string | undefined, what: string): Date | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) throw httpError(400, `Invalid ${what}`);
  return d;
}

/**
 * Learner activity without learner identity (teachers may read it): username, school, class,
 * curriculum, whether the learner signed in within the last month, last sign-in, minutes of use.
 */
export async function studentStatus(db: Knex, body: MultiPaging, tokenSchools: string[]) {
  const f = filterMap(body);
  const start = dateOf(f.get('startDate')?.[0], 'startDate');
  const end = dateOf(f.get('endDate')?.[0], 'endDate') ?? new Date();
  const base = db('students as s')
    .join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
    .leftJoin('schools as sc', 'sc.schoolname', 's.schoolname')
    .where('s.isdeleted', false)
    .where((w) => w.where('s.is_teacher_acc', false).orWhereNull('s.is_teacher_acc'));
  const list = (k: string) => f.get(k);
  if (list('countryid')) base.whereIn('sc.countryid', list('countryid')!);
  if (list('schoolname')) base.whereIn('s.schoolname', list('schoolname')!);
  if (list('schoolid')) base.whereIn('sc.schoolid', list('schoolid')!);
  if (list('studentid')) base.whereIn('s.studentid', list('studentid')!);
  if (list('standard')) base.whereIn('s.standard', list('standard')!);
  if (tokenSchools.length) base.whereIn('sc.schoolid', tokenSchools);

  const total = Number((await base.clone().count({ n: '*' }).first())?.n ?? 0);
  const { limit, offset } = pageOf(body);
  const rows = await base
    .clone()
    .leftJoin('countries as co', 'co.countryid', 'sc.countryid')
    .leftJoin('standards as st', 'st.standardid', 's.standard')
    .leftJoin('curriculums as cu', 'cu.curriculumid', 's.curriculumid')
    .orderBy([{ column: 's.schoolname' }, { column: 'u.schoolusername' }])
    .limit(limit)
    .offset(offset)
    .select(
      's.studentid', 's.country', 's.schoolname', 's.standard', 's.schooluserid', 's.created_at', 'u.schoolusername', 'sc.schoolid',
      'sc.countryid', 'co.countryname', 'st.standardname', 'cu.curriculumname',
    );
  const ids = rows.map((r: { schooluserid: string }) => r.schooluserid);
  const logins = new Map<string, string>();
  const usage = new Map<string, number>();
  if (ids.length) {
    const lastRows: Array<{ userid: string; last: string | null }> = await db('rpiuseraccess').whereIn('userid', ids).groupBy('userid').select('userid').max({ last: 'logintime' });
    for (const l of lastRows) {
      if (l.last) logins.set(l.userid, new Date(l.last).toISOString());
    }
    const u = db('studentappusages').whereIn('schooluserid', ids).where('created_at', '<=', end.toISOString());
    if (start) u.where('created_at', '>=', start.toISOString());
    const spent: Array<{ schooluserid: string; spent: unknown }> = await u.groupBy('schooluserid').select('schooluserid').sum({ spent: 'time_spent' });
    for (const r of spent) usage.set(r.schooluserid, Number(r.spent ?? 0));
  }
  const now = Date.now();
  const data = rows.map((r: Record<string, any>) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const last = logins.get(r.schooluserid);
    return {
      studentid: r.studentid,
      country: r.country,
      schoolname: r.schoolname,
      standard: r.standard,
      schooluserid: r.schooluserid,
      created_at: r.created_at,
      schooluser: { schoolusername: r.schoolusername },
      school: r.schoolid ? { schoolid: r.schoolid, schoolname: r.schoolname, countryid: r.countryid, countries: { countryname: r.countryname } } : null,
      class: { standardname: r.standardname ?? null },
      curriculum: { curriculumname: r.curriculumname ?? null },
      status: !!last && now - Date.parse(last) <= MONTH_MS,
      // The key is absent, not null, for a learner who never signed in (the original's shape).
      ...(last ? { lastLogin: last } : {}),
      totalusages: Math.ceil((usage.get(r.schooluserid) ?? 0) / 60),
    };
  });
  return { data, total, pageindex: body.pageindex ?? 0, pagesize: body.pagesize ?? 0 };
}

// ---- GET /report/disability ---------------------------------------------------------------------------

export const disabilityQuery = z.looseObject({ countryid: z.string().optional(), schoolname: z.string().optional() });

const WG = ['wg_seeing', 'wg_hearing', 'wg_walking', 'wg_remembering', 'wg_selfcare', 'wg_communicating'];

/** Washington Group counts only; never a learner row. */
export async function disabilityCounts(db: Knex, q: z.infer<typeof disabilityQuery>) {
  const base = db('students').where({ isdeleted: false });
  if (q.countryid && q.countryid !== 'all') {
    const country = await db('countries').where({ countryid: q.countryid }).first('countryname');
    base.where('country', country?.countryname ?? '\u0000');
  }
  if (q.schoolname) base.where('schoolname', q.schoolname);
  const count = async (extra?: (b: Knex.QueryBuilder) => void) => {
    const b = base.clone();
    if (extra) extra(b);
    return Number((await b.count({ n: '*' }).first())?.n ?? 0);
  };
  const total = await count();
  const collected = await count((b) => b.where((w) => { for (const k of WG) w.orWhereNotNull(k); }));
  const withDisability = await count((b) => b.where((w) => { for (const k of WG) w.orWhere(k, '>=', 3); }));
  return [
    { name: 'with disability', value: withDisability },
    { name: 'no disability', value: collected - withDisability },
    { name: 'not collected', value: total - collected },
  ];
}
