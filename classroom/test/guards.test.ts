import express from 'express';
import jwt from 'jsonwebtoken';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anyOrSyncKey, anyUser, createBaseApp, mount, route, staff, syncKey, syncKeyOrOfflineStaff, syncKeyOrStaff, type Gate,
} from '@lms/shared';
import { classroomGates, identify } from '../src/auth/guards';
import { ACCESS_TYPE, issueAccessToken } from '../src/auth/tokens';
import type { Caller } from '../src/http/types';
import { makeApp, silentLogger, type TestApp } from './helpers';
import { syncKeyOf, tokenFor, type TestUser } from './auth-helpers';

/** A probe app with one route per gate kind, built on the real identity middleware and gate resolver. */
function probe(t: TestApp) {
  const gates: Array<[string, Gate]> = [
    ['any', anyUser()], ['staff', staff()], ['synckey', syncKey()], ['synckeyOrStaff', syncKeyOrStaff()],
    ['synckeyOrOfflineStaff', syncKeyOrOfflineStaff()], ['anyOrSynckey', anyOrSyncKey()],
  ];
  const router = express.Router();
  mount<Caller>(
    router,
    gates.map(([name, gate]) => route<Caller>('GET', `/p/${name}`, gate, {}, ({ caller }) => caller.kind)),
    classroomGates,
  );
  const app = createBaseApp({
    config: { nodeEnv: 'test', trustProxy: 0, corsOrigins: [] },
    logger: silentLogger,
    preRoutes: [identify()],
    router,
  });
  app.locals.config = t.config;
  app.locals.deps = { db: t.tdb.db, logger: silentLogger };
  return app;
}

let online: TestApp;
let offline: TestApp;
const users: Record<string, TestUser> = {};

beforeAll(async () => {
  online = await makeApp({ SERVER_SYNC_KEY: 'sk_test_0123456789', JWT_SECRET: 'jwt_test_0123456789' });
  offline = await makeApp(
    { SERVER_SYNC_KEY: 'sk_test_0123456789', JWT_SECRET: 'jwt_test_0123456789', RPI_OFFLINE: 'true' },
    online.tdb,
  );
  users.superadmin = await tokenFor(online, 1);
  users.admin = await tokenFor(online, 2);
  users.teacher = await tokenFor(online, 3);
  users.learner = await tokenFor(online, 4);
});
afterAll(async () => { await online.tdb.dispose(); });

type Who = 'anonymous' | 'garbage' | 'synckey' | 'bearerSynckey' | 'superadmin' | 'admin' | 'teacher' | 'learner';
const headerFor = (t: TestApp, who: Who): string | undefined => {
  switch (who) {
    case 'anonymous': return undefined;
    case 'garbage': return 'Bearer not.a.token';
    case 'synckey': return syncKeyOf(t);
    case 'bearerSynckey': return `Bearer ${syncKeyOf(t)}`;
    default: return users[who].auth;
  }
};

// Expected status per gate and caller: 401 without a valid caller, 403 for a valid one the gate does not admit.
const matrix: Record<string, Record<Who, number>> = {
  any: {
    anonymous: 401,
    garbage: 401,
    synckey: 403,
    bearerSynckey: 401,
    superadmin: 200,
    admin: 200,
    teacher: 200,
    learner: 200,
  },
  staff: {
    anonymous: 401,
    garbage: 401,
    synckey: 403,
    bearerSynckey: 401,
    superadmin: 200,
    admin: 200,
    teacher: 200,
    learner: 403,
  },
  synckey: {
    anonymous: 401,
    garbage: 401,
    synckey: 200,
    bearerSynckey: 401,
    superadmin: 403,
    admin: 403,
    teacher: 403,
    learner: 403,
  },
  synckeyOrStaff: {
    anonymous: 401,
    garbage: 401,
    synckey: 200,
    bearerSynckey: 401,
    superadmin: 200,
    admin: 200,
    teacher: 200,
    learner: 403,
  },
  synckeyOrOfflineStaff: {
    anonymous: 401,
    garbage: 401,
    synckey: 200,
    bearerSynckey: 401,
    superadmin: 403,
    admin: 403,
    teacher: 403,
    learner: 403,
  },
  anyOrSynckey: {
    anonymous: 401,
    garbage: 401,
    synckey: 200,
    bearerSynckey: 401,
    superadmin: 200,
    admin: 200,
    teacher: 200,
    learner: 200,
  },
};

describe('classroom gates (online)', () => {
  for (const [gate, row] of Object.entries(matrix)) {
    it(`${gate}: answers ${JSON.stringify(row)}`, async () => {
      const app = probe(online);
      for (const [who, status] of Object.entries(row) as Array<[Who, number]>) {
        const h = headerFor(online, who);
        const res = await (h ? request(app).get(`/p/${gate}`).set('Authorization', h) : request(app).get(`/p/${gate}`));
        expect({ who, status: res.status }).toEqual({ who, status });
        if (status !== 200)
          expect(res.body).toEqual({
            error: true,
            errormessage: status === 401 ? 'Unauthorized' : 'Forbidden',
            data: false,
          });
      }
    });
  }
});

