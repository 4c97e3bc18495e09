import { serviceRoutes } from './areas';
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
  out(`(plus ${aliases} alias path${aliases === 1 ? '' : 's'} and ${additions} route${additions === 1 ? '' : 's'} beyond the catalogue)`);
}
