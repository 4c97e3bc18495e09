import { whereContains, type Knex } from '@lms/db';
import { z } from 'zod';

/**
 * Paged lists (`IPaging` with a key whitelist, `IMultiPaging` for reports), contract §0. Every number
 * and list is bounded so that one request stays cheap: a page index beyond a million, a filter value
 * longer than 500 characters or a list of more than 1,000 values is refused (SQLite takes at most
 * 32,766 bound values per statement; a 40,000-id filter used to end as a 500).
 */
export const MAX_PAGE_INDEX = 1_000_000;
export const MAX_FILTER_VALUES = 1000;
export const MAX_FILTER_TEXT = 500;

const filterText = z.string().max(MAX_FILTER_TEXT, { error: `must be at most ${MAX_FILTER_TEXT} characters` });
const filterValue = z.union([filterText, z.array(filterText).max(MAX_FILTER_VALUES, { error: `must hold at most ${MAX_FILTER_VALUES} values` }), z.null()]).optional();

const strictKeys = { error: (iss: { code: string; keys?: string[] }) => (iss.code === 'unrecognized_keys' ? `"${iss.keys?.[0]}" is not allowed` : undefined) };

const pageFields = {
  pageindex: z.number({ error: 'must be a number' }).optional(),
  pagesize: z.number({ error: 'must be a number' }).int().min(0).max(200, { error: 'must be less than or equal to 200' }).optional(),
};

function checkPage(b: { pageindex?: number }, ctx: z.RefinementCtx): void {
  if (b.pageindex !== undefined && (!Number.isInteger(b.pageindex) || b.pageindex < 0 || b.pageindex > MAX_PAGE_INDEX)) {
    ctx.addIssue({ code: 'custom', message: 'Invalid page index', path: [] });
  }
}

/** IPaging: filter keys restricted to `keys`, at most `maxFilters` entries (5; students and teachers 6). */
export function pagingBody(keys: readonly [string, ...string[]], o: { maxFilters?: number; unknownAllowed?: boolean } = {}) {
  const maxFilters = o.maxFilters ?? 5;
  const shape = {
    ...pageFields,
    filter: z.array(z.object({ key: z.enum(keys, { error: `must be one of [${keys.join(', ')}]` }), value: filterValue })).optional(),
  };
  const base = o.unknownAllowed ? z.looseObject(shape) : z.strictObject(shape, strictKeys);
  return base.superRefine((b, ctx) => {
    checkPage(b, ctx);
    if ((b.filter?.length ?? 0) > maxFilters) ctx.addIssue({ code: 'custom', message: 'Invalid filter', path: [] });
  });
}

/**
 * IMultiPaging of the reports: any key, at most 20 entries (the admin UI's report pages send up to
 * eight), values bounded as above. Pages up to 1,000 rows: the admin UI's report tables offer 500 and
 * its downloads ask for 1,000; every report reads a page in a fixed number of queries, so a large page
 * costs rows, not round trips.
 */
export const MAX_REPORT_FILTERS = 20;
export const MAX_REPORT_PAGE_SIZE = 1000;
export const multiPagingBody = z
  .strictObject(
    {
      pageindex: pageFields.pageindex,
      pagesize: z.number({ error: 'must be a number' }).int().min(0).max(MAX_REPORT_PAGE_SIZE, { error: `must be less than or equal to ${MAX_REPORT_PAGE_SIZE}` }).optional(),
      filter: z.array(z.object({ key: z.string({ error: 'is required' }).max(100), value: filterValue })).optional(),
    },
    strictKeys,
  )
  .superRefine((b, ctx) => {
    checkPage(b, ctx);
    if ((b.filter?.length ?? 0) > MAX_REPORT_FILTERS) ctx.addIssue({ code: 'custom', message: 'Invalid filter', path: [] });
  });

export type Paging = { pageindex?: number; pagesize?: number; filter?: Array<{ key: string; value?: string | string[] | null }> };
export type MultiPaging = z.infer<typeof multiPagingBody>;

/**
 * IPaging filters: every comma part must be contained (AND); `"true"`/`"false"` match a boolean;
 * array elements must all be contained, or any of them when `any` (IMultiPaging lists). Matching is
 * literal (`%` and `_` match themselves) and ignores case on both databases.
 */
export function applyFilters(q: Knex.QueryBuilder, body: Paging, column: (key: string) => string, any = false): void {
  for (const f of body.filter ?? []) {
    const col = column(f.key);
    if (Array.isArray(f.value)) {
      const values = f.value.filter(Boolean);
      if (values.length) q.where((w) => { for (const v of values) whereContains(w, col, v, any); });
      continue;
    }
    const value = f.value ?? '';
    if (value === '') continue;
    if (value === 'true' || value === 'false') q.where(col, value === 'true');
    else for (const part of value.split(',')) if (part.trim()) whereContains(q, col, part.trim());
  }
}

/** Report filters by key: an empty value is ignored, an array means any of its values (`all` too is ignored). */
export function filterMap(body: { filter?: Paging['filter'] }): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const f of body.filter ?? []) {
    const values = (Array.isArray(f.value) ? f.value : [f.value ?? '']).filter((v) => v !== '' && v !== 'all');
    if (values.length) m.set(f.key, [...(m.get(f.key) ?? []), ...values]);
  }
  return m;
}

/** Page 0 and 1 are both the first page; page size 0 or absent is 20. */
export function pageOf(body: Paging): { limit: number; offset: number } {
  const size = body.pagesize || 20;
  const index = body.pageindex ?? 0;
  return { limit: size, offset: index > 1 ? size * (index - 1) : 0 };
}

/** The paged-list envelope for rows already read: the page echoes what was asked. */
export function pageEnvelope<T>(data: T[], total: number, body: Paging) {
  return { data, total, pageindex: body.pageindex ?? 0, pagesize: body.pagesize ?? 0 };
}

/** One page of `base` (its filters applied) in `order`, as the paged-list envelope: rows, total, the page asked for. */
export async function pageRows(base: Knex.QueryBuilder, body: Paging, order: string | Array<{ column: string; order?: 'asc' | 'desc' }>, columns: readonly string[] = []) {
  const total = Number((await base.clone().clearSelect().clearOrder().count({ n: '*' }).first())?.n ?? 0);
  const { limit, offset } = pageOf(body);
  const data = (await base.clone().orderBy(order as never).limit(limit).offset(offset).select(...columns)) as Array<Record<string, unknown>>;
  return pageEnvelope(data, total, body);
}
