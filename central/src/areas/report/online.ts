import { z } from 'zod';
import { httpError, reportFilterValue } from '@lms/shared';
import { ClassroomError, classroomClientOf } from '../../classroom-client';
import { EnvelopeError, envelopeRows } from '../../classroom-client/rows';
import { sendCsv } from '../../http/csv';
import { MAX_PAGE_INDEX, MAX_REPORT_FILTERS, MAX_REPORT_PAGE_SIZE } from '../../http/paging';
import { withoutIdentityDeep } from '../../http/privacy';
import { scopeSchools } from '../../http/scope';
import type { CentralCtx } from '../../http/types';
import { classroomData } from '../sync/push';
import {
  ACTIVITY_COLUMNS,
  CURRENT_LEVEL_COLUMNS,
  LEVEL_QUIZ_COLUMNS,
  QUIZ_COLUMNS,
  REPORT_CSV,
  activityLines,
  currentLevelCsvRow,
  quizCsvRow,
} from './downloads';
import { dateOf } from './values';

// Reports of learner activity held on the classroom server (contract §16.3): central forwards the request's
// IMultiPaging (its three keys, checked) with the server key and re-wraps the classroom's answer in its own
// envelope; the downloads are written as CSV while the classroom's rows arrive. A caller whose token names
// schools or countries sees only those: the classroom is asked for the schools of the scope (a `schoolid`
// filter), and any row it answers for another school is dropped on the way through.

type Ctx = CentralCtx<typeof onlineReportInput>;

const strictKeys = {
  error: (iss: { code: string; keys?: string[] }) =>
    iss.code === 'unrecognized_keys' ? `"${iss.keys?.[0]}" is not allowed` : undefined,
};

/**
 * IMultiPaging exactly as the classroom's report routes take it, and nothing else: this body is sent on to
 * the classroom server with the server key, so an unknown key, a value that nests, or an oversize list is
 * refused here (400) before anything is forwarded.
 */
export const onlineReportBody = z.strictObject(
  {
    pageindex: z.number().int().min(0).max(MAX_PAGE_INDEX).optional(),
    pagesize: z.number().int().min(0).max(MAX_REPORT_PAGE_SIZE).optional(),
    filter: z
      .array(z.strictObject({ key: z.string().min(1).max(100), value: reportFilterValue.optional() }, strictKeys))
      .max(MAX_REPORT_FILTERS)
      .optional(),
  },
  strictKeys,
);

export const onlineReportInput = { body: onlineReportBody };

type Body = z.infer<typeof onlineReportBody>;
type Row = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * A classroom failure as the caller should see it: the classroom refusing the request (a 4xx other than a
 * refused server key) is the caller's own mistake, 400 with the classroom's words; anything else (no
 * answer, a refused key, a server error, an answer that is not an envelope) is 500.
 */
export function reportFailure(err: unknown): never {
  if (err instanceof ClassroomError) {
    if (err.kind === 'rejected' && err.status !== undefined && err.status >= 400 && err.status < 500) {
      throw httpError(400, err.remoteMessage ?? `Classroom server refused the report (${err.status})`);
    }
    throw httpError(500, err.message);
  }
  if (err instanceof EnvelopeError || err instanceof SyntaxError)
    throw httpError(500, 'Classroom server answered without a success envelope');
  throw err;
}

interface Scoped {
  body: Body;
  /** Whether a row belongs to the caller's scope (every row when unrestricted). */
  keep: (row: Row) => boolean;
  /** The scope admits no school at all: nothing to ask. */
  nothing: boolean;
}

/**
 * What the classroom is sent: the three keys of IMultiPaging, built afresh. A page size of 0 means the
 * default page (contract §0), which the classroom takes as an absent size.
 */
function forwarded(sent: Body | undefined): Body {
  const out: Body = {};
  if (sent?.pageindex !== undefined) out.pageindex = sent.pageindex;
  if (sent?.pagesize) out.pagesize = sent.pagesize;
  if (sent?.filter) out.filter = sent.filter.map((f) => ({ key: f.key, value: f.value }));
  return out;
}

