import { z } from 'zod';
import { httpError, type HandlerContext } from '@lms/shared';
import { classroomClientOf } from '../../classroom-client';
import { configOf } from '../../http/context';
import type { Caller } from '../../http/types';
import { classroomData, classroomFailure } from '../sync/push';

// Reports of learner activity held on the classroom server (contract D): central forwards the request
// body with the server key and re-wraps the classroom's answer in its own envelope.

type Ctx = HandlerContext<Caller>;

/** IMultiPaging, checked only as far as central reads it; the classroom applies the filters. */
export const onlineReportBody = z
  .object({
    pageindex: z.number().int().min(0).optional(),
    pagesize: z.number().int().min(0).max(200).optional(),
    filter: z.array(z.object({ key: z.string().min(1), value: z.unknown() }).passthrough()).max(20).optional(),
  })
  .passthrough();

export const onlineReportInput = { body: onlineReportBody };

type Body = z.infer<typeof onlineReportBody>;

interface Options {
  /** The three per-learner progress reports also carry the learner. */
  withStudent?: boolean;
  /** The active-status report is limited to the caller's schools, when the token names some. */
  scopeToSchools?: boolean;
}

function callerSchools(caller: Caller): string[] {
  if (caller.kind !== 'staff') return [];
  const schools = caller.claims.schools;
  return Array.isArray(schools) ? schools.filter((s): s is string => typeof s === 'string' && s !== '') : [];
}

async function ask(ctx: Ctx, classroomPath: string, o: Options): Promise<unknown> {
  let body: Body = ctx.body;
  const schools = o.scopeToSchools ? callerSchools(ctx.caller) : [];
  if (schools.length) body = { ...body, filter: [...(body.filter ?? []), { key: 'schoolid', value: schools }] };
  const answer = await classroomClientOf(configOf(ctx.req), { totalTimeoutMs: 120_000 }).postJson(classroomPath, body).catch(classroomFailure);
  return classroomData(answer);
}

/** A paged report: `{data, total, pageindex, pagesize}` with the page echoed as the caller sent it. */
export function pagedOnlineReport(classroomPath: string, o: Options = {}) {
  return async (ctx: Ctx): Promise<unknown> => {
    const data = (await ask(ctx, classroomPath, o)) as { data?: unknown; total?: unknown; student?: unknown } | null;
    if (!data || typeof data !== 'object' || !Array.isArray(data.data)) {
      throw httpError(500, `Classroom server answered ${classroomPath} without a page of rows`);
    }
    const out: Record<string, unknown> = {
      data: data.data,
      total: typeof data.total === 'number' ? data.total : data.data.length,
      pageindex: (ctx.body as Body).pageindex ?? 0,
      pagesize: (ctx.body as Body).pagesize ?? 0,
    };
    if (o.withStudent) out.student = data.student ?? null;
    return out;
  };
}

/** A download report: the classroom's rows, unpaged. */
export function downloadOnlineReport(classroomPath: string, o: Options = {}) {
  return async (ctx: Ctx): Promise<unknown> => {
    const data = await ask(ctx, classroomPath, o);
    if (!Array.isArray(data)) throw httpError(500, `Classroom server answered ${classroomPath} without rows`);
    return data;
  };
}
