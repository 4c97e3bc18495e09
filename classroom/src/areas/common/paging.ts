import { z } from 'zod';
import { reportFilterValue as filterValue } from '@lms/shared';

/**
 * IMultiPaging: {pageindex?, pagesize?, filter?: [{key, value}]}; pageindex counts from 1 (0 is the first page too).
 */
export const pagingBody = z
  .object({
    pageindex: z.coerce.number().int().min(0).max(1_000_000).optional(),
    pagesize: z.coerce.number().int().min(1).max(1000).optional(),
    filter: z
      .array(z.object({ key: z.string().max(100), value: filterValue.optional() }).passthrough())
      .max(50)
      .optional(),
  })
  .passthrough();

export type PagingBody = z.infer<typeof pagingBody>;

/** A filter map: empty strings and empty lists count as absent; single values become one-element lists. */
export function filtersOf(body: PagingBody): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const f of body.filter ?? []) {
    const v = f.value;
    const list = (Array.isArray(v) ? v : v === null || v === undefined ? [] : [v])
      .map(String)
      .filter((s) => s !== '' && s !== 'all');
    if (list.length) out.set(f.key, list);
  }
  return out;
}

export const first = (filters: Map<string, string[]>, key: string): string | undefined => filters.get(key)?.[0];

export function page<T>(rows: T[], body: PagingBody, defaultSize = 20) {
  const pagesize = body.pagesize ?? defaultSize;
  const pageindex = body.pageindex ?? 0;
  const start = Math.max(0, pageindex - 1) * pagesize;
  return { data: rows.slice(start, start + pagesize), total: rows.length, pageindex, pagesize };
}
