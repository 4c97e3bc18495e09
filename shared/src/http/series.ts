import type { NextFunction, Request, RequestHandler, Response } from 'express';

/**
 * Runs a fixed list of middleware in order as one handler, with a router's semantics for a list
 * mounted at one path: `next(err)` and a thrown error or rejected promise skip the rest and go on
 * to the error handlers. It spares each step the router's own per-layer matching.
 */
export function series(list: readonly RequestHandler[]): RequestHandler {
  if (list.length === 1) return list[0];
  return (req: Request, res: Response, done: NextFunction) => {
    let i = 0;
    const step = (err?: unknown): void => {
      if (err !== undefined && err !== null) {
        done(err);
        return;
      }
      const fn = list[i++];
      if (fn === undefined) {
        done();
        return;
      }
      try {
        const r = fn(req, res, step) as unknown;
        if (r && typeof (r as PromiseLike<unknown>).then === 'function') {
          (r as PromiseLike<unknown>).then(undefined, (e: unknown) => step(e ?? new Error('Rejected promise')));
        }
      } catch (e) {
        step(e);
      }
    };
    step();
  };
}
