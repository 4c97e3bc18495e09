import http from 'node:http';
import type { Express } from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '../config';
import { opsOf } from './ops';

export interface ServeOptions {
  name: string;
  port: number;
  /** Address to listen on; every interface when unset. */
  host?: string;
  logger: Logger;
  app: Express;
  /** How long requests in flight may take to finish after a stop signal (default 30 s). */
  drainMs?: number;
  /**
   * How long the server goes on accepting requests after a stop signal, answering /readyz with 503,
   * before it stops listening (default 0): time for a load balancer that polls readiness to take the
   * instance out of rotation.
   */
  stopDelayMs?: number;
  /** Released on shutdown (database pools, Redis clients). */
  close: Array<() => Promise<unknown> | unknown>;
}

/**
 * Listens, and on SIGINT/SIGTERM shuts down gracefully: /readyz answers 503 from the signal on (for
 * `stopDelayMs` the server still accepts requests, so that a load balancer sees it), then it stops accepting
 * connections, closes idle
 * keep-alive connections, lets requests in flight finish (an import completes or rolls back) for at
 * most `drainMs`, then closes connections still open, releases the database and other resources and
 * exits 0. A second signal ends the process at once.
 */
export function serve(o: ServeOptions): http.Server {
  const where = `${o.host ?? '*'}:${o.port}`;
  // Express 5's listen hands a listen error (port in use, address not available) to its callback, so the
  // server is made here and the two outcomes are told apart: a server without a socket must not stay up.
  const server = http.createServer(o.app);
  server.once('error', (err: NodeJS.ErrnoException) => {
    o.logger.fatal({ err, host: o.host ?? '*', port: o.port }, `${o.name} cannot listen on ${where}: ${err.message}`);
    process.stderr.write(`${o.name} cannot listen on ${where}: ${err.code ?? err.message}\n`);
    // Resources are released if they can be within a few seconds; a pool that hangs must not keep alive
    // a process that has no socket.
    setTimeout(() => process.exit(1), 3000).unref();
    void Promise.allSettled(o.close.map((c) => c())).finally(() => process.exit(1));
  });
  server.once('listening', () => {
    o.logger.info({ host: o.host ?? '*', port: o.port }, `${o.name} listening on ${where}`);
  });
  if (o.host) server.listen(o.port, o.host);
  else server.listen(o.port);
  let inFlight = 0;
  let stopping = false;
  // Ahead of the app's own listener, which may answer at once (/healthz) before this one could set a header.
  server.prependListener('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    inFlight += 1;
    // A response of a server that is stopping asks the client not to reuse the connection.
    if (stopping) res.setHeader('Connection', 'close');
    res.once('close', () => {
      inFlight -= 1;
      if (stopping) server.closeIdleConnections();
    });
  });
  const drainMs = o.drainMs ?? 30_000;
  let stoppedAt = 0;
  const stop = (signal: string) => {
    if (stopping) {
      // A terminal's Ctrl-C may reach the process twice (SIGINT, then the runner's SIGTERM): only a
      // later, deliberate second signal cuts the drain short.
      if (Date.now() - stoppedAt < 2000) return;
      o.logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    stoppedAt = Date.now();
    opsOf(o.app)?.startDraining();
    const delay = o.stopDelayMs ?? 0;
    if (delay > 0) {
      o.logger.info(
        { signal, delayMs: delay },
        'stopping: /readyz answers 503, still accepting requests until the delay ends',
      );
      setTimeout(drain, delay);
    } else {
      drain();
    }
  };
  const drain = () => {
    o.logger.info({ inFlight }, 'shutting down: finishing requests in flight');
    const forced = setTimeout(() => {
      o.logger.warn({ inFlight }, 'requests still running after the drain time: closing their connections');
      server.closeAllConnections();
    }, drainMs);
    forced.unref();
    server.close(() => {
      clearTimeout(forced);
      void Promise.allSettled(o.close.map((c) => c())).finally(() => {
        o.logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  return server;
}

/** Runs a service's start-up; any failure before listening ends the process with its reason. */
export function startOrExit(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const message = err instanceof ConfigError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`${name} cannot start: ${message}\n`);
    process.exit(1);
  });
}
