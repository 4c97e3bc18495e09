import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';

/**
 * The classroom server's own log files, in the layout the original used (contract A.1) so that the
 * activity-log export carries them: `RPI-API-info-YYYY-MM-DD.log` (info and warn) and
 * `RPI-API-error-YYYY-MM-DD.log` (error and fatal) in the log directory, one JSON object per line,
 * a new file each local day. Files older than `retentionDays` are removed when the day changes.
 */
export interface DailyLogOptions {
  dir: string;
  retentionDays?: number;
  /** Injected in tests. */
  now?: () => Date;
}

const PINO_LEVELS: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };
const DAILY_NAME = /^RPI-API-(info|error)-(\d{4}-\d{2}-\d{2})\.log$/;

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

export class DailyLogFiles extends Writable {
  private readonly dir: string;
  private readonly retentionDays: number;
  private readonly now: () => Date;
  private day = '';

  constructor(o: DailyLogOptions) {
    super({ decodeStrings: false });
    this.dir = o.dir;
    this.retentionDays = o.retentionDays ?? 7;
    this.now = o.now ?? (() => new Date());
    fs.mkdirSync(this.dir, { recursive: true });
  }

  override _write(chunk: Buffer | string, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    try {
      for (const line of chunk.toString().split('\n')) {
        if (!line.trim()) continue;
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(line) as Record<string, unknown>;
        } catch {
          parsed = { level: 30, msg: line };
        }
        const level = Number(parsed.level);
        if (level < 30) continue;
        const now = this.now();
        this.rollover(now);
        // Synchronous writes: a line is in the file before an export that follows it reads the file.
        fs.writeSync(this.fdOf(level >= 50 ? 'error' : 'info', now), formatLine(parsed));
      }
      done();
    } catch (err) {
      // Logging must never take the server down (a full disk on a classroom box is common).
      done();
      process.emitWarning(`daily log write failed: ${(err as Error).message}`);
    }
  }

  private readonly fds = new Map<string, number>();

  /** One open descriptor per file of the day, opened on its first line (files appear only when something is logged). */
  private fdOf(kind: 'info' | 'error', now: Date): number {
    const name = dailyLogName(kind, now);
    let fd = this.fds.get(name);
    if (fd === undefined) {
      fd = fs.openSync(path.join(this.dir, name), 'a');
      this.fds.set(name, fd);
    }
    return fd;
  }

  private closeAll(): void {
    for (const fd of this.fds.values()) fs.closeSync(fd);
    this.fds.clear();
  }

  override _final(done: (err?: Error | null) => void): void {
    this.closeAll();
    done();
  }

  private rollover(now: Date): void {
    const day = localDay(now);
    if (day === this.day) return;
    this.day = day;
    this.closeAll();
    const oldest = localDay(new Date(now.getTime() - this.retentionDays * 86_400_000));
    for (const name of fs.readdirSync(this.dir)) {
      const m = DAILY_NAME.exec(name);
      if (m && m[2] < oldest) fs.rmSync(path.join(this.dir, name), { force: true });
    }
  }
}

/** The stream entry to hand to createLogger: everything from info up goes to the daily files. */
export function dailyLogStream(dir: string, options: Omit<DailyLogOptions, 'dir'> = {}): { level: 'info'; stream: DailyLogFiles } {
  return { level: 'info', stream: new DailyLogFiles({ dir, ...options }) };
}
