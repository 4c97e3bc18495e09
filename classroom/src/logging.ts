import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { logWindowStart } from '@lms/shared';

/**
 * The classroom server's own log files, in the layout the original used (contract A.1) so that the
 * activity-log export carries them: `RPI-API-info-YYYY-MM-DD.log` (info and warn) and
 * `RPI-API-error-YYYY-MM-DD.log` (error and fatal) in the log directory, one JSON object per line,
 * a new file each local day.
 *
 * What a box can carry: files are kept for the export's window only (older ones are removed at start,
 * when the day changes and once a day besides); each file stops growing at `maxFileBytes` (one line says
 * so); and the per-request lines (`request completed`) stay out of the files unless `requests` is set:
 * an hourly summary line (requests by status class) takes their place. A request that failed on the
 * server (5xx) is an error and is always written.
 */
export interface DailyLogOptions {
  dir: string;
  /** Files older than this many days are removed; default: the export window (six months). */
  retentionDays?: number;
  /** Largest size of one file; past it the day's further lines of that kind are dropped. Default 20 MB. */
  maxFileBytes?: number;
  /** Per-request lines in the info file too. Default false: an hourly summary instead. */
  requests?: boolean;
  /** Injected in tests. */
  now?: () => Date;
}

const PINO_LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
export const DAILY_NAME = /^RPI-API-(info|error)-(\d{4}-\d{2}-\d{2})\.log$/;
/** Per-request lines, recognised before parsing (the logger writes `msg` this way). */
const REQUEST_LINE = /"msg":"request (?:completed|aborted)"/;
const STATUS = /"statusCode":(\d{3})/;

/** Local calendar day: a classroom box's clock is set to the school's time zone, and so were the original's names. */
export function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export const dailyLogName = (kind: 'info' | 'error', d: Date): string => `RPI-API-${kind}-${localDay(d)}.log`;

/** One pino line in the original's shape: `{level, message, metadata:{application, hostname, …, timestamp}}`. */
export function formatLine(raw: Record<string, unknown>): string {
  const { level, msg, time, hostname, pid: _pid, name: _name, ...rest } = raw;
  const metadata: Record<string, unknown> = { application: 'RPI-API', hostname: hostname ?? os.hostname() };
  for (const [k, v] of Object.entries(rest)) metadata[k] = v;
  if (metadata.userid === undefined && typeof rest.schooluserid === 'string') metadata.userid = rest.schooluserid;
  metadata.timestamp = new Date(typeof time === 'number' ? time : Date.now()).toISOString();
  return `${JSON.stringify({ level: PINO_LEVELS[Number(level)] ?? String(level), message: msg ?? '', metadata })}\n`;
}

/** The oldest day a file may hold to be kept: the export window's start, or `retentionDays` before now. */
export function oldestKeptDay(now: Date, retentionDays?: number): string {
  return localDay(
    retentionDays === undefined ? logWindowStart(now) : new Date(now.getTime() - retentionDays * 86_400_000),
  );
}

