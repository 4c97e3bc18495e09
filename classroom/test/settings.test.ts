import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classroom, createTestDatabase, type TestDatabase } from '@lms/db';
import { createLogger } from '@lms/shared';
import { createApp } from '../src/app';
import { loadConfig } from '../src/config';

describe('classroom settings for proxies, a shared Redis and PostgreSQL', () => {
  let tdb: TestDatabase;
  beforeAll(async () => {
    tdb = await createTestDatabase({ kinds: classroom.kinds, migrations: classroom.migrations });
  });
  afterAll(async () => { await tdb.dispose(); });

  it('reads them, with the documented defaults', () => {
    const d = loadConfig({ NODE_ENV: 'test' });
    expect([d.trustProxy, d.redisKeyPrefix, d.database]).toEqual([
      0,
      '',
      { poolMax: 10, statementTimeoutMs: 0, sessionSettings: true },
    ]);
    const c = loadConfig({
      NODE_ENV: 'test',
      TRUST_PROXY: '2',
      REDIS_KEY_PREFIX: 'school-7:',
      DATABASE_POOL_MAX: '3',
      DATABASE_STATEMENT_TIMEOUT_SECONDS: '30',
      DATABASE_SESSION_SETTINGS: 'false',
    });
    expect([c.trustProxy, c.redisKeyPrefix, c.database]).toEqual([
      2,
      'school-7:',
      { poolMax: 3, statementTimeoutMs: 30_000, sessionSettings: false },
    ]);
    expect(() => loadConfig({ NODE_ENV: 'test', TRUST_PROXY: 'yes please' })).toThrow(/TRUST_PROXY/);
  });

  it('counts and logs the client TRUST_PROXY hops away, not a forged first entry', async () => {
    const lines: Array<{ req?: { client?: string } }> = [];
    const logger = createLogger(
      { name: 'test', level: 'info' },
      { write: (l: string) => void lines.push(JSON.parse(l)) },
    );
    const app = createApp(
      loadConfig({ NODE_ENV: 'test', DATABASE_URL: tdb.url, TRUST_PROXY: '2', RATE_LIMIT_MAX: '2' }),
      { db: tdb.db, logger },
    );
    const via = (forged: string) => request(app).get('/').set('X-Forwarded-For', `${forged}, 198.51.100.20, 10.0.0.2`);
    expect([
      (await via('203.0.113.1')).status,
      (await via('203.0.113.2')).status,
      (await via('203.0.113.3')).status,
    ]).toEqual([200, 200, 429]);
    expect(lines.filter((l) => l.req).map((l) => l.req!.client)).toEqual([
      '198.51.100.20',
      '198.51.100.20',
      '198.51.100.20',
    ]);
  });
});
