import crypto from 'node:crypto';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GRANT_ROWS, PERMISSION_NAMES, ROLE_IDS } from '@lms/shared';
import { centralRoutes } from '../src/areas';
import { routeCounts } from '../src/routes-report';
import CONTRACT from './contract/central-routes.json';
import { makeApp, type TestApp } from './helpers';
import { claimsOf, createRole, createSchoolUser, createStaff, schoolLogin, staffLogin } from './accounts';

// The persona x route matrix: every route of the contract's catalogue (a copy of
// shared/contract/central-routes.json kept here as test data, so that the code's own route table is never
// its own yardstick), called by every kind of caller, must answer exactly what the contract's gate gives:
// 401 (no valid caller), 403 (caller lacks the role or permission), or anything else that is not a 500
// ("passed the guards": the handler's own answer, never 501 and never a crash).

const API_KEY = crypto.randomBytes(32).toString('base64url');

/** A gate as the contract writes it (`kind`, `roles`, `perms`, and `token` on the three query-token routes). */
interface ContractGate {
  kind: 'public' | 'any' | 'roles' | 'perms';
  roles?: string[];
  perms?: string[];
  token?: string;
}
interface ContractRoute {
  method: string;
  path: string;
  gate: ContractGate;
  classGuard?: { roles: string[] };
  switch?: string;
}

/**
 * Where the contract's JSON is not the whole truth, with the contract text or decision that says so: the
 * cells of these routes follow this gate instead.
 */
const CONTRACT_TEXT: Record<string, ContractGate> = {
  // central-api.md, gate notes: its route guard "was commented out,
  // so only the class guard applies and the API key is accepted".
  'GET /student/download-students': { kind: 'public' },
};

/** Routes beyond the catalogue, each with the decision that adds it and its gate. */
const BEYOND: ContractRoute[] = [
  // Decision 2: the admin UI's path for the template types, public like /common/templatetype.
  { method: 'GET', path: '/dropdown/templatetype', gate: { kind: 'public' } },
  // Sync progress for the staff sync-record page: the sync record permission, like POST /report/syncrecords.
  { method: 'GET', path: '/report/syncstatus', gate: { kind: 'perms', perms: ['view_sync_record'] } },
];

const CATALOGUE: ContractRoute[] = [...(CONTRACT as ContractRoute[]), ...BEYOND];

interface Persona {
  name: string;
  header?: string;
  /** What the expectation needs to know; deliberately independent of the guard code. */
  kind: 'anonymous' | 'apikey' | 'staff' | 'schoolstaff' | 'learner';
  roles?: string[]; // role keys held among the seeded roles
  perms?: Set<string>;
  wildcard?: boolean;
  /** A staff account whose token names schools or countries. */
  narrowed?: boolean;
}

/** `narrowedOut`: the gate admits, the scope refuses (403), unless the empty body is refused first (400). */
type Expect = 'pass' | 401 | 403 | 'narrowedOut';

function expectGate(p: Persona, gate: ContractGate): Expect {
  if (gate.token) return 401; // none of the personas sends a refresh/change-password/verify token in the query
  switch (gate.kind) {
    case 'public':
      return 'pass';
    case 'any':
      return p.kind === 'staff' || p.kind === 'schoolstaff' ? 'pass' : 401;
    case 'roles':
      if (p.kind === 'apikey') return gate.roles!.includes('apikey') ? 'pass' : 401;
      if (p.kind === 'anonymous' || p.kind === 'learner') return 401;
      if (p.kind === 'schoolstaff') return 403;
      return gate.roles!.some((r) => p.roles?.includes(r)) ? 'pass' : 403;
    case 'perms':
      if (p.kind === 'anonymous' || p.kind === 'apikey' || p.kind === 'learner') return 401;
      if (p.kind === 'schoolstaff') return 403;
      return p.wildcard || gate.perms!.some((n) => p.perms?.has(n)) ? 'pass' : 403;
    default:
      throw new Error(`the contract declares no ${String(gate.kind)} gate`);
  }
}

const keyOf = (r: { method: string; path: string }) => `${r.method} ${r.path}`;

/**
 * Changes that reach every school and country (docs/security.md): a staff account narrowed to schools or
 * countries is refused them with 403 even when its role holds the permission.
 */
const WHOLE_ORGANISATION = new Set([
  'POST /roles/create',
  'PUT /roles/:roleid',
  'DELETE /roles/:roleid',
  'POST /country/create',
  'POST /standard/migrate-standardid',
  'POST /standard/remove-standardid',
  'POST /student/migrate-standardid',
  'POST /student/migrate-subject-curriculum',
  'POST /level/update_quiz_points',
  'POST /lesson/update_reward_points',
]);

