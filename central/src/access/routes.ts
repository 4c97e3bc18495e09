import { roles } from '@lms/shared';
import { z } from 'zod';
import type { Knex } from '@lms/db';
import { sendCsv } from '../http/csv';
import { route } from '../http/route';
import { scope } from '../http/scope';
import type { CentralCtx, CentralRoute } from '../http/types';
import { verifyChain, type StoredEntry } from './record';

/** Entries a page holds at most; a download reads this many a query. */
export const ACCESS_PAGE_MAX = 500;

const text = (max: number) => z.string().trim().min(1).max(max).optional();
const time = z.string().trim().max(40)
  .refine((s) => !Number.isNaN(Date.parse(s)), { error: 'must be a date or time (ISO 8601)' }).optional();

const filterFields = {
  accountid: text(255),
  studentid: text(255),
  route: text(255),
  from: time,
  to: time,
};
export const accessListQuery = z.strictObject({
  ...filterFields,
  pageindex: z.coerce.number().int().min(0).max(1_000_000).default(0),
  pagesize: z.coerce.number().int().min(1).max(ACCESS_PAGE_MAX).default(100),
});
export const accessDownloadQuery = z.strictObject({
  ...filterFields,
  format: z.enum(['csv', 'ndjson']).default('csv'),
});
type Filters = { accountid?: string; studentid?: string; route?: string; from?: string; to?: string };

const iso = (s: string) => new Date(s).toISOString();

function filtered(db: Knex, f: Filters): Knex.QueryBuilder {
  const q = db('accessrecord as a');
  if (f.accountid) q.where('a.accountid', f.accountid);
  if (f.route) q.where('a.route', f.route);
  if (f.from) q.where('a.at', '>=', iso(f.from));
  if (f.to) q.where('a.at', '<', iso(f.to));
  if (f.studentid) {
    q.whereIn('a.id', db('accessrecordlearners').where('studentid', f.studentid).select('entryid'));
  }
  return q;
}

/** The entries with the learners each names (ids only: the record holds no personal data). */
async function withLearners(db: Knex, rows: StoredEntry[]): Promise<Array<StoredEntry & { studentids: string[] }>> {
  if (!rows.length) return [];
  const learners = await db('accessrecordlearners').whereIn('entryid', rows.map((r) => r.id))
    .orderBy(['entryid', 'studentid']).select('entryid', 'studentid');
  const by = new Map<number, string[]>();
  for (const l of learners) {
    const list = by.get(Number(l.entryid)) ?? [];
    list.push(String(l.studentid));
    by.set(Number(l.entryid), list);
  }
  return rows.map((r) => ({ ...r, id: Number(r.id), studentids: by.get(Number(r.id)) ?? [] }));
}

async function listEntries({ db, query }: CentralCtx<{ query: typeof accessListQuery }>) {
  const [{ n }] = await filtered(db, query).count({ n: '*' });
  const rows = await filtered(db, query).orderBy('a.id', 'desc')
    .limit(query.pagesize).offset(query.pageindex * query.pagesize).select('a.*');
  return { total: Number(n), pageindex: query.pageindex, pagesize: query.pagesize, rows: await withLearners(db, rows) };
}

export const ACCESS_COLUMNS = [
  'id', 'at', 'requestid', 'accountid', 'accountkind', 'method', 'route', 'path', 'client', 'stage', 'outcome',
  'learnercount', 'studentids', 'filter', 'prevhash', 'hash',
];

/** Every entry of the filter, oldest first, a page a query (memory stays flat). */
async function* allEntries(db: Knex, f: Filters) {
  let after = 0;
  for (;;) {
    const rows: StoredEntry[] = await filtered(db, f).where('a.id', '>', after).orderBy('a.id')
      .limit(ACCESS_PAGE_MAX).select('a.*');
    if (!rows.length) return;
    for (const r of await withLearners(db, rows)) yield r;
    after = Number(rows[rows.length - 1].id);
  }
}

async function downloadEntries({ db, res, query }: CentralCtx<{ query: typeof accessDownloadQuery }>) {
  const stamp = new Date().toISOString().slice(0, 10);
  if (query.format === 'csv') {
    const rows = (async function* () {
      for await (const r of allEntries(db, query)) yield { ...r, studentids: r.studentids.join(' ') };
    })();
    await sendCsv(res, `accessrecord-${stamp}.csv`, ACCESS_COLUMNS, rows);
    return;
  }
  res.status(200);
  res.setHeader('Content-Type', 'application/x-ndjson; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="accessrecord-${stamp}.ndjson"`);
  for await (const r of allEntries(db, query)) {
    if (res.destroyed) return;
    if (!res.write(`${JSON.stringify(r)}\n`)) await drainedOrClosed(res);
  }
  res.end();
}

function drainedOrClosed(res: CentralCtx['res']): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

const verifyEntries = ({ db }: CentralCtx) => verifyChain(db);

// Superadmin only, whole organisation: the record names accounts and learners of every school. Its own
// reads are not recorded (they answer ids, never a learner's identity).
export const accessRecordRoutes: CentralRoute[] = [
  route('GET', '/accessrecord/download', roles('superadmin'), scope.wholeOrganisation,
    { query: accessDownloadQuery }, downloadEntries,
    { addition: true, summary: 'export of the access record (CSV or NDJSON; filters as GET /accessrecord)' }),
  route('GET', '/accessrecord/verify', roles('superadmin'), scope.wholeOrganisation, {}, verifyEntries,
    { addition: true, summary: 'checks the access record\'s hash chain; names the first entry that does not fit' }),
  route('GET', '/accessrecord', roles('superadmin'), scope.wholeOrganisation, { query: accessListQuery }, listEntries,
    { addition: true, summary: 'the access record of learner data (filter by account, learner, route, time; paged)' }),
];
