import { httpError, type HandlerContext } from '@lms/shared';
import type { Caller } from './types';

/** The answer of a declared route whose area is not built yet: it has passed its guards. */
export function pending(ctx: HandlerContext<Caller>): never {
  throw httpError(501, `${ctx.req.method} ${ctx.req.path} is not available in this version`);
}

export const isPending = (handler: unknown): boolean => handler === pending;
