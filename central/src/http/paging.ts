import { whereContains, type Knex } from '@lms/db';
import { z } from 'zod';

/**
 * Paged lists (`IPaging` with a key whitelist, `IMultiPaging` for reports), contract §0. Every number
 * and list is bounded so that one request stays cheap and below what either database takes: a page
 * index beyond a million, a filter value longer than 500 characters, a list of more than 500 values,
 * or more than 100 contains-matched texts in one request is refused with a 400.
 *
 * Why these figures: an id list is one `IN (…)`, which both databases take up to their bound-value
 * limit (SQLite 32,766); each contains-matched text is one `LIKE` and costs a pattern match per row,
 * and SQLite refuses a statement whose expression tree is more than 1,000 deep (a chain of 1,000 `OR`ed
 * `LIKE`s used to end as a 500). The `LIKE`s of one filter are grouped (`whereEach`), so even the
 * bounded set nests a few dozen deep, not a hundred.
 */
export const MAX_PAGE_INDEX = 1_000_000;
export const MAX_FILTER_VALUES = 500;
export const MAX_FILTER_TERMS = 100;
export const MAX_FILTER_TEXT = 500;

// The bounds are checked after the shape (checkFilterValues): inside a union their messages would be lost.
const filterValue = z
  .union([z.string(), z.array(z.string()), z.null()], { error: 'must be a string or an array of strings' })
  .optional();

/**
 * Each filter value at most `MAX_FILTER_TEXT` characters, each list
 * at most `MAX_FILTER_VALUES` values, each refusal naming its entry.
 */
