import pino, { type DestinationStream, type Logger, type LoggerOptions } from 'pino';

export type { Logger };

export interface LoggerConfig {
  level: string;
  name: string;
  /** Extra destinations (for example the classroom server's daily log files). */
  streams?: pino.StreamEntry[];
}

export function createLogger(c: LoggerConfig, destination?: DestinationStream): Logger {
  const options: LoggerOptions = {
    name: c.name,
    level: c.level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.query.refreshtoken',
        'req.query.changepasswordtoken',
        'req.query.verifyemailtoken',
        'req.query.accesstoken',
      ],
      censor: '[redacted]',
    },
  };
  if (c.streams?.length) {
    return pino(
      options,
      // The logger's own level filters; the main stream takes every level, so that a level raised at run time
      // (a box's log level set at central) reaches it.
      pino.multistream([{ level: 'trace', stream: destination ?? process.stdout }, ...c.streams]),
    );
  }
  return destination ? pino(options, destination) : pino(options);
}
