import fs from 'node:fs';
import http from 'node:http';

/**
 * Runs as root inside the power-cut virtual machine, beside the classroom server. Asked (GET /arm on its
 * port), it watches /proc/locks until the server holds SQLite's WAL write lock (byte 120 of the database's
 * -shm file: a write transaction is open), stops the server with SIGSTOP, reads /proc/locks again and, when
 * the lock is still held, writes `LMS-FROZEN-IN-WRITE` to the console and leaves the server stopped: the
 * host, reading the console, then kills the machine, so that the power cut lands inside a transaction. Never
 * part of the package.
 */
const [pidArg, dbFile, portArg] = process.argv.slice(2);
const pid = Number(pidArg);
const console_ = fs.openSync('/dev/console', 'w');
const say = (line: string) => fs.writeSync(console_, `${line}\n`);

/** The /proc/locks line by which `pid` holds a write lock on byte 120 of the file with inode `ino`. */
export function walWriteLock(locks: string, holder: number, ino: number): string | undefined {
  return locks.split('\n').find((line) => {
    const f = line.trim().split(/\s+/);
    // "1: POSIX  ADVISORY  WRITE 345 fd:00:1234 120 120"; blocked waiters have "->" and are not holders.
    if (f[1] === '->' || f[3] !== 'WRITE' || Number(f[4]) !== holder) return false;
    const fileIno = Number(f[5]?.split(':')[2]);
    const end = f[7] === 'EOF' ? Infinity : Number(f[7]);
    return fileIno === ino && Number(f[6]) <= 120 && 120 <= end;
  });
}

function watch(deadline: number): void {
  let ino: number;
  try {
    ino = fs.statSync(`${dbFile}-shm`).ino;
  } catch {
    setTimeout(() => watch(deadline), 5);
    return;
  }
  for (;;) {
    if (Date.now() > deadline) {
      say('LMS-AGENT-GAVE-UP');
      return;
    }
    if (walWriteLock(fs.readFileSync('/proc/locks', 'utf8'), pid, ino)) {
      process.kill(pid, 'SIGSTOP');
      const held = walWriteLock(fs.readFileSync('/proc/locks', 'utf8'), pid, ino);
      if (held) {
        say(`LMS-FROZEN-IN-WRITE ${held.trim()}`);
        return;
      }
      process.kill(pid, 'SIGCONT');
    }
  }
}

http.createServer((req, res) => {
  res.end('armed\n');
  if (req.url === '/arm') setTimeout(() => watch(Date.now() + 20_000), 0);
}).listen(Number(portArg), '0.0.0.0');