function checkFilterValues(filter: Paging['filter'], ctx: z.RefinementCtx): void {
  (filter ?? []).forEach((f, i) => {
    const path = ['filter', i, 'value'];
    if (Array.isArray(f.value) && f.value.length > MAX_FILTER_VALUES)
      ctx.addIssue({ code: 'custom', message: `must hold at most ${MAX_FILTER_VALUES} values`, path });
    else if ((Array.isArray(f.value) ? f.value : [f.value ?? '']).some((v) => v.length > MAX_FILTER_TEXT))
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_FILTER_TEXT} characters`, path });
  });
}

const strictKeys = {
  error: (iss: { code: string; keys?: string[] }) =>
    iss.code === 'unrecognized_keys' ? `"${iss.keys?.[0]}" is not allowed` : undefined,
};

const pageFields = {
  pageindex: z.number({ error: 'must be a number' }).optional(),
  pagesize: z
    .number({ error: 'must be a number' })
    .int()
    .min(0)
    .max(200, { error: 'must be less than or equal to 200' })
    .optional(),
};

function checkPage(b: { pageindex?: number }, ctx: z.RefinementCtx): void {
  if (
    b.pageindex !== undefined &&
    (!Number.isInteger(b.pageindex) || b.pageindex < 0 || b.pageindex > MAX_PAGE_INDEX)
  ) {
    ctx.addIssue({ code: 'custom', message: 'Invalid page index', path: [] });
  }
}

/** The values of one filter entry: an array's elements or a string's comma parts, trimmed, empty ones dropped. */
export function filterValues(value: string | readonly string[] | null | undefined): string[] {
  return (typeof value === 'string' || value == null ? (value ?? '').split(',') : [...value])
    .map((v) => v.trim())
    .filter(Boolean);
}

/**
 * How many contains-matched texts (one `LIKE` each) a list request asks for: every value of a key not in
 * `exact`, except the flag words `true`/`false`.
 */
function containsTerms(filter: Paging['filter'], exact: readonly string[]): number {
  let n = 0;
  for (const f of filter ?? []) {
    if (exact.includes(f.key)) continue;
    n += filterValues(f.value).filter((v) => v !== 'true' && v !== 'false').length;
  }
  return n;
}

/**
 * IPaging: filter keys restricted to `keys`, at most `maxFilters` entries (5; students and teachers 6).
 * `exact` keys hold ids: their values are compared whole, any of them matching, in one `IN`; the other
 * keys are contains-matched, at most `MAX_FILTER_TERMS` texts in all.
 */
export function pagingBody(
  keys: readonly [string, ...string[]],
  o: { maxFilters?: number; unknownAllowed?: boolean; exact?: readonly string[] } = {},
) {
  const maxFilters = o.maxFilters ?? 5;
  const exact = o.exact ?? [];
  const shape = {
    ...pageFields,
    filter: z
      .array(z.object({ key: z.enum(keys, { error: `must be one of [${keys.join(', ')}]` }), value: filterValue }))
      .optional(),
  };
  const base = o.unknownAllowed ? z.looseObject(shape) : z.strictObject(shape, strictKeys);
  return base.superRefine((b, ctx) => {
    checkPage(b, ctx);
    checkFilterValues(b.filter, ctx);
    if ((b.filter?.length ?? 0) > maxFilters) ctx.addIssue({ code: 'custom', message: 'Invalid filter', path: [] });
    else if (containsTerms(b.filter, exact) > MAX_FILTER_TERMS) {
      ctx.addIssue({
        code: 'custom',
        message: `Invalid filter: at most ${MAX_FILTER_TERMS} texts to search for in one list`,
        path: [],
      });
    }
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
      pagesize: z
        .number({ error: 'must be a number' })
        .int()
        .min(0)
        .max(MAX_REPORT_PAGE_SIZE, { error: `must be less than or equal to ${MAX_REPORT_PAGE_SIZE}` })
        .optional(),
      filter: z.array(z.object({ key: z.string({ error: 'is required' }).max(100), value: filterValue })).optional(),
    },
    strictKeys,
  )
  .superRefine((b, ctx) => {
    checkPage(b, ctx);
    checkFilterValues(b.filter, ctx);
    if ((b.filter?.length ?? 0) > MAX_REPORT_FILTERS)
      ctx.addIssue({ code: 'custom', message: 'Invalid filter', path: [] });
  });

export type Paging = {
  pageindex?: number;
  pagesize?: number;
  filter?: Array<{ key: string; value?: string | string[] | null }>;
};
export type MultiPaging = z.infer<typeof multiPagingBody>;

/** Conditions joined by one `AND`/`OR` chain at most this long; longer lists are split into nested groups. */
const GROUP = 25;

/**
 * `each(item)` for every item, all of them (`AND`) or any (`OR`), as one parenthesised condition on `q`.
 * The items are nested in groups of `GROUP`, so the expression tree stays shallow (SQLite refuses one
 * deeper than 1,000) however long the list.
 */
export function whereEach<T>(
  q: Knex.QueryBuilder,
  items: readonly T[],
  any: boolean,
  each: (w: Knex.QueryBuilder, item: T) => void,
): void {
  if (!items.length) return;
  const join = (w: Knex.QueryBuilder, inner: (o: Knex.QueryBuilder) => void) =>
    any ? w.orWhere(inner) : w.where(inner);
  const add = (w: Knex.QueryBuilder, list: readonly T[]): void => {
    if (list.length <= GROUP) {
      for (const item of list) join(w, (o) => { each(o, item); });
      return;
    }
    const size = Math.ceil(list.length / GROUP);
    for (let i = 0; i < list.length; i += size) {
      const slice = list.slice(i, i + size);
      join(w, (o) => { add(o, slice); });
    }
  };
  q.where((w) => { add(w, items); });
}

/**
 * IPaging filters: every comma part must be contained (AND); `"true"`/`"false"` match a boolean;
 * array elements must all be contained, or any of them when `any` (IMultiPaging lists). `exact` keys
 * (ids) match any of their values whole, in one `IN`. Matching is literal (`%` and `_` match
 * themselves) and ignores case on both databases.
 */
export function applyFilters(
  q: Knex.QueryBuilder,
  body: Paging,
  column: (key: string) => string,
  any = false,
  exact: readonly string[] = [],
): void {
  for (const f of body.filter ?? []) {
    const col = column(f.key);
    const values = filterValues(f.value);
    if (!values.length) continue;
    if (exact.includes(f.key)) q.whereIn(col, [...new Set(values)]);
    else if (Array.isArray(f.value)) whereEach(q, values, any, (w, v) => { whereContains(w, col, v); });
    else if (f.value === 'true' || f.value === 'false') q.where(col, f.value === 'true');
    else whereEach(q, values, false, (w, v) => { whereContains(w, col, v); });
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
export async function pageRows(
  base: Knex.QueryBuilder,
  body: Paging,
  order: string | Array<{ column: string; order?: 'asc' | 'desc' }>,
  columns: readonly string[] = [],
) {
  const total = Number((await base.clone().clearSelect().clearOrder().count({ n: '*' }).first())?.n ?? 0);
  const { limit, offset } = pageOf(body);
  const data = (await base
    .clone()
    .orderBy(order as never)
    .limit(limit)
    .offset(offset)
    .select(...columns)) as Array<Record<string, unknown>>;
  return pageEnvelope(data, total, body);
}
