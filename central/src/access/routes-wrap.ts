import type { Response } from 'express';
import type { Knex } from '@lms/db';
import { watchCsv, type CsvWatch } from '../http/csv';
import type { CentralCtx, CentralRoute } from '../http/types';
import {
  accountOf, appendEntries, filterOf, identityColumns, identityIn, type AccessEntry, type Stage,
} from './record';

/**
 * Routes whose entry the answer cannot show, declared by method and pattern:
 *  - `change`: the route changes learners' identity (the learners come from the body, the answer or the path);
 *  - `visibility`: the route changes who may see it (roles, permissions, a staff account's schools and
 *    countries, box credentials);
 *  - `download`: the route answers a file holding learners' identity that the CSV columns do not show (a ZIP,
 *    a CSV whose columns are not the learners' fields): an entry before the handler starts, and one with
 *    the outcome when it ends;
 *  - `disclosure`: the route sends learners' identity elsewhere (a school's roster to its classroom server).
 * Every other route is recorded when its JSON answer or its CSV download carries identity (found by
 * scanning, see identityIn and identityColumns), whatever its caller.
 */
export const DECLARED: Readonly<Record<string, 'change' | 'visibility' | 'download' | 'disclosure'>> = {
  'POST /student/create': 'change',
  'PUT /student/update': 'change',
  'DELETE /student/:schooluserid': 'change',
  'POST /roles/create': 'visibility',
  'PUT /roles/:roleid': 'visibility',
  'DELETE /roles/:roleid': 'visibility',
  'POST /roles/user-bind-role': 'visibility',
  'POST /user/create': 'visibility',
  'PUT /user/:lmsuserid': 'visibility',
  'DELETE /user/:lmsuserid': 'visibility',
  // A box credential reads its school's roster: registering, enrolling, re-coding and revoking a box change it.
  'POST /fleet/boxes': 'visibility',
  'POST /fleet/boxes/:boxid/code': 'visibility',
  'POST /fleet/boxes/:boxid/revoke': 'visibility',
  'POST /fleet/enrol': 'visibility',
  'GET /export/:schoolname/students': 'download',
  'GET /sync/report-data': 'download',
  // The activity layout's columns are its date range; its rows name each learner by sign-in name.
  'POST /report/studentstatus/download': 'download',
  'POST /report/online/studentstatus/download': 'download',
  'POST /sync/cloud/:schoolname/students': 'disclosure',
  // One learner's data on request, and the erasure of their identity.
  'GET /privacy/learner/:studentid/export': 'download',
  'POST /privacy/learner/:studentid/erase': 'change',
};

export const routeKey = (r: Pick<CentralRoute, 'method' | 'path'>) => `${r.method} ${r.path}`;

/** Whether a request only checks (a dry run): nothing changes, nothing is recorded as a change. */
const dryRun = (ctx: CentralCtx): boolean => {
  const q = ctx.req.query as Record<string, unknown>;
  return q?.dryrun === 'true';
};

function base(ctx: CentralCtx, r: CentralRoute): Omit<AccessEntry, 'stage' | 'outcome' | 'learnercount' | 'filter'
  | 'studentids'> {
  const req = ctx.req;
  return {
    at: new Date().toISOString(),
    requestid: req.id === undefined ? null : String(req.id).slice(0, 100),
    ...accountOf(ctx.caller),
    method: r.method,
    route: r.path,
    // The path without its query: the ids in it are the route's own (a role, an account, a school).
    path: req.path.slice(0, 2000),
    client: req.ip ? req.ip.slice(0, 100) : null,
  };
}

/** Learner ids named in a change's body (rows with `studentid`), path, or by username (a bulk create). */
async function changedLearners(db: Knex, ctx: CentralCtx, answer: unknown): Promise<{ ids: string[]; count: number }> {
  const ids = new Set<string>();
  const usernames = new Set<string>();
  let rows = 0;
  const walk = (v: unknown, depth: number) => {
    if (depth > 6 || !v || typeof v !== 'object') return;
    if (Array.isArray(v)) {
      for (const x of v) walk(x, depth + 1);
      return;
    }
    const o = v as Record<string, unknown>;
    if (typeof o.studentid === 'string') {
      ids.add(o.studentid);
      rows += 1;
    } else if (typeof o.schoolusername === 'string') {
      usernames.add(o.schoolusername);
      rows += 1;
    }
    for (const x of Object.values(o)) if (x && typeof x === 'object') walk(x, depth + 1);
  };
  walk(ctx.req.body, 0);
  walk(answer, 0);
  const params = ctx.req.params as Record<string, string | undefined>;
  if (params.schooluserid) {
    const found = await db('students').where('schooluserid', params.schooluserid).select('studentid');
    for (const f of found) ids.add(String(f.studentid));
    rows += 1;
  }
  const names = [...usernames];
  for (let i = 0; i < names.length; i += 500) {
    const found = await db('students as s').join('schoolusers as u', 'u.schooluserid', 's.schooluserid')
      .whereIn('u.schoolusername', names.slice(i, i + 500)).select('s.studentid');
    for (const f of found) ids.add(String(f.studentid));
  }
  return { ids: [...ids], count: Math.max(rows, ids.size) };
}

