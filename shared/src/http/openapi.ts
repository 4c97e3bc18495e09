import { OpenAPIRegistry, OpenApiGeneratorV3, extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z, type ZodType } from 'zod';
import type { Gate, RouteDef } from './route';

extendZodWithOpenApi(z);

function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z0-9_]+)\+?/g, '{$1}');
}

function pathParams(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]);
}

export function describeGate(gate: Gate): string {
  switch (gate.kind) {
    case 'roles': return `roles: ${gate.roles.join(', ')}`;
    case 'perms': return `permissions (any of): ${gate.perms.join(', ')}`;
    default: return gate.kind;
  }
}

function isObjectSchema(s: ZodType | undefined): s is z.ZodObject<z.ZodRawShape> {
  return !!s && s instanceof z.ZodObject;
}

/** The OpenAPI 3 document of a service, generated from its route tables and their zod schemas. */
export function buildOpenApi(
  info: { title: string; version: string; description?: string },
  routes: ReadonlyArray<RouteDef<any, any>>, // eslint-disable-line @typescript-eslint/no-explicit-any
): object {
  const registry = new OpenAPIRegistry();
  const bearer = registry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });
  for (const r of routes) {
    const names = pathParams(r.path);
    let params = isObjectSchema(r.input.params) ? r.input.params : undefined;
    const declared = params ? Object.keys(params.shape) : [];
    const missing = names.filter((n) => !declared.includes(n));
    if (missing.length) {
      const extra = Object.fromEntries(missing.map((n) => [n, z.string()]));
      params = params ? params.extend(extra) : z.object(extra);
    }
    const gates = r.classGuard ? [r.classGuard, r.gate] : [r.gate];
    registry.registerPath({
      method: r.method.toLowerCase() as 'get',
      path: openApiPath(r.path),
      summary: r.summary,
      description: `Gate: ${gates.map(describeGate).join(' and ')}${r.scope ? `. Scope: ${r.scope.scope} ` +
        `(${r.scope.doc})` : ''}`,
      ...(r.scope ? { 'x-scope': r.scope.scope } : {}),
      tags: r.tags ?? [r.path.split('/')[1] || 'app'],
      security: r.gate.kind === 'public' ? [] : [{ [bearer.name]: [] }],
      request: {
        params: names.length ? params : undefined,
        query: isObjectSchema(r.input.query) ? r.input.query : undefined,
        body:
          r.input.body && r.method !== 'GET'
            ? { content: { 'application/json': { schema: r.input.body } } }
            : undefined,
      },
      responses: {
        [String(r.status ?? 200)]: { description: 'Success: `{error: false, data}`' },
        '400': { description: 'Invalid input: `{error: true, errormessage, data: false}`' },
        ...(r.gate.kind === 'public'
          ? {}
          : {
              '401': { description: 'No valid caller' },
              '403': { description: 'The caller lacks the role or permission' },
            }),
      },
    });
  }
  return new OpenApiGeneratorV3(registry.definitions).generateDocument({ openapi: '3.0.3', info });
}
