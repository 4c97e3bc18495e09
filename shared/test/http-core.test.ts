import { Writable } from 'node:stream';
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { clientKey, createBaseApp, createLogger, mount, publicGate, route } from '../src';

describe('rate-limit client key', () => {
  it('counts an IPv4 client (plain or IPv4-mapped) by its address', () => {
    expect(clientKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
  });

  it('counts an IPv6 client by its /56, so addresses of one prefix share a counter', () => {
    const a = clientKey('2001:db8:1234:5600::1');
    expect(clientKey('2001:db8:1234:56ff:ffff::9')).toBe(a);
    expect(clientKey('2001:db8:1234:5700::1')).not.toBe(a);
  });
});

describe('request logging', () => {
  function capture() {
    const lines: Array<Record<string, unknown>> = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
        done();
      },
    });
    return { lines, logger: createLogger({ name: 'test', level: 'info' }, sink) };
  }

  it('logs each completed request with its id, status and a URL whose tokens are hidden', async () => {
    const { lines, logger } = capture();
    const router = express.Router();
    mount(router, [route('GET', '/x', publicGate(), {}, () => 1)], () => []);
    const app = createBaseApp({ config: { nodeEnv: 'test', trustProxy: 0, corsOrigins: [] }, logger, router });
    const res = await request(app).get('/x?refreshtoken=secret-value&a=1');
    await new Promise((r) => setImmediate(r));
    const line = lines.find((l) => l.msg === 'request completed');
    expect(line).toMatchObject({
      reqId: res.headers['x-request-id'],
      res: { statusCode: 200 },
      req: { method: 'GET' },
    });
    expect(JSON.stringify(line)).not.toContain('secret-value');
    expect((line!.req as { url: string }).url).toBe('/x?refreshtoken=[redacted]&a=1');
  });

  it('logs an unexpected error with the request id that the client receives as logid', async () => {
    const { lines, logger } = capture();
    const router = express.Router();
    mount(router, [route('GET', '/boom', publicGate(), {}, () => { throw new Error('kaput'); })], () => []);
    const app = createBaseApp({ config: { nodeEnv: 'production', trustProxy: 0, corsOrigins: [] }, logger, router });
    const res = await request(app).get('/boom');
    await new Promise((r) => setImmediate(r));
    expect(res.body.logid).toBe(res.headers['x-request-id']);
    const err = lines.find((l) => l.msg === 'unhandled error');
    expect(err).toMatchObject({ reqId: res.body.logid, logid: res.body.logid, level: 50 });
    expect(lines.find((l) => l.msg === 'request completed')).toMatchObject({ res: { statusCode: 500 }, level: 50 });
  });
});
