import { whereContains, type Knex } from '@lms/db';
import { z } from 'zod';
import { MAX_PAGE_INDEX, pageEnvelope, pageOf, pagingBody, whereEach, type Paging } from '../../http/paging';
import { applyScope, type Scope } from '../../http/scope';

/** The database and the caller's scope. */
type Where = { db: Knex; scope: Scope };
import { bool, num, numOrNull } from './values';

// ---- POST /report/syncrecords ------------------------------------------------------------------------

/** The original's sync-record filter keys (its validator); the filter is applied (decision 28). */
export const syncRecordsBody = pagingBody(['filename', 'type', 'offlineonline', 'created_by'], {
  exact: ['type', 'offlineonline'],
});

/**
 * IMultiPaging semantics on the sync columns: text contains every comma part of a string, or any element
 * of an array; `type` and `offlineonline` are compared as the number and the flag they are.
 */
function syncFilters(q: Knex.QueryBuilder, body: Paging): void {
  for (const f of body.filter ?? []) {
    const values = (Array.isArray(f.value) ? f.value : (f.value ?? '').split(',')).map((v) => v.trim()).filter(Boolean);
    if (!values.length) continue;
    const any = Array.isArray(f.value);
    if (f.key === 'type') {
      const numbers = values.map(Number);
      if (numbers.some((n) => !Number.isInteger(n))) q.whereRaw('1 = 0');
      else if (any || numbers.length === 1) q.whereIn('y.type', numbers);
      else q.whereRaw('1 = 0'); // one row has one type: every one of several cannot hold
    } else if (f.key === 'offlineonline') {
      const flags = values.map((v) =>
        v === 'true' || v === '1' ? true : v === 'false' || v === '0' ? false : undefined,
      );
      if (flags.some((b) => b === undefined) || (!any && new Set(flags).size > 1)) q.whereRaw('1 = 0');
      else q.whereIn('y.offlineonline', [...new Set(flags)] as boolean[]);
    } else {
      const col = `y.${f.key}`;
      whereEach(q, values, any, (w, v) => { whereContains(w, col, v); });
    }
  }
}

/** Uploads, oldest first, with the teacher who sent them and their school and country; only the caller's schools. */
export async function syncRecords({ db, scope }: Where, body: z.infer<typeof syncRecordsBody>) {
  const base = db('syncs as y')
    .join('schoolusers as u', 'u.schooluserid', 'y.created_by')
    .join('schools as sc', 'sc.schoolname', 'u.schoolname')
    .join('countries as co', 'co.countryid', 'sc.countryid');
  syncFilters(base, body);
  applyScope(base, scope, { schoolid: 'sc.schoolid' });
  const total = num((await base.clone().count({ n: '*' }).first())?.n);
  const { limit, offset } = pageOf(body);
  const rows =
    total > offset
      ? ((await base
          .clone()
          .select('y.*', {
            x_schooluserid: 'u.schooluserid',
            x_schoolusername: 'u.schoolusername',
            x_schoolname: 'u.schoolname',
            x_schoolid: 'sc.schoolid',
            x_countryname: 'co.countryname',
          })
          .orderBy([{ column: 'y.created_at' }, { column: 'y.syncid' }])
          .limit(limit)
          .offset(offset)) as Array<Record<string, unknown>>)
      : [];
  const data = rows.map((r) => ({
    syncid: r.syncid,
    filename: r.filename,
    type: r.type,
    offlineonline: r.offlineonline,
    created_at: r.created_at,
    created_by: r.created_by,
    rowcount: r.rowcount ?? null,
    schooluser: {
      schooluserid: r.x_schooluserid,
      schoolusername: r.x_schoolusername,
      schoolname: r.x_schoolname,
      school: { schoolid: r.x_schoolid, countries: { countryname: r.x_countryname } },
    },
  }));
  return pageEnvelope(data, total, body);
}

// ---- GET /report/syncstatus ----------------------------------------------------------------------------

const listOrText = z.union([z.string().max(500), z.array(z.string().max(500)).max(1000)]).optional();
const pageNumber = (max: number, what: string) =>
  z
    .string()
    .regex(/^\d{1,7}$/, { error: 'must be a number' })
    .transform(Number)
    .refine((n) => n <= max, { error: `must be ${what}` })
    .optional();

export const syncStatusQuery = z.looseObject({
  countryid: listOrText,
  schoolid: listOrText,
  schoolname: listOrText,
  pageindex: pageNumber(MAX_PAGE_INDEX, `at most ${MAX_PAGE_INDEX}`),
  pagesize: pageNumber(200, 'less than or equal to 200'),
});
type SyncStatusQuery = z.infer<typeof syncStatusQuery>;

const listOf = (v: string | string[] | undefined) =>
  (Array.isArray(v) ? v : v === undefined ? [] : v.split(',')).map((s) => s.trim()).filter((s) => s && s !== 'all');

