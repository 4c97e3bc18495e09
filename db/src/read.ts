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

interface StreamClient extends ReadClient {
  connectionSettings?: { filename?: string };
  driver?: new (file: string, options: object) => SqliteStreamConnection;
  emit(event: 'query', obj: object): boolean;
}
interface SqliteStreamConnection {
  prepare(sql: string): { iterate(bindings: unknown[]): IterableIterator<Record<string, unknown>> };
  pragma(source: string): unknown;
  close(): unknown;
}

/** Rows fetched from a PostgreSQL cursor at a time: few round trips, a bounded amount held. */
export const STREAM_FETCH_ROWS = 1000;
let cursorSeq = 0;

/**
 * The rows of a select built with Knex, read as they are consumed: memory stays bounded however many
 * rows the query yields (a CSV download of a whole country). SQLite reads on a connection of its own
 * (a read transaction in WAL mode: the last committed state, while the pool's connection goes on
 * writing); PostgreSQL through a server-side cursor inside a read-only transaction, fetched in batches.
 * Rows are normalised as awaiting the query would give them. Each statement is announced on the
 * client's `query` event like any other. Stopping early (`break`, a client gone) closes the cursor.
 */
export async function* streamRows<T = Record<string, unknown>>(db: Knex, query: Knex.QueryBuilder): AsyncGenerator<T> {
  const compiled = query.toSQL();
  if (compiled.method !== 'select') throw new TypeError(`streamRows reads a select, not a ${compiled.method} query`);
  const client = query.client as unknown as StreamClient;
  const normalise = (rows: unknown[]) => client.postProcessResponse(rows) as T[];
  if (client.transacting) {
    // Inside a transaction only its connection sees what it wrote.
    for (const row of (await query) as T[]) yield row;
    return;
  }
  if (client.dialect === 'postgresql') {
    const trx = await db.transaction();
    const cursor = `lms_rows_${(cursorSeq = (cursorSeq + 1) % 1_000_000)}`;
    let finished = false;
    try {
      await trx.raw('set transaction read only');
      await trx.raw(
        `declare ${cursor} no scroll cursor for ${compiled.sql}`,
        compiled.bindings as readonly Knex.RawBinding[],
      );
      for (;;) {
        const batch = (await trx.raw(`fetch forward ${STREAM_FETCH_ROWS} from ${cursor}`)) as { rows: unknown[] };
        for (const row of normalise(batch.rows)) yield row;
        if (batch.rows.length < STREAM_FETCH_ROWS) break;
      }
      finished = true;
    } finally {
      // A read-only transaction: ending it either way closes the cursor.
      if (finished) await trx.commit();
      else await trx.rollback().catch(() => undefined);
    }
    return;
  }
  const filename = client.connectionSettings?.filename;
  if (!client.driver || !filename || filename === ':memory:') {
    // Only the pool's own connection sees an in-memory database.
    for (const row of (await query) as T[]) yield row;
    return;
  }
  const { sql, bindings } = compiled.toNative();
  const conn = new client.driver(filename, { readonly: true, fileMustExist: true });
  try {
    conn.pragma('busy_timeout = 5000');
    client.emit('query', { method: 'select', sql, bindings, streamed: true });
    for (const row of conn.prepare(sql).iterate(client._formatBindings(bindings))) {
      normalise([row]);
      yield row as T;
    }
  } finally {
    conn.close();
  }
}
