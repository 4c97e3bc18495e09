import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * The central API's client of the classroom server (`RPI_CLOUD`). Every call carries the raw
 * SERVER_SYNC_KEY as the Authorization value (no Bearer), as the classroom's sync-key gate expects.
 * A call that does not end in a 2xx answer throws a ClassroomError whose message is safe to show.
 */

export interface ClassroomClientOptions {
  /** Base address, e.g. `http://10.0.0.2:3001` (config.rpiCloud). */
  baseUrl: string;
  serverSyncKey: string;
  /** Longest silence on the socket before the attempt is abandoned. */
  idleTimeoutMs?: number;
  /** Longest time one attempt may take, upload and answer included. */
  totalTimeoutMs?: number;
  /** Attempts for transient network failures (1 = no retry). */
  attempts?: number;
  /** First pause between attempts; doubled after each. */
  retryDelayMs?: number;
  /** Largest answer body read into memory. */
  maxResponseBytes?: number;
}

export type ClassroomFailure = 'unreachable' | 'timeout' | 'unauthorized' | 'rejected' | 'bad_response';

export class ClassroomError extends Error {
  constructor(
    readonly kind: ClassroomFailure,
    message: string,
    /** The classroom server's status, when it answered. */
    readonly status?: number,
    /** Its `errormessage`, when it answered with the envelope. */
    readonly remoteMessage?: string,
  ) {
    super(message);
    this.name = 'ClassroomError';
  }
}

export interface ClassroomAnswer {
  status: number;
  /** The parsed JSON body (the classroom's envelope), or undefined for an empty body. */
  body: unknown;
}

/** A 2xx answer whose body is read as it arrives (a report of every learner of a school). */
export interface ClassroomStream {
  status: number;
  body: Readable;
}

/** A request body: bytes, or a file sent from disk (re-opened on every attempt). */
type Body =
  { kind: 'json'; value: unknown } | { kind: 'multipart-file'; field: string; filename: string; path: string };

