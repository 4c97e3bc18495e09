import type { Express } from 'express';
import type { Logger } from 'pino';
import { ConfigError } from '../config';

export interface ServeOptions {
  name: string;
  port: number;
  /** Address to listen on; every interface when unset. */
  host?: string;
  logger: Logger;
  app: Express;
  /** Released on shutdown (database pools, Redis clients). */
  close: Array<() => Promise<unknown> | unknown>;
}

/** Listens and stops cleanly on SIGINT/SIGTERM. */
export function serve(o: ServeOptions): void {
  const onListening = () => o.logger.info({ host: o.host ?? '*', port: o.port }, `${o.name} listening on ${o.host ?? '*'}:${o.port}`);
  const server = o.host ? o.app.listen(o.port, o.host, onListening) : o.app.listen(o.port, onListening);
  const stop = () => {
    o.logger.info('shutting down');
    server.close(() => {
      void Promise.allSettled(o.close.map((c) => c())).finally(() => process.exit(0));
    });
    setTimeout(() => process.exit(0), 5000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

/** Runs a service's start-up; any failure before listening ends the process with its reason. */
export function startOrExit(name: string, main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    const message = err instanceof ConfigError || err instanceof Error ? err.message : String(err);
    process.stderr.write(`${name} cannot start: ${message}\n`);
    process.exit(1);
  });
}
