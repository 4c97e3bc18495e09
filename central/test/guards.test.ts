import express from 'express';
import { describe, expect, it } from 'vitest';
import { ROLE_IDS, mount, route, noInput, type Gate } from '@lms/shared';
import { authDecision, centralGates, permsDecision, rolesDecision } from '../src/auth/guards';
import type { Caller } from '../src/http/types';

const staff = (roleids: string[], permissions: string[], wildcard = false): Caller => ({
  kind: 'staff',
  lmsuserid: 'u',
  lmsusername: 'u@x.org',
  roleids,
  permissions,
  wildcard,
  jti: 'j',
  sessionid: null,
  claims: {},
});
const school = (schooluserrole: number): Caller => ({
  kind: 'school',
  schooluserid: 's',
  schoolusername: 's',
  schooluserrole,
  jti: 'j',
  sessionid: null,
  claims: {},
});
const anonymous: Caller = { kind: 'anonymous' };
const apikey: Caller = { kind: 'apikey', user: 'API KEY' };

describe('guards are pure functions of one caller', () => {
  it('requireAuth: staff and school staff pass; learners, the API key and anonymous get 401', () => {
    expect(authDecision(staff([], []))).toBe(0);
    for (const r of [1, 2, 3]) expect(authDecision(school(r))).toBe(0);
    expect(authDecision(school(4))).toBe(401);
    expect(authDecision(apikey)).toBe(401);
    expect(authDecision(anonymous)).toBe(401);
    expect(authDecision({ kind: 'token', type: 'REFRESH', sub: 'u', jti: 'j', sessionid: null }, 'REFRESH')).toBe(0);
    expect(
      authDecision({ kind: 'token', type: 'CHANGEPASSWORD', sub: 'u', jti: 'j', sessionid: null }, 'REFRESH'),
    ).toBe(401);
    expect(authDecision({ kind: 'token', type: 'REFRESH', sub: 'u', jti: 'j', sessionid: null })).toBe(401);
  });

  it('requireRoles reads lmsuserroles only; the API key only where listed', () => {
    expect(rolesDecision(staff([ROLE_IDS.admin], []), ['superadmin', 'admin'])).toBe(0);
    expect(rolesDecision(staff([ROLE_IDS.user], ['create_student'], true), ['apikey', 'superadmin', 'admin'])).toBe(
      403,
    );
    expect(rolesDecision(apikey, ['apikey'])).toBe(0);
    expect(rolesDecision(apikey, ['superadmin'])).toBe(401);
    expect(rolesDecision(school(3), ['teacher'])).toBe(403);
    expect(rolesDecision(school(4), ['teacher'])).toBe(401);
  });

  it('requirePerms is an OR-list; the wildcard passes any list; the API key never', () => {
    expect(permsDecision(staff([], ['view_grade']), ['create_grade', 'view_grade'])).toBe(0);
    expect(permsDecision(staff([], ['view_grade']), ['create_grade'])).toBe(403);
    expect(permsDecision(staff([], [], true), ['create_user'])).toBe(0);
    expect(permsDecision(apikey, ['view_grade'])).toBe(401);
    expect(permsDecision(school(2), ['view_grade'])).toBe(403);
  });

  it('fails closed: a gate kind the central API does not know stops the mount', () => {
    expect(centralGates({ kind: 'nonsense' } as unknown as Gate)).toBeUndefined();
    const bad = route('GET', '/x', { kind: 'nonsense' } as unknown as Gate, noInput, () => 1);
    expect(() => mount(express.Router(), [bad], centralGates)).toThrow(/no guard for gate 'nonsense'/);
  });
});