/** A download of one learner's data names the learner of its path. */
const pathLearner = (ctx: CentralCtx): Partial<AccessEntry> => {
  const id = (ctx.req.params as Record<string, string | undefined>).studentid;
  return id ? { learnercount: 1, studentids: [id] } : {};
};

/** The HTTP status an error will be answered with (the error middleware's rule: 500 unless it says). */
const statusOf = (err: unknown): number => {
  const s = (err as { status?: unknown; statusCode?: unknown } | null)?.status
    ?? (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : 500;
};

/**
 * One route's handler with its access record: the entry is committed before the answer leaves (a JSON
 * answer is held until then; a CSV download's first entry is written before its first byte and its
 * second before its last). A failure to write the record fails the request: nothing is answered
 * unrecorded. Requests refused by their gate never reach the handler and are not recorded; a handler
 * that fails (400, 404, 500) answered no identity and is not recorded either, except a download that had
 * started (its `download failed` entry).
 */
function wrap(r: CentralRoute): CentralRoute['handler'] {
  const declared = DECLARED[routeKey(r)];
  return async (ctx) => {
    if (!ctx.config.accessRecord.enabled) return r.handler(ctx);
    const { db, res } = ctx;
    // A report may read the replica; its entry is written on the primary all the same.
    const append = (entries: AccessEntry[]) => appendEntries(ctx.primary ?? db, entries);
    const entry = (stage: Stage, more: Partial<AccessEntry>): AccessEntry => ({
      ...base(ctx, r), stage, outcome: null, learnercount: null, filter: null, studentids: [], ...more,
    });
    const filter = () => filterOf(ctx.req.query, r.method === 'GET' ? undefined : ctx.req.body);

    // A file download: its start before the handler, its end with the outcome.
    let downloading = false;
    if (declared === 'download') {
      await append([entry('download started', { filter: filter() })]);
      downloading = true;
    }
    const csv = csvWatch(filter, entry, append);
    if (!downloading) watchCsv(res, csv.watch);

    // A JSON answer the handler sends itself is held until its entry is committed.
    const json = res.json;
    let held: { body: unknown } | undefined;
    res.json = ((body: unknown) => {
      held = { body };
      return res;
    }) as Response['json'];
    let data: unknown;
    try {
      data = await r.handler(ctx);
    } catch (err) {
      res.json = json;
      if (downloading) await append([entry('download failed', { outcome: statusOf(err) })]);
      await csv.failed(statusOf(err));
      throw err;
    }
    res.json = json;
    await csv.failed(res.statusCode);
    if (downloading) await append([entry('download finished', { outcome: res.statusCode, ...pathLearner(ctx) })]);

    const answer = held ? held.body : data;
    const outcome = held ? res.statusCode : r.status ?? 200;
    if (declared === 'change' || declared === 'disclosure') {
      if (!dryRun(ctx)) {
        const learners = await changedLearners(db, ctx, answer);
        await append([entry('answered', {
          outcome, learnercount: learners.count, studentids: learners.ids,
          filter: declared === 'disclosure' ? filter() : null,
        })]);
      }
    } else if (declared === 'visibility') {
      await append([entry('answered', { outcome })]);
    } else if (!downloading && !res.headersSent) {
      const found = identityIn(answer);
      if (found) {
        await append([entry('answered', {
          outcome, learnercount: found.count, studentids: found.studentids, filter: filter(),
        })]);
      }
    }
    if (held) json.call(res, held.body);
    return data;
  };
}

/** The CSV download's two entries (see CsvWatch), written only when its columns carry identity. */
function csvWatch(
  filter: () => string | null,
  entry: (stage: Stage, more: Partial<AccessEntry>) => AccessEntry,
  append: (entries: AccessEntry[]) => Promise<number[]>,
): { watch: CsvWatch; failed: (status: number) => Promise<void> } {
  let open = false;
  let closed = false;
  const ids = new Set<string>();
  let rows = 0;
  const counts = () => ({ learnercount: rows, studentids: [...ids] });
  return {
    watch: {
      opening: async (columns) => {
        if (!identityColumns(columns)) return;
        await append([entry('download started', { filter: filter() })]);
        open = true;
      },
      row: (row) => {
        if (!open) return;
        rows += 1;
        const id = row.studentid;
        if (typeof id === 'string' || typeof id === 'number') ids.add(String(id));
      },
      closing: async (complete) => {
        if (!open) return;
        closed = true;
        await append([entry(complete ? 'download finished' : 'download cut', { outcome: 200, ...counts() })]);
      },
    },
    // A download that started and ended without its closing entry (an error mid-stream, a cut).
    failed: async (status) => {
      if (!open || closed) return;
      closed = true;
      await append([entry('download cut', { outcome: status, ...counts() })]);
    },
  };
}

/** The routes with their access record. */
export function withAccessRecord(routes: readonly CentralRoute[]): CentralRoute[] {
  return routes.map((r) => ({ ...r, handler: wrap(r) }));
}
