import { mysql, type Mysql } from './mysql';

/** A MySQL 8 / MariaDB database of the existing system, read only. */
export interface SourceColumn {
  name: string;
  /** information_schema DATA_TYPE, lower case: tinyint, datetime, decimal, longtext, json, … */
  dataType: string;
}

export interface SourceTable {
  name: string;
  columns: SourceColumn[];
  primary: string[];
}

export interface Source {
  /** The URL with its password left out, for reports. */
  label: string;
  tables: Map<string, SourceTable>;
  count(table: string): Promise<number>;
  /**
   * Rows of `table` in key order after `after` (exclusive) up to `upTo` (inclusive), at most `limit` of them;
   * the whole table when `key` is undefined.
   */
  rows(
    table: string,
    columns: string[],
    key: string | undefined,
    range: { after?: string; upTo?: string; limit?: number },
  ): Promise<Record<string, unknown>[]>;
  query(sql: string, values?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export function parseMysqlUrl(url: string): Mysql.ConnectionOptions & { label: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new Error('--source must be a URL: mysql://USER:PASS@HOST:PORT/DATABASE');
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:')
    throw new Error('--source must start with mysql:// (MySQL 8 or MariaDB)');
  const database = decodeURIComponent(u.pathname.replace(/^\//, ''));
  if (!database) throw new Error('--source names no database: mysql://USER:PASS@HOST:PORT/DATABASE');
  const label = `mysql://${u.username ? `${decodeURIComponent(u.username)}@` : ''}${u.host}/${database}`;
  return {
    label,
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database,
    // Zone-less DATETIMEs are read as the text they hold (the original writes UTC) and TIMESTAMPs in a +00:00
    // session, so that neither this process's zone nor the server's shifts them; JSON and DECIMAL as text.
    dateStrings: true,
    jsonStrings: true,
    decimalNumbers: false,
    supportBigNumbers: true,
    timezone: 'Z',
    charset: 'utf8mb4',
  };
}

export async function openSource(url: string): Promise<Source> {
  const { label, ...options } = parseMysqlUrl(url);
  const conn = await mysql().createConnection(options);
  await conn.query("SET time_zone = '+00:00'");
  const database = options.database as string;
  const [cols] = await conn.query(
    'SELECT TABLE_NAME AS t, COLUMN_NAME AS c, DATA_TYPE AS d FROM information_schema.COLUMNS ' +
      'WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION',
    [database],
  );
  const [keys] = await conn.query(
    'SELECT TABLE_NAME AS t, COLUMN_NAME AS c FROM information_schema.STATISTICS ' +
      "WHERE TABLE_SCHEMA = ? AND INDEX_NAME = 'PRIMARY' ORDER BY TABLE_NAME, SEQ_IN_INDEX",
    [database],
  );
  const tables = new Map<string, SourceTable>();
  for (const r of cols as Array<{ t: string; c: string; d: string }>) {
    let t = tables.get(r.t);
    if (!t) tables.set(r.t, (t = { name: r.t, columns: [], primary: [] }));
    t.columns.push({ name: r.c, dataType: String(r.d).toLowerCase() });
  }
  for (const r of keys as Array<{ t: string; c: string }>) tables.get(r.t)?.primary.push(r.c);

  const id = (name: string) => mysql().escapeId(name);
  return {
    label,
    tables,
    async count(table) {
      const [rows] = await conn.query(`SELECT COUNT(*) AS n FROM ${id(table)}`);
      return Number((rows as Array<{ n: number | string }>)[0].n);
    },
    async rows(table, columns, key, range) {
      const where: string[] = [];
      const values: unknown[] = [];
      if (key !== undefined && range.after !== undefined) {
        where.push(`${id(key)} > ?`);
        values.push(range.after);
      }
      if (key !== undefined && range.upTo !== undefined) {
        where.push(`${id(key)} <= ?`);
        values.push(range.upTo);
      }
      const sql =
        `SELECT ${columns.map(id).join(', ')} FROM ${id(table)}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}` +
        (key !== undefined ? ` ORDER BY ${id(key)}` : '') +
        (range.limit !== undefined ? ` LIMIT ${Number(range.limit)}` : '');
      const [rows] = await conn.query(sql, values);
      return rows as Record<string, unknown>[];
    },
    async query(sql, values) {
      const [rows] = await conn.query(sql, values);
      return rows as Record<string, unknown>[];
    },
    close: () => conn.end(),
  };
}