// Network failures worth another attempt: the link dropped in the middle (a school's Wi-Fi or mobile
// link). A refused connection, a name that does not resolve or a server that stayed silent past the
// timeout mean a wrong RPI_CLOUD or a server that is down: retrying would only delay a clear answer.
const TRANSIENT = new Set([
  'ECONNRESET',
  'EPIPE',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'ECONNABORTED',
  'UND_ERR_SOCKET',
]);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class ClassroomClient {
  private readonly base: URL;
  private readonly o: Required<Omit<ClassroomClientOptions, 'baseUrl'>>;

  constructor(options: ClassroomClientOptions) {
    this.base = new URL(options.baseUrl.replace(/\/+$/, '') + '/');
    this.o = {
      serverSyncKey: options.serverSyncKey,
      idleTimeoutMs: options.idleTimeoutMs ?? 60_000,
      totalTimeoutMs: options.totalTimeoutMs ?? 10 * 60_000,
      attempts: Math.max(1, options.attempts ?? 3),
      retryDelayMs: options.retryDelayMs ?? 300,
      maxResponseBytes: options.maxResponseBytes ?? 64 * 1024 * 1024,
    };
  }

  /** `PUT /import/<kind>` with the ZIP at `zipPath` as the multipart part `importfile` (filename importfile.zip). */
  async putImport(kind: 'master' | 'students' | 'teachers', zipPath: string): Promise<ClassroomAnswer> {
    return this.call(
      'PUT',
      `import/${kind}`,
      { kind: 'multipart-file', field: 'importfile', filename: 'importfile.zip', path: zipPath },
      false,
    ) as Promise<ClassroomAnswer>;
  }

  /** `POST <path>` with a JSON body, answering the classroom's parsed envelope. */
  async postJson(path: string, body: unknown): Promise<ClassroomAnswer> {
    return this.call(
      'POST',
      path.replace(/^\/+/, ''),
      { kind: 'json', value: body ?? {} },
      false,
    ) as Promise<ClassroomAnswer>;
  }

  /**
   * `POST <path>` with a JSON body; a 2xx answer's body as a stream, for the caller to read as it arrives
   * (only the socket's idle timeout applies once it has begun). Any other answer fails as postJson's does.
   */
  async postJsonStream(path: string, body: unknown): Promise<ClassroomStream> {
    return this.call(
      'POST',
      path.replace(/^\/+/, ''),
      { kind: 'json', value: body ?? {} },
      true,
    ) as Promise<ClassroomStream>;
  }

  private async call(
    method: string,
    path: string,
    body: Body,
    stream: boolean,
  ): Promise<ClassroomAnswer | ClassroomStream> {
    const url = new URL(path, this.base);
    let delay = this.o.retryDelayMs;
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await this.once(method, url, body, stream);
      } catch (err) {
        const retry = err instanceof TransientError && attempt < this.o.attempts;
        if (!retry) throw err instanceof TransientError ? err.final : err;
        await sleep(delay);
        delay *= 2;
      }
    }
  }

  private once(method: string, url: URL, body: Body, stream = false): Promise<ClassroomAnswer | ClassroomStream> {
    return new Promise<ClassroomAnswer | ClassroomStream>((resolve, reject) => {
      let settled = false;
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(total);
        fn();
      };
      const fail = (err: Error) => finish(() => reject(err));

      let headers: Record<string, string | number>;
      let parts: Array<Buffer | string> = [];
      if (body.kind === 'json') {
        const bytes = Buffer.from(JSON.stringify(body.value));
        headers = { 'Content-Type': 'application/json', 'Content-Length': bytes.length };
        parts = [bytes];
      } else {
        const boundary = `----lms-central-${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
        const head = Buffer.from(
          `--${boundary}\r\n` +
            `Content-Disposition: form-data; name="${body.field}"; filename="${body.filename}"\r\n` +
            'Content-Type: application/zip\r\n\r\n',
        );
        const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
        let size: number;
        try {
          size = fs.statSync(body.path).size;
        } catch (err) {
          reject(err);
          return;
        }
        headers = {
          'Content-Type': `multipart/form-data; boundary=${boundary}`,
          'Content-Length': head.length + size + tail.length,
        };
        parts = [head, body.path, tail];
      }

      const transport = url.protocol === 'https:' ? https : http;
      const req = transport.request(url, {
        method,
        headers: { ...headers, Accept: 'application/json', Authorization: this.o.serverSyncKey },
        timeout: this.o.idleTimeoutMs,
      });
      const total = setTimeout(() => req.destroy(new TimeoutError()), this.o.totalTimeoutMs);

      req.on('timeout', () => req.destroy(new TimeoutError()));
      req.on('error', (err: NodeJS.ErrnoException) => fail(classifyNetworkError(err)));
      req.on('response', (res) => {
        const code = res.statusCode ?? 0;
        if (stream && code >= 200 && code < 300) {
          finish(() => resolve({ status: code, body: res }));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > this.o.maxResponseBytes) {
            req.destroy();
            fail(new ClassroomError('bad_response', 'Classroom server answer is too large'));
            return;
          }
          chunks.push(chunk);
        });
        res.on('error', (err: NodeJS.ErrnoException) => fail(classifyNetworkError(err)));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown;
          let parseFailed = false;
          if (text.trim()) {
            try {
              parsed = JSON.parse(text);
            } catch {
              parseFailed = true;
            }
          }
          finish(() => {
            if (status >= 200 && status < 300) {
              if (parseFailed)
                reject(
                  new ClassroomError(
                    'bad_response',
                    `Classroom server answered ${status} with a body that is not JSON`,
                    status,
                  ),
                );
              else resolve({ status, body: parsed });
              return;
            }
            const remote = remoteMessageOf(parsed);
            if (status === 401 || status === 403) {
              reject(
                new ClassroomError(
                  'unauthorized',
                  `Classroom server refused the server sync key (${status})`,
                  status,
                  remote,
                ),
              );
            } else {
              reject(
                new ClassroomError(
                  'rejected',
                  `Classroom server answered ${status}${remote ? `: ${remote}` : ''}`,
                  status,
                  remote,
                ),
              );
            }
          });
        });
      });

      void (async () => {
        try {
          for (const part of parts) {
            if (typeof part === 'string') await pipeline(fs.createReadStream(part), req, { end: false });
            else if (!req.write(part)) await new Promise((r) => req.once('drain', r));
          }
          req.end();
        } catch (err) {
          // The request's own error handler reports network failures; a file that vanished is ours.
          if (!req.destroyed) req.destroy(err as Error);
        }
      })();
    });
  }
}

class TimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor() {
    super('timeout');
  }
}

/** A failure that another attempt may cure; `final` is what the caller sees when attempts run out. */
class TransientError extends Error {
  constructor(readonly final: ClassroomError) {
    super(final.message);
  }
}

function classifyNetworkError(err: NodeJS.ErrnoException): Error {
  if (err instanceof ClassroomError) return err;
  const code = err.code ?? '';
  if (err instanceof TimeoutError || code === 'ETIMEDOUT') {
    return new ClassroomError('timeout', 'Classroom server did not answer in time (check RPI_CLOUD)');
  }
  const final = new ClassroomError(
    'unreachable',
    `Classroom server is unreachable (check RPI_CLOUD${code ? `: ${code}` : ''})`,
  );
  return TRANSIENT.has(code) || err.message === 'socket hang up' ? new TransientError(final) : final;
}

function remoteMessageOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && typeof (body as { errormessage?: unknown }).errormessage === 'string') {
    return (body as { errormessage: string }).errormessage;
  }
  return undefined;
}

/** The client configured from the central config (`RPI_CLOUD`, `SERVER_SYNC_KEY`). */
export function classroomClientOf(
  config: { rpiCloud: string; serverSyncKey: string },
  overrides: Partial<ClassroomClientOptions> = {},
): ClassroomClient {
  return new ClassroomClient({ baseUrl: config.rpiCloud, serverSyncKey: config.serverSyncKey, ...overrides });
}

/** Writes a stream (a package ZIP) to a file, so that an upload knows its length and a retry can send it again. */
export async function streamToFile(stream: Readable, path: string): Promise<void> {
  await pipeline(stream, fs.createWriteStream(path));
}
