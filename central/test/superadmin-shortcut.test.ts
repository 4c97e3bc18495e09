import crypto from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PERMISSION_NAMES } from '@lms/shared';
import { loadConfig } from '../src/config';
import { makeApp, type TestApp } from './helpers';
import { claimsOf, createStaff, staffLogin } from './accounts';

let t: TestApp;
beforeAll(async () => {
  t = await makeApp({ SUPERADMIN_USERNAME: 'dev.root@example.org' });
  await createStaff(t.tdb.db, { lmsusername: 'dev.root@example.org' }); // no role at all
  await createStaff(t.tdb.db, { lmsusername: 'other@example.org' });
});
afterAll(async () => { await t.tdb.dispose(); });

describe('SUPERADMIN_USERNAME (development and test only)', () => {
  it('grants that one account every permission by name and the wildcard, without any role', async () => {
    const pair = await staffLogin(t.app, 'dev.root@example.org');
    const c = claimsOf(pair.accessToken);
    expect(c.lmsuserroles).toEqual([]);
    expect([...(c.permissions as string[])].sort()).toEqual([...PERMISSION_NAMES, 'superadmin'].sort());
    expect(
      (await request(t.app).post('/user').set('Authorization', `Bearer ${pair.accessToken}`).send({})).status,
    ).toBe(200);
    // Roles are not permissions: the shortcut does not open role-gated routes.
    expect(
      (await request(t.app).get('/curriculum/all').set('Authorization', `Bearer ${pair.accessToken}`)).status,
    ).toBe(403);
  });

  it('does nothing for another account', async () => {
    const c = claimsOf((await staffLogin(t.app, 'other@example.org')).accessToken);
    expect(c.permissions).toEqual([]);
  });

  it('is off in production', () => {
    const key = () => crypto.randomBytes(32).toString('hex');
    const secrets = { JWT_SECRET: key(), APPLICATION_API_KEY: key(), SERVER_SYNC_KEY: key(), RPI_SECRET: key() };
    expect(
      loadConfig({ NODE_ENV: 'production', SUPERADMIN_USERNAME: 'dev.root@example.org', ...secrets })
        .superadminUsername,
    ).toBeUndefined();
    expect(
      loadConfig({ NODE_ENV: 'development', SUPERADMIN_USERNAME: 'dev.root@example.org' }).superadminUsername,
    ).toBe('dev.root@example.org');
  });
});
