import express from 'express';
import cors from 'cors';
import helmet from 'helmet';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { anyUser, createBaseApp, createLogger, mount, publicGate, route, type Gate } from '../src';

const logger = createLogger({ name: 'test', level: 'silent' });

function appWith(
  routes: Parameters<typeof mount>[1],
  resolve: (g: Gate) => express.RequestHandler[] | undefined,
  nodeEnv = 'test',
) {
  const router = express.Router();
  mount(router, routes, resolve, { defaultBodyLimit: '1kb' });
  return createBaseApp({ config: { nodeEnv, trustProxy: 0, corsOrigins: ['https://ui.example.org'] }, logger, router });
}

describe('route tables', () => {
  it('refuses to mount a route whose gate the service does not know (fail closed)', () => {
    const router = express.Router();
    expect(() =>
      mount(router, [route('GET', '/x', { kind: 'staff' }, {}, () => 1)], (g) =>
        g.kind === 'public' ? [] : undefined,
      ),
    ).toThrow(/no guard for gate 'staff'/);
  });

  it('with scope rules, refuses a route without one and hands the resolved scope to the handler ' +
    'after gate and input', async () => {
    const rule = { scope: 'mine', doc: "the caller's own" };
    const seen: string[] = [];
    const scopes = {
      names: ['mine'],
      resolve: (r: { scope: string }) =>
        r.scope === 'mine'
          ? (req: express.Request, res: express.Response, next: express.NextFunction) => {
              seen.push(req.path);
              res.locals.scope = { rows: ['a'] };
              next();
            }
          : undefined,
    };
    expect(() =>
      mount(express.Router(), [route('GET', '/x', publicGate(), {}, () => 1)], () => [], { scopes }),
    ).toThrow(
      "Route GET /x declares no scope: add one of scope.mine after its gate, as in route('GET', '/x', <gate>, " +
        "scope.<rule>, <input>, <handler>)",
    );
    expect(() =>
      mount(express.Router(), [route('GET', '/x', publicGate(), { scope: 'other', doc: '' }, {}, () => 1)], () => [], {
        scopes,
      }),
    ).toThrow("unknown scope rule 'other'");
    const router = express.Router();
    mount(
      router,
      [
        route('POST', '/x', publicGate(), rule, { body: z.object({ n: z.number() }) }, ({ scope, body }) => ({
          scope,
          n: body.n,
        })),
      ],
      () => [],
      { scopes },
    );
    const app = createBaseApp({ config: { nodeEnv: 'test', trustProxy: false, corsOrigins: [] }, logger, router });
    expect((await request(app).post('/x').send({ n: 'no' })).status).toBe(400);
    expect(seen).toEqual([]);
    expect((await request(app).post('/x').send({ n: 2 })).body).toEqual({
      error: false,
      data: { scope: { rows: ['a'] }, n: 2 },
    });
    expect(seen).toEqual(['/x']);
    // Without scope rules (the classroom), the four-argument form is unchanged.
    expect(route('GET', '/y', publicGate(), {}, () => 1)).not.toHaveProperty('scope');
  });

  it('runs the guard before validation, so an unauthorized caller never sees a 400', async () => {
    const deny: express.RequestHandler = (_req, res) => {
      res.status(401).json({ error: true, errormessage: 'Unauthorized', data: false });
    };
    const app = appWith(
      [route('POST', '/thing', anyUser(), { body: z.object({ name: z.string() }) }, () => true)],
      (g) => (g.kind === 'any' ? [deny] : []),
    );
    const res = await request(app).post('/thing').send({});
    expect(res.status).toBe(401);
  });

  it('answers invalid input with a 400 envelope naming the field, ' +
    'and wraps results in the success envelope', async () => {
    const app = appWith(
      [
        route('POST', '/thing', publicGate(), { body: z.object({ name: z.string() }).strict() }, ({ body }) => ({
          hello: body.name,
        })),
      ],
      () => [],
    );
    const bad = await request(app).post('/thing').send({ name: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe(true);
    expect(bad.body.errormessage).toContain('"name"');
    const extra = await request(app).post('/thing').send({ name: 'a', search: 'x' });
    expect(extra.status).toBe(400);
    const ok = await request(app).post('/thing').send({ name: 'Amina' });
    expect(ok.body).toEqual({ error: false, data: { hello: 'Amina' } });
  });

  it('answers an unexpected error with a generic 500 and the request id, never a stack, in production', async () => {
    const app = appWith(
      [
        route('GET', '/boom', publicGate(), {}, () => {
          throw new Error('SELECT secret FROM x');
        }),
      ],
      () => [],
      'production',
    );
    const res = await request(app).get('/boom');
    expect(res.status).toBe(500);
    expect(res.body).toEqual({
      error: true,
      errormessage: 'Internal server error',
      data: false,
      logid: res.headers['x-request-id'],
    });
    expect(JSON.stringify(res.body)).not.toContain('SELECT');
  });

  it('refuses a JSON body over the limit with 413', async () => {
    const app = appWith([route('POST', '/thing', publicGate(), {}, () => true)], () => []);
    const res = await request(app).post('/thing').send({ big: 'x'.repeat(5000) });
    expect(res.status).toBe(413);
    expect(res.body.error).toBe(true);
  });

  it('reads a body only after the route\'s guards passed, with the route\'s own limit', async () => {
    let parsedBeforeGuard = false;
    const deny: express.RequestHandler = (req, res) => {
      parsedBeforeGuard = req.body !== undefined;
      res.status(401).json({ error: true, errormessage: 'Unauthorized', data: false });
    };
    const app = appWith([
      route('POST', '/guarded', anyUser(), {}, () => true),
      route('POST', '/big', publicGate(), {}, ({ body }) => body.big.length, { bodyLimit: '10kb' }),
    ], (g) => (g.kind === 'any' ? [deny] : []));
    // Over the default limit and not JSON at all: the guard answers first, the body is never read.
    const refused = await request(app)
      .post('/guarded')
      .set('Content-Type', 'application/json')
      .send('{"big": "' + 'x'.repeat(5000));
    expect(refused.status).toBe(401);
    expect(parsedBeforeGuard).toBe(false);
    const big = await request(app).post('/big').send({ big: 'x'.repeat(5000) });
    expect(big.body).toEqual({ error: false, data: 5000 });
    expect((await request(app).post('/big').send({ big: 'x'.repeat(20_000) })).status).toBe(413);
    // A path no route answers never has its body read either: the 404 comes at once.
    expect((await request(app).post('/nothing').set('Content-Type', 'application/json').send('{not json')).status).toBe(
      404,
    );
  });

  it('never puts an error\'s own text in a 500, in development and test either', async () => {
    for (const env of ['development', 'test']) {
      const app = appWith(
        [
          route('GET', '/boom', publicGate(), {}, () => {
            throw new Error('SELECT secret FROM x');
          }),
        ],
        () => [],
        env,
      );
      const res = await request(app).get('/boom');
      expect(res.status).toBe(500);
      expect(res.body.errormessage).toBe('Internal server error');
    }
  });

  it('allows only listed origins outside development', async () => {
    const app = appWith([route('GET', '/x', publicGate(), {}, () => 1)], () => [], 'production');
    const allowed = await request(app).get('/x').set('Origin', 'https://ui.example.org');
    expect(allowed.headers['access-control-allow-origin']).toBe('https://ui.example.org');
    const other = await request(app).get('/x').set('Origin', 'https://evil.example.com');
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    const dev = appWith([route('GET', '/x', publicGate(), {}, () => 1)], () => [], 'development');
    expect(
      (await request(dev).get('/x').set('Origin', 'http://localhost:4200')).headers['access-control-allow-origin'],
    ).toBe('http://localhost:4200');
  });

  it('gives a request without Origin the headers helmet and cors give it, ' +
    'and one with Origin the same security headers', async () => {
    const reference = express();
    reference.disable('x-powered-by');
    reference.use(helmet({ crossOriginResourcePolicy: { policy: 'cross-origin' } }));
    reference.use(
      cors({
        origin: (_o, cb) => cb(null, true),
        exposedHeaders: ['Content-Disposition', 'X-Request-Id', 'Retry-After'],
      }),
    );
    reference.get('/x', (_req, res) => {
      res.json({ error: false, data: 1 });
    });
    const app = appWith([route('GET', '/x', publicGate(), {}, () => 1)], () => [], 'production');
    const volatile = new Set(['date', 'x-request-id', 'etag', 'content-length', 'connection', 'keep-alive']);
    const headersOf = (h: Record<string, string>) =>
      Object.fromEntries(Object.entries(h).filter(([k]) => !volatile.has(k)));
    const ours = await request(app).get('/x');
    const theirs = await request(reference).get('/x');
    expect(headersOf(ours.headers)).toEqual(headersOf(theirs.headers));
    expect(ours.headers['content-security-policy']).toContain("default-src 'self'");
    expect(ours.headers['x-powered-by']).toBeUndefined();
    const withOrigin = await request(app).get('/x').set('Origin', 'https://ui.example.org');
    for (const [k, v] of Object.entries(headersOf(theirs.headers)))
      if (!k.startsWith('access-control') && k !== 'vary') expect(withOrigin.headers[k]).toBe(v);
  });

  it('matches routes by their first segment in any case, with or without a trailing slash, ' +
    'and answers 404 for the rest', async () => {
    const app = appWith(
      [
        route('GET', '/', publicGate(), {}, () => 'root'),
        route('GET', '/area/list', publicGate(), {}, () => 'list'),
        route('GET', '/area/:id', publicGate(), {}, ({ params }) => params.id),
        route('GET', '/other/list', publicGate(), {}, () => 'other'),
      ],
      () => [],
    );
    expect((await request(app).get('/')).body.data).toBe('root');
    expect((await request(app).get('/AREA/List/')).body.data).toBe('list');
    expect((await request(app).get('/area/42')).body.data).toBe('42');
    expect((await request(app).get('/Other/list')).body.data).toBe('other');
    const missing = await request(app).get('/area/1/more');
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe(true);
    expect((await request(app).get('/nowhere')).status).toBe(404);
    expect(() => mount(express.Router(), [route('GET', '/:id/x', publicGate(), {}, () => 1)], () => [])).toThrow(
      /first path segment/,
    );
  });

  it('matches request paths exactly as an Express router with the same routes does', async () => {
    const defs: Array<[string, (p: Record<string, string>) => unknown]> = [
      ['/', () => 'root'],
      ['/area/list', () => 'list'],
      ['/area/:id', (p) => `id:${p.id}`],
      ['/area/:id/items/:item', (p) => `item:${p.id}/${p.item}`],
      ['/area/by/:code/all', (p) => `code:${p.code}`],
      ['/other', () => 'other'],
    ];
    const ours = appWith(
      defs.map(([path, f]) => route('GET', path, publicGate(), {}, ({ params }) => f(params))),
      () => [],
    );
    const reference = express();
    reference.set('case sensitive routing', false);
    reference.set('strict routing', false);
    const r = express.Router({ caseSensitive: false, strict: false });
    for (const [path, f] of defs)
      r.get(path, (req, res) => {
        res.json({ error: false, data: f(req.params as Record<string, string>) });
      });
    reference.use(r);
    reference.use((_req, res) => { res.status(404).json({ error: true, data: false }); });
    const paths = [
      '/',
      '//',
      '/area/list',
      '/AREA/LIST',
      '/area/list/',
      '/area/list//',
      '/area//list',
      '/area/42',
      '/area/42/',
      '/area/4%202',
      '/area/a.b',
      '/area/%41',
      '/area/42/items/7',
      '/Area/42/ITEMS/7/',
      '/area/42/items',
      '/area/42/items/',
      '/area/by/x/all',
      '/area/by/all',
      '/area/by/x/all/more',
      '/other',
      '/other/',
      '/OTHER',
      '/other/x',
      '/nowhere',
      '/area/list?x=1',
      '/area/%2F/items/1',
    ];
    for (const path of paths) {
      const [a, b] = await Promise.all([request(ours).get(path), request(reference).get(path)]);
      expect({ path, status: a.status, data: a.body.data }).toEqual({ path, status: b.status, data: b.body.data });
    }
  });

  it('answers HEAD with a GET route, refuses a malformed parameter with 400, ' +
    'and does not answer another method', async () => {
    const app = appWith(
      [
        route('GET', '/area/:id', publicGate(), {}, ({ params }) => params.id),
        route('POST', '/area/:id', publicGate(), {}, () => 'posted'),
      ],
      () => [],
    );
    const head = await request(app).head('/area/1');
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toContain('application/json');
    const bad = await request(app).get('/area/%E0%A4%A');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: true, errormessage: "Failed to decode param '%E0%A4%A'" });
    expect((await request(app).post('/area/1')).body.data).toBe('posted');
    expect((await request(app).put('/area/1')).status).toBe(404);
    expect((await request(app).delete('/area/1')).status).toBe(404);
  });

  it('keeps a caller-supplied request id when it is safe, and replaces one that is not', async () => {
    const app = appWith([route('GET', '/x', publicGate(), {}, () => 1)], () => []);
    expect((await request(app).get('/x').set('X-Request-Id', 'abc-123')).headers['x-request-id']).toBe('abc-123');
    expect((await request(app).get('/x').set('X-Request-Id', 'bad id; drop')).headers['x-request-id']).toMatch(
      /^[0-9a-f-]{36}$/,
    );
  });
});
