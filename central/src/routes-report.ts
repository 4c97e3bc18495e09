import { serviceRoutes } from './areas';
import { describeGate } from '@lms/shared';
import { SCOPE_NAMES, scope as rules, type ScopeName } from './http/scope';
import type { CentralRoute } from './http/types';

export type GateShape = 'perms' | 'roles' | 'any' | 'public';

/**
 * The spec's counting rule: a student route counts as role-gated because of its class guard;
 * otherwise the route's own gate decides (token-type gates count as any logged-in user).
 */
export function gateShape(r: CentralRoute): GateShape {
  if (r.classGuard) return 'roles';
  switch (r.gate.kind) {
    case 'perms': return 'perms';
    case 'roles': return 'roles';
    case 'public': return 'public';
    default: return 'any';
  }
}

export function routeCounts(routes: CentralRoute[] = serviceRoutes) {
  const catalogue = routes.filter((r) => !r.alias && !r.addition);
  const counts: Record<GateShape, number> = { perms: 0, roles: 0, any: 0, public: 0 };
  for (const r of catalogue) counts[gateShape(r)] += 1;
  const additions = routes.filter((r) => r.addition).length;
  return { total: catalogue.length, aliases: routes.filter((r) => r.alias).length, additions, counts };
}

export function printRouteCounts(out: (line: string) => void): void {
  const { total, aliases, additions, counts } = routeCounts();
  const label: Record<GateShape, string> = {
    perms: 'permission-gated, no role list',
    roles: 'role-gated (incl. student class guard)',
    any: 'any logged-in user',
    public: 'unguarded',
  };
  out('| Shape | Routes |');
  out('|---|---|');
  for (const k of ['perms', 'roles', 'any', 'public'] as GateShape[]) out(`| ${label[k]} | ${counts[k]} |`);
  out(`| total | ${total} |`);
  out(
    `(plus ${aliases} alias path${aliases === 1 ? '' : 's'} ` +
      `and ${additions} route${additions === 1 ? '' : 's'} beyond the catalogue)`,
  );
}

/** How many routes declare each scope rule (every route declares one; the app does not start otherwise). */
export function scopeCounts(routes: CentralRoute[] = serviceRoutes): Record<ScopeName, number> {
  const counts = Object.fromEntries(SCOPE_NAMES.map((n) => [n, 0])) as Record<ScopeName, number>;
  for (const r of routes) if (r.scope) counts[r.scope.scope as ScopeName] += 1;
  return counts;
}

/** The scope table and every route with its gate and scope, as `npm run routes -w central` prints them. */
export function printRouteScopes(out: (line: string) => void, routes: CentralRoute[] = serviceRoutes): void {
  const counts = scopeCounts(routes);
  out('| Scope | Routes | What it admits |');
  out('|---|---|---|');
  for (const n of SCOPE_NAMES) out(`| ${n} | ${counts[n]} | ${rules[n].doc} |`);
  const missing = routes.filter((r) => !r.scope).length;
  if (missing) out(`| (none: the app refuses to start) | ${missing} | |`);
  out('');
  for (const r of routes) {
    const gates = r.classGuard ? [r.classGuard, r.gate] : [r.gate];
    out(`${r.method.padEnd(6)} ${r.path}  [${gates.map(describeGate).join(' and ')}]  ` +
      `scope: ${r.scope?.scope ?? '(none)'}`);
  }
}
