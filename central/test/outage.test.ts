import { describe, expect, it } from 'vitest';
import { ObjectStoreError } from '../src/objects';
import { outageOf, requestOutage } from '../src/http/outage';
import { ClassroomError } from '../src/classroom-client';

describe('an outage told apart from a refusal', () => {
  it('names the database for connection failures, pool time-outs and a server shutting down', () => {
    expect(outageOf(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(
      'database',
    );
    expect(
      outageOf(
        Object.assign(new Error('Knex: Timeout acquiring a connection. The pool is probably full.'), {
          name: 'KnexTimeoutError',
        }),
      ),
    ).toBe('database');
    expect(outageOf(new Error('Connection terminated unexpectedly'))).toBe('database');
    expect(
      outageOf(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' })),
    ).toBe('database');
    expect(outageOf(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe('database');
    expect(outageOf(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe('database');
    expect(outageOf(new Error('wrapped', { cause: Object.assign(new Error('x'), { code: '08006' }) }))).toBe(
      'database',
    );
  });

  it('names the object store when it is unreachable or says "not now"', () => {
    expect(outageOf(new ObjectStoreError('Unavailable', 'object store http://127.0.0.1:9000 is unreachable'))).toBe(
      'object store',
    );
    expect(
      outageOf(
        new ObjectStoreError('Failed', 'S3 says', {
          cause: Object.assign(new Error('Please reduce your request rate'), { code: 'SlowDown' }),
        }),
      ),
    ).toBe('object store');
  });

  it('leaves refusals alone: a constraint the row breaks, a bad value, ' +
      'an object store that refuses the request', () => {
    expect(outageOf(Object.assign(new Error('null value in column "progresstype"'), { code: '23502' }))).toBeNull();
    expect(
      outageOf(Object.assign(new Error('NOT NULL constraint failed'), { code: 'SQLITE_CONSTRAINT_NOTNULL' })),
    ).toBeNull();
    expect(
      outageOf(
        new ObjectStoreError('Failed', 'AccessDenied', {
          cause: Object.assign(new Error('denied'), { code: 'AccessDenied' }),
        }),
      ),
    ).toBeNull();
    expect(outageOf(new ObjectStoreError('InvalidKey', 'bad key'))).toBeNull();
    expect(outageOf(new TypeError('Do not know how to serialize a BigInt'))).toBeNull();
  });

  it('names Redis when its client is closed or offline', () => {
    class ClientClosedError extends Error {}
    class ClientOfflineError extends Error {}
    expect(outageOf(new ClientClosedError('The client is closed'))).toBe('redis');
    expect(requestOutage(new Error('turn', { cause: new ClientOfflineError('The client is offline') }))).toBe('redis');
  });

  it('on a request, an unreachable classroom server is not one of central\'s own dependencies', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    // An outbound call that failed: fetch's error carries the socket's code in its cause.
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    expect(outageOf(fetchFailed)).toBe('database');
    expect(requestOutage(fetchFailed)).toBeNull();
    expect(
      requestOutage(
        new ClassroomError(
          'unreachable',
          'Classroom server is unreachable (check RPI_CLOUD): connect ECONNREFUSED 127.0.0.1:9',
        ),
      ),
    ).toBeNull();
    expect(
      requestOutage(
        new Error('push', { cause: new ClassroomError('timeout', 'Classroom server did not answer in time') }),
      ),
    ).toBeNull();
    // The database's own refusal stays an outage.
    expect(requestOutage(refused)).toBe('database');
    expect(requestOutage(new Error('Unable to acquire a connection'))).toBe('database');
    expect(requestOutage(new Error('SQLITE_CONSTRAINT: UNIQUE constraint failed'))).toBeNull();
  });
});