describe('classroom gates (offline)', () => {
  it('synckeyOrOfflineStaff admits staff tokens and the key, not learners', async () => {
    const app = probe(offline);
    const expected: Record<string, number> = {
      synckey: 200,
      superadmin: 200,
      admin: 200,
      teacher: 200,
      learner: 403,
      anonymous: 401,
    };
    for (const [who, status] of Object.entries(expected)) {
      const h = headerFor(offline, who as Who);
      const res = await (h
        ? request(app).get('/p/synckeyOrOfflineStaff').set('Authorization', h)
        : request(app).get('/p/synckeyOrOfflineStaff'));
      expect({ who, status: res.status }).toEqual({ who, status });
    }
  });
});

describe('gate vocabulary', () => {
  it('has no guard for central-only gates, so mounting such a route fails', () => {
    for (const gate of [
      { kind: 'roles', roles: ['admin'] },
      { kind: 'perms', perms: ['view_grade'] },
      { kind: 'token', token: 'refresh' },
    ] as Gate[]) {
      expect(classroomGates(gate)).toBeUndefined();
      expect(() => mount(express.Router(), [route('GET', '/x', gate, {}, () => 1)], classroomGates)).toThrow(
        /no guard/,
      );
    }
  });
});

describe('token validity', () => {
  it('refuses a revoked jti, a disabled or deleted user, a wrong secret, ' +
    'a wrong type and a non-HS256 algorithm', async () => {
    const app = probe(online);
    const get = (auth: string) => request(app).get('/p/any').set('Authorization', auth);

    const revoked = await tokenFor(online, 4);
    expect((await get(revoked.auth)).status).toBe(200);
    await online.tdb.db('tokens').where('token', revoked.jti).delete();
    expect((await get(revoked.auth)).status).toBe(401);

    const disabled = await tokenFor(online, 3);
    await online.tdb.db('schoolusers').where('schooluserid', disabled.schooluserid).update({ isdisabled: true });
    expect((await get(disabled.auth)).status).toBe(401);

    const deleted = await tokenFor(online, 3);
    await online.tdb.db('schoolusers').where('schooluserid', deleted.schooluserid).update({ isdeleted: true });
    expect((await get(deleted.auth)).status).toBe(401);

    const u = users.teacher;
    const claims = jwt.decode(u.token) as Record<string, unknown>;
    const { iat: _iat, exp: _exp, ...rest } = claims;
    expect((await get(`Bearer ${jwt.sign(rest, 'another-secret', { algorithm: 'HS256' })}`)).status).toBe(401);
    const signed = (payload: object, algorithm: jwt.Algorithm = 'HS256') =>
      `Bearer ${jwt.sign(payload, online.config.jwtSecret, { algorithm })}`;
    expect((await get(signed({ ...rest, claims: 'other' }))).status).toBe(401);
    expect((await get(signed(rest, 'HS384'))).status).toBe(401);
    expect((await get(signed({ ...rest, exp: Math.floor(Date.now() / 1000) - 10 }))).status).toBe(401);
    expect(claims.claims).toBe(ACCESS_TYPE);
    expect((await get(u.auth)).status).toBe(200);
  });

  it('records each token with its expiry and drops the rows of expired tokens at the next sign-in', async () => {
    const db = online.tdb.db;
    const u = await tokenFor(online, 4);
    const hour = 60 * 60_000;
    await db('tokens').insert([
      {
        token: 'expired-jti',
        lmsuserid: u.schooluserid,
        tokentype: ACCESS_TYPE,
        expires_at: new Date(Date.now() - hour).toISOString(),
      },
      {
        token: 'live-jti',
        lmsuserid: u.schooluserid,
        tokentype: ACCESS_TYPE,
        expires_at: new Date(Date.now() + hour).toISOString(),
      },
      // Recorded before tokens carried an expiry: kept until logout or disabling revokes it.
      { token: 'undated-jti', lmsuserid: u.schooluserid, tokentype: ACCESS_TYPE, expires_at: null },
    ]);
    const before = Date.now();
    const { jti } = await issueAccessToken(db, { secret: online.config.jwtSecret, minutes: 30 }, u.schooluserid, {});
    const rows = await db('tokens').where('lmsuserid', u.schooluserid).orderBy('token').select('token', 'expires_at');
    expect(rows.map((r: { token: string }) => r.token).sort()).toEqual([jti, u.jti, 'live-jti', 'undated-jti'].sort());
    const issued = rows.find((r: { token: string }) => r.token === jti) as { expires_at: string };
    const expires = Date.parse(issued.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 30 * 60_000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * 60_000);
    // The token a user holds still works after other rows were pruned.
    expect((await request(probe(online)).get('/p/any').set('Authorization', u.auth)).status).toBe(200);
  });
});