/**
 * Per school, when it last synced and with whom: the last upload of a classroom log by one of its
 * teachers (when, who, how many rows it wrote) and the last content sent towards its classroom (a roster
 * push for the school, a teacher fetching the package, or a curriculum push to the classroom server,
 * which serves every school). Schools that never uploaded come first, then the longest silent. Three
 * queries: the count, the page with each school's last upload and last school push (ranked with
 * row_number()), and the last curriculum push.
 */
export async function syncStatus({ db, scope }: Where, q: SyncStatusQuery) {
  const schools = db('schools as sc')
    .leftJoin('countries as co', 'co.countryid', 'sc.countryid')
    .where('sc.isdeleted', false);
  if (listOf(q.countryid).length) schools.whereIn('sc.countryid', listOf(q.countryid));
  if (listOf(q.schoolid).length) schools.whereIn('sc.schoolid', listOf(q.schoolid));
  if (listOf(q.schoolname).length) schools.whereIn('sc.schoolname', listOf(q.schoolname));
  applyScope(schools, scope, { schoolid: 'sc.schoolid' });
  const body = { pageindex: q.pageindex, pagesize: q.pagesize };
  const total = num((await schools.clone().count({ n: '*' }).first())?.n);
  const { limit, offset } = pageOf(body);

  const uploads = db('syncs as y')
    .join('schoolusers as u', 'u.schooluserid', 'y.created_by')
    .where('y.type', 1)
    .select(
      'y.syncid',
      'y.filename',
      'y.created_at',
      'y.rowcount',
      'y.offlineonline',
      'u.schooluserid',
      'u.schoolusername',
      'u.schoolname',
    )
    .select(db.raw('row_number() over (partition by u.schoolname order by y.created_at desc, y.syncid desc) as rn'));
  const pushes = db('contentpushes as cp')
    .whereNotNull('cp.schoolid')
    .select('cp.*')
    .select(
      db.raw('row_number() over (partition by cp.schoolid order by cp.created_at desc, cp.contentpushid desc) as rn'),
    );
  const rows =
    total > offset
      ? ((await schools
          .clone()
          .leftJoin(uploads.as('up'), function on() {
            this.on('up.schoolname', 'sc.schoolname').andOn('up.rn', db.raw('1'));
          })
          .leftJoin(pushes.as('cp'), function on() {
            this.on('cp.schoolid', 'sc.schoolid').andOn('cp.rn', db.raw('1'));
          })
          .select('sc.schoolid', 'sc.schoolname', 'sc.countryid', 'co.countryname', {
            up_syncid: 'up.syncid',
            up_filename: 'up.filename',
            up_at: 'up.created_at',
            up_rows: 'up.rowcount',
            up_offlineonline: 'up.offlineonline',
            up_by: 'up.schooluserid',
            up_byname: 'up.schoolusername',
            cp_kind: 'cp.kind',
            cp_at: 'cp.created_at',
            cp_rows: 'cp.rowcount',
            cp_by: 'cp.created_by',
            cp_byname: 'cp.created_by_name',
          })
          .orderByRaw('case when up.created_at is null then 0 else 1 end')
          .orderBy([{ column: 'up.created_at' }, { column: 'sc.schoolname' }, { column: 'sc.schoolid' }])
          .limit(limit)
          .offset(offset)) as Array<Record<string, unknown>>)
      : [];
  const everySchool = rows.length
    ? ((await db('contentpushes')
        .whereNull('schoolid')
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'contentpushid', order: 'desc' },
        ])
        .first()) as Record<string, unknown> | undefined)
    : undefined;

  const time = (v: unknown) => (v == null ? null : new Date(v as string).getTime());
  const data = rows.map((r) => {
    const own =
      r.cp_at == null
        ? undefined
        : {
            kind: r.cp_kind,
            at: r.cp_at,
            rows: num(r.cp_rows),
            by: { id: r.cp_by ?? null, name: r.cp_byname ?? null },
            scope: 'school',
          };
    const all = everySchool && {
      kind: everySchool.kind,
      at: everySchool.created_at,
      rows: num(everySchool.rowcount),
      by: { id: everySchool.created_by ?? null, name: everySchool.created_by_name ?? null },
      scope: 'all',
    };
    const push = own && all ? ((time(all.at) ?? 0) > (time(own.at) ?? 0) ? all : own) : (own ?? all ?? null);
    return {
      schoolid: r.schoolid,
      schoolname: r.schoolname,
      countryid: r.countryid ?? null,
      countryname: r.countryname ?? null,
      lastupload: r.up_at == null
        ? null
        : {
          at: r.up_at,
          by: { schooluserid: r.up_by, schoolusername: r.up_byname },
          rows: numOrNull(r.up_rows),
          syncid: r.up_syncid,
          filename: r.up_filename,
          offlineonline: bool(r.up_offlineonline),
        },
      lastcontentpush: push,
    };
  });
  return pageEnvelope(data, total, body);
}
