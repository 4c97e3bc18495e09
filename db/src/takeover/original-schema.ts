import mysql from 'mysql2/promise';
import type { ColumnSpec, TableSpec } from '../tables';
import { tables as centralTables } from '../central/schema-0001';
import { tables as classroomTables } from '../classroom/schema-0001';

/**
 * A database laid out as the existing system's migrations leave it (takeover.md section 2), for tests and the
 * benchmark: TINYINT(1) booleans, JSON as LONGTEXT with a json_valid CHECK (MariaDB), zone-less DATETIMEs,
 * TIMESTAMP audit columns, DECIMAL `rpiuseraccess.timespent`, `syncrecords` for our `syncs`, no keys on the
 * two link tables, and no foreign keys (as on databases whose tables were made by hand).
 */
export interface OriginalSchemaOptions {
  service: 'central' | 'classroom';
  /** Tables the deployment lacks (a central without `studentprogressquestions`). */
  without?: string[];
}

const SOURCE_NAMES: Record<string, string> = { syncs: 'syncrecords' };
const NO_KEY = new Set(['lmsusers_roles', 'roles_permissions']);
const AUDIT_TIMESTAMPS = new Set(['created_at', 'updated_at', 'deleted_at']);

function columnDdl(table: string, c: ColumnSpec): string {
  const id = mysql.escapeId(c.name);
  let type: string;
  switch (c.type) {
    case 'string': type = `varchar(${c.length ?? 255})`; break;
    case 'text': type = 'text'; break;
    case 'boolean': type = 'tinyint(1)'; break;
    case 'integer': type = 'int'; break;
    case 'increments': return `${id} int NOT NULL AUTO_INCREMENT`;
    case 'double': type = table === 'rpiuseraccess' && c.name === 'timespent' ? 'decimal(10,0)' : 'double'; break;
    case 'json': return `${id} longtext${c.nullable ? '' : ' NOT NULL'} CHECK (json_valid(${id}))`;
    case 'timestamp': type = AUDIT_TIMESTAMPS.has(c.name) ? 'timestamp' : 'datetime'; break;
  }
  let dflt = '';
  if (c.default === 'now') dflt = ' DEFAULT CURRENT_TIMESTAMP';
  else if (typeof c.default === 'boolean') dflt = ` DEFAULT ${c.default ? 1 : 0}`;
  else if (c.default !== undefined) dflt = ` DEFAULT ${mysql.escape(c.default)}`;
  return `${id} ${type}${c.nullable || c.type === 'timestamp' ? ' NULL' : ' NOT NULL'}${dflt}`;
}

export function originalTableNames(service: 'central' | 'classroom'): string[] {
  return (service === 'central' ? centralTables : classroomTables).map((t) => SOURCE_NAMES[t.name] ?? t.name);
}

/** Creates the tables in the database `conn` is connected to. */
export async function createOriginalSchema(conn: mysql.Connection, o: OriginalSchemaOptions): Promise<void> {
  const specs: TableSpec[] = o.service === 'central' ? centralTables : classroomTables;
  const without = new Set(o.without ?? []);
  for (const spec of specs) {
    const name = SOURCE_NAMES[spec.name] ?? spec.name;
    if (without.has(name)) continue;
    const parts = spec.columns.map((c) => columnDdl(spec.name, c));
    const serial = spec.columns.find((c) => c.type === 'increments');
    if (serial) parts.push(`PRIMARY KEY (${mysql.escapeId(serial.name)})`);
    else if (spec.primary && !NO_KEY.has(spec.name)) parts.push(`PRIMARY KEY (${spec.primary.map((k) => mysql.escapeId(k)).join(', ')})`);
    await conn.query(`CREATE TABLE ${mysql.escapeId(name)} (${parts.join(', ')}) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`);
  }
  await conn.query('CREATE TABLE `SequelizeMeta` (`name` varchar(255) NOT NULL PRIMARY KEY) DEFAULT CHARSET=utf8mb3');
  await conn.query("INSERT INTO `SequelizeMeta` VALUES ('20260719160000-rewrap-md5-passwords-bcrypt.js')");
}

/** Inserts rows (objects with the same keys) in multi-row statements. */
export async function insertOriginalRows(conn: mysql.Connection, table: string, rows: Array<Record<string, unknown>>): Promise<void> {
  if (!rows.length) return;
  const cols = Object.keys(rows[0]);
  const per = Math.max(1, Math.floor(20000 / cols.length));
  for (let i = 0; i < rows.length; i += per) {
    const part = rows.slice(i, i + per);
    await conn.query(`INSERT INTO ${mysql.escapeId(table)} (${cols.map((c) => mysql.escapeId(c)).join(', ')}) VALUES ?`, [part.map((r) => cols.map((c) => r[c]))]);
  }
}

export interface ScratchMysql {
  url: string;
  conn: mysql.Connection;
  drop(): Promise<void>;
}

/**
 * A new, uniquely named database on the MySQL/MariaDB server of `serverUrl` (TEST_MYSQL_URL; on this machine and
 * in CI `mysql://root@127.0.0.1:3306/test`), dropped again by `drop`.
 */
export async function createScratchMysql(serverUrl: string, prefix = 'lms_src'): Promise<ScratchMysql> {
  const u = new URL(serverUrl);
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password) });
  await admin.query(`CREATE DATABASE ${mysql.escapeId(name)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  await admin.end();
  u.pathname = `/${name}`;
  const conn = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), database: name, timezone: 'Z', dateStrings: true });
  await conn.query("SET time_zone = '+00:00'");
  return {
    url: u.toString(),
    conn,
    async drop() {
      await conn.query(`DROP DATABASE IF EXISTS ${mysql.escapeId(name)}`);
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
    const c = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username), password: decodeURIComponent(u.password), connectTimeout: 2000 });
    await c.end();
    return true;
  } catch {
    return false;
  }
}