function expected(p: Persona, r: ContractRoute): Expect {
  const gate = expectedAtGate(p, r);
  return gate === 'pass' && p.narrowed && WHOLE_ORGANISATION.has(`${r.method} ${r.path}`) ? 'narrowedOut' : gate;
}

function expectedAtGate(p: Persona, r: ContractRoute): Expect {
  if (r.classGuard) {
    const c = expectGate(p, { kind: 'roles', roles: r.classGuard.roles });
    if (c !== 'pass') return c;
  }
  return expectGate(p, CONTRACT_TEXT[keyOf(r)] ?? r.gate);
}

/** A concrete URL for a route: every parameter filled with an id that does not exist. */
const concrete = (path: string) => path.replace(/:[A-Za-z_]+/g, () => crypto.randomUUID());
const patternOf = (path: string) => new RegExp(`^${path.replace(/:[A-Za-z_]+/g, '[^/]+')}/?$`, 'i');

/** The catalogue entry that answers a URL: the first whose pattern fits, in the catalogue's order (the original's). */
function firstMatch(method: string, url: string): ContractRoute {
  const hit = CATALOGUE.find((r) => r.method === method && patternOf(r.path).test(url));
  if (!hit) throw new Error(`no catalogue route for ${method} ${url}`);
  return hit;
}

/**
 * A classroom server that answers every call as a healthy, empty
 * one would (central's proxies then have no excuse for a 500).
 */
async function quietClassroom(): Promise<Server> {
  const s = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('Content-Type', 'application/json');
      // Paged reports answer a page of rows; downloads and everything else a list.
      const paged = /^\/report\//.test(req.url ?? '') && !/\/download/.test(req.url ?? '');
      res.end(JSON.stringify({ error: false, data: paged ? { data: [], total: 0 } : [] }));
    });
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return s;
}

let t: TestApp;
let server: Server;
let classroom: Server;
const personas: Persona[] = [];

const setOf = (role: string) => new Set(GRANT_ROWS[role]);

beforeAll(async () => {
  classroom = await quietClassroom();
  const rpiCloud = `http://127.0.0.1:${(classroom.address() as AddressInfo).port}`;
  t = await makeApp({
    APPLICATION_API_KEY: API_KEY,
    LOG_IMPORT_ENABLED: 'true',
    RPI_CLOUD: rpiCloud,
    RATE_LIMIT_MAX: '1000000',
  });
  server = t.app.listen(0, '127.0.0.1');
  const db = t.tdb.db;
  const staff = async (
    name: string,
    roleids: string[],
    narrowed: { schools?: string[]; countries?: string[] } = {},
  ) => {
    await createStaff(db, { lmsusername: `${name}@matrix.test`, roleids, ...narrowed });
    return `Bearer ${(await staffLogin(server, `${name}@matrix.test`)).accessToken}`;
  };
  // The country and school the narrowed staff callers are held to.
  const countryid = crypto.randomUUID();
  const schoolid = crypto.randomUUID();
  await db('countries').insert({ countryid, countryname: 'Matrixland', expectedusage: 1, isdeleted: false });
  await db('schools').insert({ schoolid, schoolname: 'Matrix School', countryid, curriculums: '[]', isdeleted: false });

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
    {
      name: 'User (0 permissions)',
      kind: 'staff',
      roles: ['user'],
      perms: new Set(),
      header: await staff('user', [ROLE_IDS.user]),
    },
    {
      name: 'Teacher',
      kind: 'staff',
      roles: ['teacher'],
      perms: setOf('Teacher'),
      header: await staff('teacher', [ROLE_IDS.teacher]),
    },
    {
      name: 'Admin',
      kind: 'staff',
      roles: ['admin'],
      perms: setOf('Admin'),
      header: await staff('admin', [ROLE_IDS.admin]),
    },
    {
      name: 'Super Admin',
      kind: 'staff',
      roles: ['superadmin'],
      perms: setOf('Super Admin'),
      wildcard: true,
      header: await staff('super', [ROLE_IDS.superadmin]),
    },
    {
      name: 'union of two roles = every row (wildcard)',
      kind: 'staff',
      roles: ['admin'],
      perms: new Set(PERMISSION_NAMES),
      wildcard: true,
      header: await staff('union', [ROLE_IDS.admin, restRole]),
    },
    {
      name: 'two overlapping roles, counts sum to 190 (no wildcard)',
      kind: 'staff',
      roles: [],
      perms: new Set([...PERMISSION_NAMES.slice(0, 100), ...PERMISSION_NAMES.slice(60, 150)]),
      header: await staff('overlap', [x, y]),
    },
    // One persona per bit of a permission's index, holding the permissions whose index has that bit set:
    // any two permissions differ in some bit, so a route guarded by another permission than the contract's
    // answers one of these personas wrongly.
    ...(await Promise.all(
      Array.from({ length: Math.ceil(Math.log2(PERMISSION_NAMES.length)) }, async (_, bit) => {
        const held = PERMISSION_NAMES.filter((_n, i) => (i >> bit) & 1);
        const role = await createRole(db, `Permission bit ${bit}`, held);
        return {
          name: `permission bit ${bit}`,
          kind: 'staff' as const,
          roles: [],
          perms: new Set(held),
          header: await staff(`bit${bit}`, [role]),
        };
      }),
    )),
    // Narrowed staff: the claims may narrow what they see, never whether the gate lets them in.
    {
      name: 'Admin narrowed to one school',
      kind: 'staff',
      narrowed: true,
      roles: ['admin'],
      perms: setOf('Admin'),
      header: await staff('admin-school', [ROLE_IDS.admin], { schools: [schoolid] }),
    },
    {
      name: 'Admin narrowed to one country',
      kind: 'staff',
      narrowed: true,
      roles: ['admin'],
      perms: setOf('Admin'),
      header: await staff('admin-country', [ROLE_IDS.admin], { countries: [countryid] }),
    },
    {
      name: 'Teacher narrowed to one school',
      kind: 'staff',
      narrowed: true,
      roles: ['teacher'],
      perms: setOf('Teacher'),
      header: await staff('teacher-school', [ROLE_IDS.teacher], { schools: [schoolid] }),
    },
    {
      name: 'school teacher',
      kind: 'schoolstaff',
      header: `Bearer ${(await schoolLogin(server, 'mteacher')).accessToken}`,
    },
    { name: 'school learner', kind: 'learner', header: `Bearer ${learnerToken}` },
  );
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
  await new Promise((r) => classroom.close(r));
  await t.tdb.dispose();
});

