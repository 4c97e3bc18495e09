import { z } from 'zod';

/**
 * One filter value of a report request (IMultiPaging, contract classroom-api "Reports"): a text, a number, a
 * flag, null, or a flat list of texts and numbers. Nothing nests: central forwards these values to the
 * classroom server, and a value that could hold objects could hold one nested thousands deep.
 */
export const MAX_REPORT_FILTER_TEXT = 500;
export const MAX_REPORT_FILTER_LIST = 1000;

const text = z.string().max(MAX_REPORT_FILTER_TEXT);

export const reportFilterValue = z.union([
  text,
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([text, z.number()])).max(MAX_REPORT_FILTER_LIST),
]);

export type ReportFilterValue = z.infer<typeof reportFilterValue>;
