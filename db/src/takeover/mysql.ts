import type * as Mysql from 'mysql2/promise';

let loaded: typeof Mysql | undefined;

/**
 * mysql2, loaded on first use: both services load this package, and only the takeover talks to MySQL
 * (loading the driver at start would cost every server about 90 modules of memory it never uses).
 */
export function mysql(): typeof Mysql {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  loaded ??= require('mysql2/promise') as typeof Mysql;
  return loaded;
}

export type { Mysql };
