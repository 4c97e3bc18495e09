import { httpErrorWith, zodMessage } from '@lms/shared';
import { z, type ZodType } from 'zod';

/**
 * Bulk uploads of many rows (a spreadsheet of learners): decision 29. A refused batch answers the
 * contract's 400 `errormessage` and, besides it, every problem of every row as `{row, field, message}`
 * so that a person can fix the whole file in one pass; `?dryrun=true` checks a batch the same way and
 * writes nothing. `row` counts the batch's rows from 1 (the first line under the spreadsheet's header);
 * a problem of the batch as a whole (its school, its size) has `row: null`.
 */
export interface RowError {
  row: number | null;
  field: string;
  message: string;
}

export const dryrunQuery = z.looseObject({ dryrun: z.string().optional() });
export const isDryrun = (q: { dryrun?: string }): boolean => q.dryrun === 'true';

/** The problems found so far, and the summary line of the 400 (the contract's messages, each once). */
export class BatchProblems {
  readonly errors: RowError[] = [];
  private readonly summary: string[] = [];

  /** A problem of row `index` (0-based in the batch), or of the batch when `index` is null. */
  add(index: number | null, field: string, message: string, summary: string | null = message): void {
    this.errors.push({ row: index === null ? null : index + 1, field, message });
    if (summary !== null) this.note(summary);
  }

  /** A line of the summary that no single row carries (for example every taken username at once). */
  note(summary: string): void {
    if (!this.summary.includes(summary)) this.summary.push(summary);
  }

  get ok(): boolean {
    return this.errors.length === 0;
  }

  /** 400 with the summary as `errormessage` and every problem as `errors`, unless there is none. */
  throwIfAny(): void {
    if (!this.ok) throw httpErrorWith(400, this.summary.join(', '), { errors: this.errors });
  }

  /** What a dry run answers. */
  report(): { valid: boolean; errors: RowError[] } {
    return { valid: this.ok, errors: this.errors };
  }
}

/**
 * Parses a batch body with `schema`, whose rows are the array under `rowsKey`. Every issue is recorded
 * (row, field and the schema's words); the summary is what the route's schema would have said. Answers
 * the parsed body, or undefined when it does not parse, and the indexes of rows that parsed on their
 * own (their business rules are still worth checking).
 */
export function parseBatch<T>(
  schema: ZodType<T>,
  rowSchema: ZodType,
  rowsKey: string,
  body: unknown,
  problems: BatchProblems,
): { value: T | undefined; goodRows: Set<number> } {
  const result = schema.safeParse(body);
  const goodRows = new Set<number>();
  const rows = body && typeof body === 'object' ? (body as Record<string, unknown>)[rowsKey] : undefined;
  if (Array.isArray(rows)) rows.forEach((r, i) => { if (rowSchema.safeParse(r).success) goodRows.add(i); });
  if (result.success) return { value: result.data, goodRows };
  for (const issue of result.error.issues) {
    const [top, index, ...rest] = issue.path;
    const inRow = top === rowsKey && typeof index === 'number';
    const field = inRow ? (rest.length ? rest.join('.') : '') : issue.path.join('.');
    const keys = (issue as { keys?: string[] }).keys;
    problems.add(inRow ? index : null, field || keys?.[0] || '', issue.message, null);
  }
  problems.note(zodMessage(result.error));
  return { value: undefined, goodRows };
}
