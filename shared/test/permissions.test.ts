import { describe, expect, it } from 'vitest';
import {
  ADMIN_EXCLUDED,
  GRANT_ROWS,
  PERMISSION_ENUM,
  PERMISSION_NAMES,
  PERMISSION_ROWS,
  PERMISSION_TITLES,
  ROLE_IDS,
  ROLE_ROWS,
  WILDCARD_PERMISSION,
  derivedGrants,
  grantsOf,
  roleIdOf,
  roleKeyOf,
} from '@lms/shared';

describe('permission catalogue', () => {
  it('has 190 distinct rows, 167 enumeration names and 28 titles', () => {
    expect(PERMISSION_ROWS).toHaveLength(190);
    expect(new Set(PERMISSION_NAMES).size).toBe(190);
    expect(PERMISSION_ENUM).toHaveLength(167);
    expect(PERMISSION_TITLES).toHaveLength(28);
    for (const p of PERMISSION_ROWS) expect(PERMISSION_TITLES).toContain(p.title);
  });

  it('never has a superadmin row', () => {
    expect(PERMISSION_NAMES).not.toContain(WILDCARD_PERMISSION);
  });

  it('keeps the 23 rows outside the enumeration ungranted except to Super Admin', () => {
    const outside = PERMISSION_NAMES.filter((n) => !PERMISSION_ENUM.includes(n));
    expect(outside).toHaveLength(23);
    for (const role of ['Admin', 'Teacher']) for (const n of outside) expect(grantsOf(role)).not.toContain(n);
  });

  it('grants Super Admin 190, Admin 159, Teacher 60, User 0, API Key 0', () => {
    const counts = Object.fromEntries(Object.entries(GRANT_ROWS).map(([k, v]) => [k, new Set(v).size]));
    expect(counts).toEqual({ 'Super Admin': 190, Admin: 159, Teacher: 60, User: 0, 'API Key': 0 });
  });

  it('grants follow the rules they were derived from', () => {
    for (const role of Object.keys(GRANT_ROWS)) expect([...grantsOf(role)].sort()).toEqual(derivedGrants(role).sort());
  });

  it('keeps user and role administration from Admin', () => {
    expect(ADMIN_EXCLUDED).toHaveLength(8);
    for (const n of ADMIN_EXCLUDED) {
      expect(grantsOf('Admin')).not.toContain(n);
      expect(grantsOf('Super Admin')).toContain(n);
    }
  });

  it('anchors the Teacher learner-identity exclusion', () => {
    const teacher = grantsOf('Teacher');
    expect(teacher).not.toContain('view_student');
    expect(teacher).not.toContain('view_download_student');
    expect(teacher).toContain('view_student_level_quiz');
    expect(teacher).toContain('view_download_student_quiz_score');
    expect(teacher.every((n) => /^(view|download)_/.test(n))).toBe(true);
  });

  it('has no two role grant sets that sum to 190', () => {
    const sizes = Object.values(GRANT_ROWS).map((v) => v.length).filter((n) => n > 0 && n < 190);
    for (const a of sizes) for (const b of sizes) if (a !== b) expect(a + b).not.toBe(190);
  });

  it('maps the five roles to their fixed roleids', () => {
    expect(ROLE_ROWS.map((r) => r.name)).toEqual(['Super Admin', 'Admin', 'Teacher', 'User', 'API Key']);
    expect(roleIdOf('superadmin')).toBe('Mapyr2Pw');
    expect(roleIdOf('teacher')).toBe(ROLE_IDS.teacher);
    expect(roleKeyOf('dErM4cvb')).toBe('apikey');
    expect(roleIdOf('nobody')).toBeUndefined();
  });
});