describe('route catalogue', () => {
  it('declares every route of the catalogue with the spec text gating counts', () => {
    const c = routeCounts();
    expect(c.total).toBe(275);
    expect(c.counts).toEqual({ perms: 210, roles: 27, any: 27, public: 11 });
  });

  it('serves every route the contract lists, and no route the contract or the decisions do not', () => {
    // Parameter names are the code's own (the contract keeps a few of the original's misnamed ones).
    const shape = (r: { method: string; path: string }) =>
      `${r.method} ${r.path.replace(/:[A-Za-z_]+/g, ':').toLowerCase()}`;
    const declared = new Set(centralRoutes.map(shape));
    const listed = new Set(CATALOGUE.map(shape));
    expect(CATALOGUE.map(shape).filter((k) => !declared.has(k))).toEqual([]);
    expect(centralRoutes.map(shape).filter((k) => !listed.has(k))).toEqual([]);
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
  it('answers every persona on every route of the contract exactly as its gate ' +
      'says, and never with a 500', async () => {
    const wrong: string[] = [];
    let checked = 0;
    // Logout is public and really ends the persona's session, so it goes last.
    const isLogout = (r: ContractRoute) => r.path === '/auth/logout';
    for (const route of [...CATALOGUE.filter((r) => !isLogout(r)), ...CATALOGUE.filter(isLogout)]) {
      const url = concrete(route.path);
      const target = firstMatch(route.method, url);
      for (const p of personas) {
        const want = expected(p, target);
        let req = request(server)[route.method.toLowerCase() as 'get'](url);
        if (p.header) req = req.set('Authorization', p.header);
        if (route.method !== 'GET' && route.method !== 'DELETE') req = req.send({});
        const res = await req;
        checked += 1;
        // A route that passed its guards does its job: no 501 and no 500 (the classroom server it may call answers).
        const ok = want === 'pass' ? ![401, 403, 500, 501].includes(res.status)
          : want === 'narrowedOut' ? [400, 403].includes(res.status) : res.status === want;
        if (!ok) wrong.push(`${p.name}: ${route.method} ${route.path} -> ${res.status}, expected ${want}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(checked).toBe(CATALOGUE.length * personas.length);
    console.info(
      `persona x route matrix: ${CATALOGUE.length} routes (${BEYOND.length} beyond the catalogue) x ` +
        `${personas.length} personas = ${checked} calls`,
    );
  }, 300_000);
});
