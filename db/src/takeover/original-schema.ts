import { mysql, type Mysql } from './mysql';
import { centralTables, classroomTables, type ExistingColumn, type ExistingTable } from './existing-tables';

/**
 * A database laid out as the existing system has it (existing-tables.ts, from the description of its two
 * databases): its table names (`syncrecords`, `SequelizeMeta`), its MySQL types (TINYINT(1) and TINYINT, INT
 * UNSIGNED, DOUBLE UNSIGNED, DECIMAL, CHAR(36) with a binary collation, JSON as LONGTEXT with a json_valid
 * CHECK as on MariaDB, zone-less DATETIMEs and TIMESTAMP audit columns), its defaults and unique keys, no keys
 * on the two link tables, and no foreign keys (as on databases whose tables were made by hand).
 */
export interface OriginalSchemaOptions {
  service: 'central' | 'classroom';
  /** Tables the deployment lacks (a central without `studentprogressquestions`). */
  without?: string[];
  /**
   * Columns that later releases of the existing system add (organisations, the grading protocol): a deployment
   * that ran them holds values this service has no place for.
   */
  later?: boolean;
  /** A box that never ran the 2026-08-18 migration: no unique key on its submissions. */
  withoutSubmissionKey?: boolean;
}

/** Columns of later releases (edtech-lms-api migrations 2026-09-29 and 2026-10-01; the box's student API). */
export const LATER_COLUMNS: Record<'central' | 'classroom', Array<[table: string, ddl: string]>> = {
  central: [
    ['lmsusers', '`organisationid` varchar(36) NULL'],
    ['schools', '`organisationid` varchar(36) NULL'],
    ['studentprogress', '`verified` tinyint(1) NOT NULL DEFAULT 0'],
    ['studentprogressquestions', '`clientiscorrect` tinyint(1) NULL DEFAULT NULL'],
    ['studentprogressquestions', "`servergrade` enum('correct','incorrect','ungradable') NULL DEFAULT NULL"],
  ],
  classroom: [
    ['studentprogress', '`verified` tinyint(1) NOT NULL DEFAULT 0'],
    ['studentprogressquestions', '`answer` text NULL'],
    ['studentprogressquestions', '`clientiscorrect` tinyint(1) NULL DEFAULT NULL'],
    ['studentprogressquestions', "`servergrade` enum('correct','incorrect','ungradable') NULL DEFAULT NULL"],
  ],
};

function defaultDdl(type: string, d: string | undefined): string {
  if (d === undefined) return '';
  if (d === 'now') return ' DEFAULT CURRENT_TIMESTAMP';
  if (d === 'null') return ' DEFAULT NULL';
  if (d === 'true' || d === 'false') return ` DEFAULT ${d === 'true' ? 1 : 0}`;
  if (/^-?\d+(\.\d+)?$/.test(d)) return ` DEFAULT ${d}`;
  if (/^'.*'$/.test(d)) return ` DEFAULT ${d}`;
  return ` DEFAULT ${mysql().escape(d)}`;
}

function columnDdl([name, type, nullable, dflt]: ExistingColumn, autoIncrement: boolean): string {
  const id = mysql().escapeId(name);
  const nul = nullable ? ' NULL' : ' NOT NULL';
  if (autoIncrement) return `${id} ${type} NOT NULL AUTO_INCREMENT`;
  if (type === 'json') return `${id} longtext${nul}${defaultDdl(type, dflt)} CHECK (json_valid(${id}))`;
  if (type === 'bool') return `${id} tinyint(1)${nul}${defaultDdl(type, dflt)}`;
  if (type.startsWith('char('))
    return `${id} ${type} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin${nul}${defaultDdl(type, dflt)}`;
  return `${id} ${type}${nul}${defaultDdl(type, dflt)}`;
}

export function originalTableNames(service: 'central' | 'classroom'): string[] {
  return (service === 'central' ? centralTables : classroomTables)
    .map((t) => t.name)
    .filter((n) => n !== 'SequelizeMeta');
}