async function scoped(ctx: Ctx): Promise<Scoped> {
  const body = forwarded(ctx.body);
  const schools = await scopeSchools(ctx.scope);
  if (!schools) return { body, keep: () => true, nothing: false };
  const ids = new Set(schools.ids);
  const names = new Set(schools.names.map((n) => n.toLowerCase()));
  const keep = (row: Row) => {
    const id = row?.school?.schoolid;
    if (typeof id === 'string' && id) return ids.has(id);
    const name = row?.school?.schoolname ?? row?.schoolname ?? row?.student?.schoolname;
    return typeof name === 'string' && names.has(name.toLowerCase());
  };
  return {
    body: { ...body, filter: [...(body.filter ?? []), { key: 'schoolid', value: schools.ids }] },
    keep,
    nothing: schools.ids.length === 0,
  };
}

const client = (ctx: Ctx) => classroomClientOf(ctx.config, { totalTimeoutMs: 120_000 });

/** A paged report: `{data, total, pageindex, pagesize}` with the page echoed as the caller sent it. */
export function pagedOnlineReport(classroomPath: string, o: { withStudent?: boolean } = {}) {
  return async (ctx: Ctx): Promise<unknown> => {
    const sent: Body = ctx.body ?? {};
    const page = (data: unknown[], total: number, student?: unknown) => ({
      data,
      total,
      pageindex: sent.pageindex ?? 0,
      pagesize: sent.pagesize ?? 0,
      ...(o.withStudent ? { student: student ?? null } : {}),
    });
    const s = await scoped(ctx);
    if (s.nothing) return page([], 0);
    const answer = await client(ctx).postJson(classroomPath, s.body).catch(reportFailure);
    const data = classroomData(answer) as { data?: unknown; total?: unknown; student?: unknown } | null;
    if (!data || typeof data !== 'object' || !Array.isArray(data.data))
      throw httpError(500, `Classroom server answered ${classroomPath} without a page of rows`);
    const rows = (data.data as Row[]).filter(s.keep);
    const total = typeof data.total === 'number' ? data.total : data.data.length;
    const student =
      data.student && typeof data.student === 'object' && !s.keep(data.student as Row) ? null : data.student;
    // A teacher reads these reports too, and never a learner's identity (spec, Teacher rule 8).
    return page(
      withoutIdentityDeep(rows, ctx.caller) as unknown[],
      Math.max(rows.length, total - (data.data.length - rows.length)),
      withoutIdentityDeep(student, ctx.caller),
    );
  };
}

export type OnlineLayout = 'quiz' | 'levelquiz' | 'currentlevel' | 'activity';

/**
 * A download: the classroom's rows (`{error:false, data:[rows]}`) read as they arrive and written as the
 * same CSV layout as the offline report's.
 */
export function downloadOnlineReport(classroomPath: string, layout: OnlineLayout) {
  return async (ctx: Ctx): Promise<void> => {
    const s = await scoped(ctx);
    const columns = {
      quiz: QUIZ_COLUMNS,
      levelquiz: LEVEL_QUIZ_COLUMNS,
      currentlevel: CURRENT_LEVEL_COLUMNS,
      activity: ACTIVITY_COLUMNS,
    }[layout];
    const toCsv =
      layout === 'quiz' ? quizCsvRow(true) : layout === 'levelquiz' ? quizCsvRow(false) : currentLevelCsvRow;
    let start: Date | undefined;
    let end: Date | undefined;
    if (layout === 'activity') {
      const first = (k: string) => {
        const v = (s.body.filter ?? []).find((f) => f.key === k)?.value;
        return typeof v === 'string' ? v : undefined;
      };
      start = dateOf(first('startDate'), 'startDate');
      end = dateOf(first('endDate'), 'endDate');
    }
    const answer = s.nothing ? undefined : await client(ctx).postJsonStream(classroomPath, s.body).catch(reportFailure);
    async function* rows(): AsyncGenerator<Row> {
      if (!answer) return;
      try {
        for await (const row of envelopeRows(answer.body)) {
          if (row && typeof row === 'object' && s.keep(row as Row)) yield row as Row;
        }
      } catch (err) {
        answer.body.destroy();
        reportFailure(err);
      }
    }
    async function* lines(): AsyncGenerator<Row> {
      for await (const r of rows()) yield toCsv(r);
    }
    try {
      await sendCsv(ctx.res, REPORT_CSV, columns, layout === 'activity' ? activityLines(rows(), start, end) : lines());
    } finally {
      answer?.body.destroy();
    }
  };
}
