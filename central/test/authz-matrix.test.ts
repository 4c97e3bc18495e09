import crypto from 'node:crypto';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANT_ROWS, PERMISSION_NAMES, ROLE_IDS, type Gate } from '@lms/shared';
import { centralRoutes } from '../src/areas';
import { routeCounts } from '../src/routes-report';
import type { CentralRoute } from '../src/http/types';
import { makeApp, type TestApp } from './helpers';
import { claimsOf, createRole, createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';

// The persona x route matrix: every declared route, called by every kind of caller, must answer
// exactly what the spec's rules give: 401 (no valid caller), 403 (caller lacks the role or
// permission), or anything else ("passed the guards": the handler's own answer, never 501).

const API_KEY = 'matrix-app-key';

interface Persona {
  name: string;
  header?: string;
  /** What the expectation needs to know; deliberately independent of the guard code. */
  kind: 'anonymous' | 'apikey' | 'staff' | 'schoolstaff' | 'learner';
  roles?: string[]; // role keys held among the seeded roles
  perms?: Set<string>;
  wildcard?: boolean;
}

type Expect = 'pass' | 401 | 403;

function expectGate(p: Persona, gate: Gate): Expect {
  switch (gate.kind) {
    case 'public':
      return 'pass';
    case 'token':
      return 401; // none of the personas sends a refresh/change-password/verify token in the query
    case 'any':
      return p.kind === 'staff' || p.kind === 'schoolstaff' ? 'pass' : 401;
    case 'roles':
      if (p.kind === 'apikey') return gate.roles.includes('apikey') ? 'pass' : 401;
      if (p.kind === 'anonymous' || p.kind === 'learner') return 401;
      if (p.kind === 'schoolstaff') return 403;
      return gate.roles.some((r) => p.roles?.includes(r)) ? 'pass' : 403;
    case 'perms':
      if (p.kind === 'anonymous' || p.kind === 'apikey' || p.kind === 'learner') return 401;
      if (p.kind === 'schoolstaff') return 403;
      return p.wildcard || gate.perms.some((n) => p.perms?.has(n)) ? 'pass' : 403;
    default:
      throw new Error(`the central API declares no ${gate.kind} gate`);
  }
}

function expected(p: Persona, r: CentralRoute): Expect {
  if (r.classGuard) {
    const c = expectGate(p, r.classGuard);
    if (c !== 'pass') return c;
  }
  return expectGate(p, r.gate);
}

/** A concrete URL for a route: every parameter filled with an id that does not exist. */
const concrete = (path: string) => path.replace(/:[A-Za-z_]+/g, () => crypto.randomUUID());

/** Express matches the first route of the table whose pattern fits; the expectation follows that route. */
function firstMatch(method: string, url: string): CentralRoute {
  const hit = centralRoutes.find((r) => {
    if (r.method !== method) return false;
    const re = new RegExp(`^${r.path.replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`, 'i');
    return re.test(url);
  });
  if (!hit) throw new Error(`no route for ${method} ${url}`);
  return hit;
}

let t: TestApp;
let server: Server;
const personas: Persona[] = [];

const setOf = (role: string) => new Set(GRANT_ROWS[role]);

beforeAll(async () => {
  t = await makeApp({ APPLICATION_API_KEY: API_KEY, LOG_IMPORT_ENABLED: 'true', RPI_CLOUD: 'http://127.0.0.1:9', RATE_LIMIT_MAX: '1000000' });
  server = t.app.listen(0, '127.0.0.1');
  const db = t.tdb.db;
  const staff = async (name: string, roleids: string[]) => {
    await createStaff(db, { lmsusername: `${name}@matrix.test`, roleids });
    return `Bearer ${(await staffLogin(server, `${name}@matrix.test`)).accessToken}`;
  };

  // A multi-role bearer whose union is every row: Admin plus a role with exactly what Admin lacks.
  const rest = PERMISSION_NAMES.filter((n) => !GRANT_ROWS.Admin.includes(n));
  const restRole = await createRole(db, 'The rest', rest);
  // Two roles whose grant counts sum to 190 but overlap: no wildcard.
  const x = await createRole(db, 'First hundred', PERMISSION_NAMES.slice(0, 100));
  const y = await createRole(db, 'Ninety more', PERMISSION_NAMES.slice(60, 150));
  await createSchoolUser(db, { schoolusername: 'mteacher', role: 3 });
  await createSchoolUser(db, { schoolusername: 'mlearner', role: 4 });
  // A learner cannot sign in here; its token is what the classroom-style login would mint for it.
  const learnerRow = await db('schoolusers').where({ schoolusername: 'mlearner' }).first();
  const { issueSchoolToken } = await import('../src/auth/session');
  const learnerToken = (await issueSchoolToken(db, t.config, learnerRow)).accessToken;

  personas.push(
    { name: 'anonymous', kind: 'anonymous' },
    { name: 'API key', kind: 'apikey', header: `Bearer ${API_KEY}` },
    { name: 'User (0 permissions)', kind: 'staff', roles: ['user'], perms: new Set(), header: await staff('user', [ROLE_IDS.user]) },
    { name: 'Teacher', kind: 'staff', roles: ['teacher'], perms: setOf('Teacher'), header: await staff('teacher', [ROLE_IDS.teacher]) },
    { name: 'Admin', kind: 'staff', roles: ['admin'], perms: setOf('Admin'), header: await staff('admin', [ROLE_IDS.admin]) },
    { name: 'Super Admin', kind: 'staff', roles: ['superadmin'], perms: setOf('Super Admin'), wildcard: true, header: await staff('super', [ROLE_IDS.superadmin]) },
    {
      name: 'union of two roles = every row (wildcard)', kind: 'staff', roles: ['admin'], perms: new Set(PERMISSION_NAMES), wildcard: true,
      header: await staff('union', [ROLE_IDS.admin, restRole]),
    },
    {
      name: 'two overlapping roles, counts sum to 190 (no wildcard)', kind: 'staff', roles: [],
      perms: new Set([...PERMISSION_NAMES.slice(0, 100), ...PERMISSION_NAMES.slice(60, 150)]), header: await staff('overlap', [x, y]),
    },
    { name: 'school teacher', kind: 'schoolstaff', header: `Bearer ${(await schoolLogin(server, 'mteacher')).accessToken}` },
    { name: 'school learner', kind: 'learner', header: `Bearer ${learnerToken}` },
  );
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await t.tdb.dispose();
});

describe('route catalogue', () => {
  it('declares every route of the catalogue with the spec text gating counts', () => {
    const c = routeCounts();
    expect(c.total).toBe(275);
    expect(c.counts).toEqual({ perms: 210, roles: 27, any: 27, public: 11 });
  });
});

describe('wildcard is counted, not assumed', () => {
  it('gives the union bearer the superadmin entry and the overlapping pair none', () => {
    const union = claimsOf(personas.find((p) => p.name.startsWith('union'))!.header!.slice(7));
    expect(union.permissions).toHaveLength(191);
    expect(union.permissions).toContain('superadmin');
    const overlap = claimsOf(personas.find((p) => p.name.startsWith('two overlapping'))!.header!.slice(7));
    expect(overlap.permissions).toHaveLength(150);
    expect(overlap.permissions).not.toContain('superadmin');
    const admin = claimsOf(personas.find((p) => p.name === 'Admin')!.header!.slice(7));
    expect(admin.permissions).toHaveLength(159);
    const teacher = claimsOf(personas.find((p) => p.name === 'Teacher')!.header!.slice(7));
    expect(teacher.permissions).toHaveLength(60);
  });
});

describe('persona x route matrix', () => {
  it('answers every persona on every route exactly as the rules say', async () => {
    const wrong: string[] = [];
    let checked = 0;
    // Logout is public and really ends the persona's session, so it goes last.
    const isLogout = (r: CentralRoute) => r.path === '/auth/logout';
    for (const route of [...centralRoutes.filter((r) => !isLogout(r)), ...centralRoutes.filter(isLogout)]) {
      const url = concrete(route.path);
      const target = firstMatch(route.method, url);
      for (const p of personas) {
        const want = expected(p, target);
        let req = request(server)[route.method.toLowerCase() as 'get'](url);
        if (p.header) req = req.set('Authorization', p.header);
        if (route.method !== 'GET' && route.method !== 'DELETE') req = req.send({});
        const res = await req;
        checked += 1;
        // A route that passed its guards does its job: no 501 and no 500, except where it calls the classroom
        // server, which no one runs here (the contract answers that failure with 500).
        const callsClassroom = route.path === '/sync/cloud' || route.path.includes('online');
        const ok = want === 'pass'
          ? ![401, 403, 501].includes(res.status) && (res.status !== 500 || callsClassroom)
          : res.status === want;
        if (!ok) wrong.push(`${p.name}: ${route.method} ${route.path} -> ${res.status}, expected ${want}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBe(centralRoutes.length * personas.length);
  }, 300_000);
});