/** Creates the tables in the database `conn` is connected to. */
export async function createOriginalSchema(conn: Mysql.Connection, o: OriginalSchemaOptions): Promise<void> {
  const specs: ExistingTable[] = o.service === 'central' ? centralTables : classroomTables;
  const without = new Set(o.without ?? []);
  const later = o.later ? LATER_COLUMNS[o.service] : [];
  for (const spec of specs) {
    if (without.has(spec.name)) continue;
    const parts = spec.columns.map((c) => columnDdl(c, c[0] === spec.autoIncrement));
    for (const [table, ddl] of later) if (table === spec.name) parts.push(ddl);
    if (spec.primary.length) parts.push(`PRIMARY KEY (${spec.primary.map((k) => mysql().escapeId(k)).join(', ')})`);
    for (const u of spec.unique) {
      if (o.withoutSubmissionKey && spec.name === 'studentprogress') continue;
      if (u.length === 1 && spec.primary.length === 1 && u[0] === spec.primary[0]) continue;
      parts.push(`UNIQUE KEY (${u.map((k) => mysql().escapeId(k)).join(', ')})`);
    }
    const charset = spec.name === 'SequelizeMeta' ? 'utf8mb3' : 'utf8mb4 COLLATE=utf8mb4_unicode_ci';
    await conn.query(`CREATE TABLE ${mysql().escapeId(spec.name)} (${parts.join(', ')}) DEFAULT CHARSET=${charset}`);
  }
  await conn.query("INSERT INTO `SequelizeMeta` VALUES ('20260719160000-rewrap-md5-passwords-bcrypt.js')");
}

/** Inserts rows (objects with the same keys) in multi-row statements. */
export async function insertOriginalRows(
  conn: Mysql.Connection,
  table: string,
  rows: Array<Record<string, unknown>>,
): Promise<void> {
  if (!rows.length) return;
  const cols = Object.keys(rows[0]);
  const per = Math.max(1, Math.floor(20000 / cols.length));
  for (let i = 0; i < rows.length; i += per) {
    const part = rows.slice(i, i + per);
    await conn.query(
      `INSERT INTO ${mysql().escapeId(table)} (${cols.map((c) => mysql().escapeId(c)).join(', ')}) VALUES ?`,
      [part.map((r) => cols.map((c) => r[c]))],
    );
  }
}

export interface ScratchMysql {
  url: string;
  conn: Mysql.Connection;
  drop(): Promise<void>;
}

/**
 * A new, uniquely named database on the MySQL/MariaDB server of `serverUrl` (TEST_MYSQL_URL; on this machine and
 * in CI `mysql://root@127.0.0.1:3306/test`), dropped again by `drop`.
 */
export async function createScratchMysql(serverUrl: string, prefix = 'lms_src'): Promise<ScratchMysql> {
  const u = new URL(serverUrl);
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = await mysql().createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  });
  await admin.query(`CREATE DATABASE ${mysql().escapeId(name)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  u.pathname = `/${name}`;
  const conn = await mysql().createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    database: name,
    timezone: 'Z',
    dateStrings: true,
  });
  await conn.query("SET time_zone = '+00:00'");
  return {
    url: u.toString(),
    conn,
    async drop() {
      await conn.query(`DROP DATABASE IF EXISTS ${mysql().escapeId(name)}`);
      await conn.end();
    },
  };
}

/** The server tests and the benchmark use: TEST_MYSQL_URL, else the local one. */
export function testMysqlUrl(env: NodeJS.ProcessEnv = process.env): string {
  return env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test';
}

/** Whether a MySQL/MariaDB server answers at `url` with these credentials. */
export async function mysqlAnswers(url: string): Promise<boolean> {
  const u = new URL(url);
  try {
    const c = await mysql().createConnection({
      host: u.hostname,
      port: Number(u.port || 3306),
      user: decodeURIComponent(u.username),
      password: decodeURIComponent(u.password),
      connectTimeout: 2000,
    });
    await c.end();
    return true;
  } catch {
    return false;
  }
}