export class DailyLogFiles extends Writable {
  private readonly dir: string;
  private retentionDays: number | undefined;
  private readonly maxFileBytes: number;
  private readonly requests: boolean;
  private readonly now: () => Date;
  private day = '';
  private readonly fds = new Map<string, { fd: number; bytes: number; full: boolean }>();
  private summary = { count: 0, s2xx: 0, s3xx: 0, s4xx: 0, since: 0 };
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(o: DailyLogOptions) {
    super({ decodeStrings: false });
    this.dir = o.dir;
    this.retentionDays = o.retentionDays;
    this.maxFileBytes = o.maxFileBytes ?? 20 * 1024 * 1024;
    this.requests = o.requests ?? false;
    this.now = o.now ?? (() => new Date());
    fs.mkdirSync(this.dir, { recursive: true });
    this.summary.since = this.now().getTime();
    this.prune(this.now());
    if (!o.now) {
      // A box may log nothing for days (holidays): the daily pruning and the hourly summary do not wait for a line.
      this.timers.push(setInterval(() => this.safely(() => this.prune(this.now())), 86_400_000).unref());
      this.timers.push(setInterval(() => this.safely(() => this.flushSummary()), 3_600_000).unref());
    }
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.safely(() => {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        if (!this.requests && REQUEST_LINE.test(line)) {
          const status = Number(STATUS.exec(line)?.[1] ?? 0);
          if (status < 500) {
            this.countRequest(status);
            continue;
          }
        }
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          parsed = { level: 30, msg: line };
        }
        const level = Number(parsed.level);
        if (level < 30) continue;
        this.writeLine(level >= 50 ? 'error' : 'info', formatLine(parsed));
      }
    });
    done();
  }

  /** Logging must never take the server down (a full disk on a classroom box is common). */
  private safely(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      process.emitWarning(`daily log write failed: ${(err as Error).message}`);
    }
  }

  /** Counts one request answered below 500 for the hourly summary line. */
  countRequest(status: number): void {
    const s = this.summary;
    s.count += 1;
    if (status >= 400) s.s4xx += 1;
    else if (status >= 300) s.s3xx += 1;
    else s.s2xx += 1;
    if (this.now().getTime() - s.since >= 3_600_000) this.flushSummary();
  }

  /** One line for the requests since the last one (none when there were none). */
  flushSummary(): void {
    const s = this.summary;
    const now = this.now();
    if (s.count > 0) {
      this.writeLine(
        'info',
        formatLine({
          level: 30,
          time: now.getTime(),
          msg: 'requests summary',
          requests: s.count,
          status2xx: s.s2xx,
          status3xx: s.s3xx,
          status4xx: s.s4xx,
          from: new Date(s.since).toISOString(),
        }),
      );
    }
    this.summary = { count: 0, s2xx: 0, s3xx: 0, s4xx: 0, since: now.getTime() };
  }

  private writeLine(kind: 'info' | 'error', text: string): void {
    const now = this.now();
    this.rollover(now);
    const file = this.fileOf(kind, now);
    if (file.full) return;
    const bytes = Buffer.byteLength(text);
    if (file.bytes + bytes > this.maxFileBytes) {
      file.full = true;
      const note = formatLine({
        level: 40,
        time: now.getTime(),
        msg: `log file size limit reached (${this.maxFileBytes} bytes): further ${kind} lines of this day are dropped`,
      });
      fs.writeSync(file.fd, note);
      return;
    }
    // Synchronous writes: a line is in the file before an export that follows it reads the file.
    fs.writeSync(file.fd, text);
    file.bytes += bytes;
  }

  /** One open descriptor per file of the day, opened on its first line (files appear only when something is logged). */
  private fileOf(kind: 'info' | 'error', now: Date): { fd: number; bytes: number; full: boolean } {
    const name = dailyLogName(kind, now);
    let file = this.fds.get(name);
    if (file === undefined) {
      const fd = fs.openSync(path.join(this.dir, name), 'a');
      const bytes = fs.fstatSync(fd).size;
      file = { fd, bytes, full: bytes >= this.maxFileBytes };
      this.fds.set(name, file);
    }
    return file;
  }

  private closeAll(): void {
    for (const { fd } of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.safely(() => this.flushSummary());
    for (const t of this.timers) clearInterval(t);
    this.closeAll();
    done();
  }

  override _destroy(err: Error | null, done: (err?: Error | null) => void): void {
    for (const t of this.timers) clearInterval(t);
    done(err);
  }

  private rollover(now: Date): void {
    const day = localDay(now);
    if (day === this.day) return;
    this.day = day;
    this.closeAll();
    this.prune(now);
  }

  /** Removes the daily files older than the kept window. */
  /** A retention central set (undefined: the export's window again); applied at once. */
  setRetentionDays(days: number | undefined): void {
    if (days === this.retentionDays) return;
    this.retentionDays = days;
    this.safely(() => this.prune(this.now()));
  }

  prune(now: Date): void {
    const oldest = oldestKeptDay(now, this.retentionDays);
    for (const name of fs.readdirSync(this.dir)) {
      const m = DAILY_NAME.exec(name);
      if (m && m[2] < oldest) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}

/** The stream entry to hand to createLogger: everything from info up goes to the daily files. */
export function dailyLogStream(
  dir: string,
  options: Omit<DailyLogOptions, 'dir'> = {},
): { level: 'info'; stream: DailyLogFiles } {
  return { level: 'info', stream: new DailyLogFiles({ dir, ...options }) };
}
