import type { Knex } from 'knex';

/** The parts of Knex's client a read uses: its pool (or a transaction's connection) and its hooks. */
interface ReadClient {
  dialect: string;
  /** Set on a transaction's client. */
  transacting?: boolean;
  /** SQLite: the connection for reads outside a transaction, when there is one. */
  readConnection?(): SqliteConnection | undefined;
  acquireConnection(): Promise<unknown>;
  releaseConnection(conn: unknown): Promise<unknown>;
  postProcessResponse(result: unknown): unknown;
  _formatBindings(bindings: readonly unknown[]): unknown[];
  emit(event: 'query', data: { sql: string; bindings: readonly unknown[]; method: 'select' }): boolean;
}
interface SqliteConnection {
  prepare(sql: string): { all(bindings: unknown[]): unknown[] };
}
interface PgConnection {
  query(config: { text: string; values: readonly unknown[] }): Promise<{ rows: unknown[] }>;
}

/**
 * The rows of a select built with Knex, as awaiting the query gives them (the same SQL and bindings,
 * the same row normalisation). A query bound to a transaction reads on the transaction's connection;
 * any other reads, on SQLite, on the client's reading connection (the last committed state, without
 * waiting for the pool or for a transaction in progress), on PostgreSQL, on a connection of the pool.
 * Knex's per-query runner is left out (its events, debug formatting, pool timer and chain of promises),
 * which on a small read costs about as much as the database does. Use `.limit(1)` and take `[0]` for
 * one row.
 */
export async function readRows<T = Record<string, unknown>>(query: Knex.QueryBuilder): Promise<T[]> {
  const compiled = query.toSQL();
  if (compiled.method !== 'select') throw new TypeError(`readRows reads a select, not a ${compiled.method} query`);
  const { sql, bindings } = compiled.toNative();
  const client = query.client as unknown as ReadClient;
  // Announced as Knex announces its own statements (`knex.on('query')`), so that logging and the tests
  // that count a route's statements see these reads too.
  client.emit('query', { sql, bindings, method: 'select' });
  const reader = client.transacting ? undefined : client.readConnection?.();
  if (reader) return client.postProcessResponse(reader.prepare(sql).all(client._formatBindings(bindings))) as T[];
  const conn = await client.acquireConnection();
  try {
    const rows =
      client.dialect === 'postgresql'
        ? (await (conn as PgConnection).query({ text: sql, values: bindings })).rows
        : (conn as SqliteConnection).prepare(sql).all(client._formatBindings(bindings));
    return client.postProcessResponse(rows) as T[];
  } finally {
    void client.releaseConnection(conn);
  }
}
