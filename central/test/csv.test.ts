import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { attachment, csvCell, csvLine, fromCsvCell, sendCsv, toCsv } from '../src/http/csv';

describe('csvCell', () => {
  it('quotes only what RFC 4180 requires and doubles quotes', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('cr\rhere')).toBe('"cr\rhere"');
    expect(csvCell(' spaced ')).toBe(' spaced ');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell('')).toBe('');
  });

  it('neutralises text a spreadsheet would run as a formula, and leaves numbers alone', () => {
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+855 12 345 678')).toBe("'+855 12 345 678");
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\tcmd')).toBe("'\tcmd");
    // Neutralised and then quoted (the CR needs quotes).
    expect(csvCell('\r=1')).toBe('"\'\r=1"');
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"');
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell(-5)).toBe('-5');
    expect(csvCell(3.5)).toBe('3.5');
    expect(csvCell(Number.NaN)).toBe('');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(new Date('2026-01-02T03:04:05.000Z'))).toBe('2026-01-02T03:04:05.000Z');
    expect(csvCell(['=x'])).toBe('"[""=x""]"');
  });

  it('keeps every script as UTF-8 text', () => {
    for (const name of ['សុខា', 'สมชาย', 'مريم', 'प्रिया', '李雷']) expect(csvCell(name)).toBe(name);
  });

  it('fromCsvCell undoes exactly the neutralising quote', () => {
    for (const v of ['=1+1', '+855 12', '-2', '@x', '\tx', '\rx', 'plain', "'quoted", "it's", '', 'សុខា']) {
      const written = csvCell(v);
      const unquoted = written.startsWith('"') ? written.slice(1, -1).replace(/""/g, '"') : written;
      expect(fromCsvCell(unquoted)).toBe(v);
    }
    expect(fromCsvCell(null)).toBeNull();
    expect(fromCsvCell(undefined)).toBeUndefined();
    expect(fromCsvCell("'")).toBe("'");
  });
});

describe('csvLine and toCsv', () => {
  it('write the columns in order, missing keys as empty cells, lines ending in LF', () => {
    expect(csvLine(['a', 'b', 'c'], { c: 3, a: 'x,y' })).toBe('"x,y",,3');
    expect(toCsv(['a', 'b'], [{ a: 1, b: '=2' }, { a: 'z' }])).toBe("a,b\n1,'=2\nz,");
    expect(toCsv(['a'], [])).toBe('a');
  });
});

describe('attachment', () => {
  it('keeps a plain ASCII name as is and adds filename* for any other', () => {
    expect(attachment('students-Demo School.csv')).toBe('attachment; filename="students-Demo School.csv"');
    expect(attachment('a"b\\c\r\n.csv')).toBe('attachment; filename="a_b_c__.csv"');
    expect(attachment('students-សាលា.csv')).toBe(
      'attachment; filename="students-____.csv"; filename*=UTF-8\'\'students-%E1%9E%9F%E1%9E%B6%E1%9E%9B%E1%9E%B6.csv',
    );
    // A header value with it is accepted by Node.
    expect(() =>
      new http.OutgoingMessage().setHeader('Content-Disposition', attachment("l'école (1).csv")),
    ).not.toThrow();
  });
});

describe('sendCsv', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await new Promise((r) => s.close(r));
  });

  function appWith(handler: (res: express.Response) => Promise<void>) {
    const app = express();
    app.get('/f', async (_req, res, next) => {
      try {
        await handler(res);
      } catch (err) {
        next(err);
      }
    });
    app.use((err: Error, _req: express.Request, res: express.Response, next: express.NextFunction) => {
      if (res.headersSent) {
        next(err);
        return;
      }
      res.status(400).json({ error: true, errormessage: err.message, data: false });
    });
    return app;
  }

  it('answers the header line, the rows and the download headers', async () => {
    const app = appWith((res) =>
      sendCsv(
        res,
        'students-សាលា.csv',
        ['n', 'name'],
        [
          { n: 1, name: 'សុខា' },
          { n: 2, name: '=cmd' },
        ],
      ),
    );
    const res = await request(app).get('/f');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="students-____.csv"; filename\*=UTF-8''/);
    expect(res.text).toBe("n,name\n1,សុខា\n2,'=cmd");
  });

  it('answers the header line alone for no rows', async () => {
    const res = await request(appWith((r) => sendCsv(r, 'x.csv', ['a', 'b'], []))).get('/f');
    expect([res.status, res.text]).toEqual([200, 'a,b']);
  });

  it('reads from an async source; a failure before the first row is the error envelope, not a download', async () => {
    async function* failing(): AsyncGenerator<Record<string, unknown>> {
      throw new Error('School does not exists!');
    }
    const res = await request(appWith((r) => sendCsv(r, 'x.csv', ['a'], failing()))).get('/f');
    expect(res.status).toBe(400);
    expect(res.headers['content-disposition']).toBeUndefined();
    expect(res.body).toEqual({ error: true, errormessage: 'School does not exists!', data: false });
  });

  it('pulls rows only as fast as the client reads them, and stops the source when the client goes away', async () => {
    let produced = 0;
    let closed = false;
    async function* many(): AsyncGenerator<Record<string, unknown>> {
      try {
        for (let i = 0; i < 5_000_000; i += 1) {
          produced += 1;
          yield { i, text: 'x'.repeat(100) };
        }
      } finally {
        closed = true;
      }
    }
    const server = appWith((r) => sendCsv(r, 'big.csv', ['i', 'text'], many())).listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((r) => server.once('listening', r));
    const { port } = server.address() as AddressInfo;
    let received = 0;
    await new Promise<void>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path: '/f' }, (res) => {
        res.once('data', (chunk: Buffer) => {
          received += chunk.length;
          // Stop reading: the server must stop producing once the socket buffers are full.
          res.pause();
          setTimeout(() => {
            const held = produced;
            setTimeout(() => {
              try {
                expect(produced).toBe(held);
                // Socket and stream buffers hold a few MB at most, far from 5 million rows (~500 MB).
                expect(produced).toBeLessThan(200_000);
                req.destroy();
                resolve();
              } catch (e) {
                reject(e);
              }
            }, 200);
          }, 300);
        });
      });
      req.on('error', () => undefined);
    });
    expect(received).toBeGreaterThan(0);
    for (let i = 0; i < 50 && !closed; i += 1) await new Promise((r) => setTimeout(r, 20));
    expect(closed).toBe(true);
    expect(produced).toBeLessThan(200_000);
  });
});
