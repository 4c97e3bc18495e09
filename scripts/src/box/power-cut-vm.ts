import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { parseArgs } from 'node:util';
import { DEMO_IDS } from '@lms/shared';

/**
 * Drives scripts/box/vm-power-cut.sh's virtual machine: boots it, hands in quiz results from the demo
 * learners through a forwarded loopback port, cuts its power (SIGKILL of qemu: the guest's memory and page
 * cache are gone, the disk file keeps what the guest synced), and on the next boot reads what the machine
 * checked before its server started. Every other round the cut waits for the guest agent's word that the
 * server is stopped inside a write transaction. Fails (exit 1) on a lost acknowledged result, an attempt
 * without all its answers, a database that fails integrity_check, or too few cuts inside a transaction.
 */
const { values: o } = parseArgs({ options: {
  kernel: { type: 'string' }, initrd: { type: 'string' }, disk: { type: 'string' },
  rounds: { type: 'string', default: '8' },
  quiz: { type: 'string' }, memory: { type: 'string', default: '768' },
} });
const ROUNDS = Number(o.rounds);
const L = DEMO_IDS.lessons[0];
const ANSWERS = L.lessonquizquestionids.length;

interface Vm {
  proc: ChildProcess;
  lines: string[];
  waitFor: (re: RegExp, ms: number) => Promise<string | undefined>;
  web: number;
  agent: number;
}
interface Row { key: string; answers: number }

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

async function boot(): Promise<Vm> {
  const web = await freePort();
  const agent = await freePort();
  const proc = spawn('qemu-system-x86_64', [
    '-machine', 'q35', '-accel', 'tcg', '-cpu', 'max', '-smp', '1', '-m', o.memory!, '-nodefaults', '-no-reboot',
    '-display', 'none', '-serial', 'stdio', '-monitor', 'none',
    '-kernel', o.kernel!, '-initrd', o.initrd!,
    '-append', 'console=ttyS0 root=LABEL=lmsroot rootfstype=ext4 rw init=/sbin/lms-vm-init '
      + 'net.ifnames=0 no_timer_check quiet loglevel=1 panic=-1',
    // cache=none: the guest's writes go to the file past the host's page cache, its flushes are fdatasync'd.
    '-drive', `file=${o.disk!},format=raw,if=virtio,cache=none,aio=threads`,
    '-netdev', `user,id=n0,hostfwd=tcp:127.0.0.1:${web}-:3000,hostfwd=tcp:127.0.0.1:${agent}-:3001`,
    '-device', 'virtio-net-pci,netdev=n0',
  ], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  let partial = '';
  const waiters: Array<() => void> = [];
  proc.stdout!.on('data', (c: Buffer) => {
    const parts = (partial + c.toString('latin1')).split(/\r?\n/);
    partial = parts.pop()!;
    lines.push(...parts);
    for (const w of waiters.splice(0)) w();
  });
  const waitFor = async (re: RegExp, ms: number) => {
    const deadline = Date.now() + ms;
    for (let seen = 0; ;) {
      for (; seen < lines.length; seen++) if (re.test(lines[seen])) return lines[seen];
      if (Date.now() > deadline || exited(proc)) return undefined;
      await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 200); });
    }
  };
  return { proc, lines, waitFor, web, agent };
}

const exited = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;

async function cut(vm: Vm): Promise<void> {
  if (exited(vm.proc)) return;
  const gone = new Promise((r) => vm.proc.once('exit', r));
  vm.proc.kill('SIGKILL');
  await gone;
}

async function call(
  vm: Vm, method: string, path: string, body?: unknown, token?: string,
): Promise<{ status: number; text: string }> {
  const res = await fetch(`http://127.0.0.1:${vm.web}${path}`, {
    method,
    headers: { ...(body ? { 'Content-Type': 'application/json' } : {}), ...(token ? { Authorization: token } : {}) },
    body: body ? JSON.stringify(body) : undefined, signal: AbortSignal.timeout(60_000),
  });
  return { status: res.status, text: await res.text() };
}

/** The check the machine ran at boot, before its server opened the database. */
async function readCheck(vm: Vm): Promise<{ integrity: string; rows: Row[] }> {
  if (!(await vm.waitFor(/^LMS-CHECK-END/, 600_000))) {
    throw new Error(`no check at boot:\n${vm.lines.slice(-30).join('\n')}`);
  }
  const integrity = vm.lines.find((l) => l.startsWith('LMS-INTEGRITY '))!.slice('LMS-INTEGRITY '.length).trim();
  const rows = vm.lines.filter((l) => l.startsWith('LMS-ROW ')).map((l) => {
    const [studentid, start, n] = l.slice('LMS-ROW '.length).split('|');
    return { key: `${studentid}|${toMs(start)}`, answers: Number(n) };
  });
  return { integrity, rows };
}

function toMs(stored: string): number {
  if (/^\d+$/.test(stored)) return Number(stored);
  return Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(stored) ? stored.replace(' ', 'T') : `${stored.replace(' ', 'T')}Z`);
}

async function waitServing(vm: Vm): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    try {
      if ((await call(vm, 'GET', '/')).status === 200) return;
    } catch { /* not up yet */ }
    if (Date.now() > deadline || exited(vm.proc)) {
      throw new Error(`the server did not answer:\n${vm.lines.slice(-30).join('\n')}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

async function main(): Promise<void> {
  const acknowledged = new Set<string>();
  const inFlightAtCuts: string[][] = [];
  const report: Array<Record<string, unknown>> = [];
  let stamp = Date.parse('2026-03-02T08:00:00Z');
  let inWrite = 0;
  let armed = 0;
  const verify = (check: { integrity: string; rows: Row[] }, after: string) => {
    if (check.integrity !== 'ok') throw new Error(`${after}: integrity_check says ${check.integrity}`);
    const stored = new Set(check.rows.map((r) => r.key));
    const lost = [...acknowledged].filter((k) => !stored.has(k));
    if (lost.length) {
      const e = lost.slice(0, 3).join(', ');
      throw new Error(`${after}: ${lost.length} of ${acknowledged.size} acknowledged results lost, e.g. ${e}`);
    }
    const half = check.rows.filter((r) => r.answers !== ANSWERS);
    if (half.length) throw new Error(`${after}: ${half.length} attempts without their ${ANSWERS} answers`);
    return stored;
  };
  for (let round = 0; round <= ROUNDS; round++) {
    const t0 = Date.now();
    const vm = await boot();
    try {
      const check = await readCheck(vm);
      const stored = verify(check, round === 0 ? 'first boot' : `after power cut ${round}`);
      if (round > 0) {
        const flight = inFlightAtCuts[round - 1];
        report[round - 1].inFlightStored = flight.filter((k) => stored.has(k)).length;
      }
      if (round === ROUNDS) break;
      await waitServing(vm);
      const bootMs = Date.now() - t0;
      const learners: Array<{ studentid: string; token: string }> = [];
      for (const l of DEMO_IDS.learners) {
        const r = await call(vm, 'POST', '/auth/login', {
          studentusername: l.schoolusername, studentpassword: DEMO_IDS.password, logintime: Date.now(),
        });
        if (r.status !== 200) throw new Error(`sign-in answered ${r.status}: ${r.text}`);
        const { accessToken } = (JSON.parse(r.text) as { data: { accessToken: string } }).data;
        learners.push({ studentid: l.studentid, token: `Bearer ${accessToken}` });
      }
      let cutting = false;
      let acked = 0;
      const pending = new Set<string>();
      const worker = async (l: { studentid: string; token: string }) => {
        while (!cutting) {
          stamp += 1000;
          const at = stamp;
          const key = `${l.studentid}|${at}`;
          pending.add(key);
          try {
            const r = await call(vm, 'POST', `/result/lesson/quiz/${L.lessonquizid}`, {
              starttime: at, endtime: at + 30_000,
              result: L.lessonquizquestionids.map((q, i) => ({
                iscorrect: false, lessonquizid: L.lessonquizid, lessonquizquestionid: q, questionid: L.questionids[i],
              })),
            }, l.token);
            // Answered while the cut was being made: the answer came before the power went, so it counts.
            pending.delete(key);
            if (r.status !== 200) throw new Error(`a result answered ${r.status}: ${r.text}`);
            acknowledged.add(key);
            acked += 1;
          } catch (err) {
            if (!cutting) throw err;
            return;
          }
        }
      };
      const workers = learners.flatMap((l) => [worker(l), worker(l), worker(l)]);
      const firstAcks = Date.now();
      while (acked < 5 && Date.now() - firstAcks < 60_000) await new Promise((r) => setTimeout(r, 50));
      let frozen: string | undefined;
      if (round % 2 === 0) {
        armed += 1;
        await fetch(`http://127.0.0.1:${vm.agent}/arm`, { signal: AbortSignal.timeout(30_000) });
        frozen = await vm.waitFor(/^LMS-FROZEN-IN-WRITE /, 25_000);
        if (frozen) inWrite += 1;
      } else {
        await new Promise((r) => setTimeout(r, 500 + Math.floor(Math.random() * 2500)));
      }
      cutting = true;
      const flight = [...pending];
      await cut(vm);
      await Promise.allSettled(workers);
      inFlightAtCuts.push(flight);
      report.push({ round: round + 1, bootMs, acknowledged: acked, inFlight: flight.length, cutInsideWrite: !!frozen });
      console.log(`  power cut ${round + 1}: ${JSON.stringify(report[round])}`);
      if (flight.length === 0) throw new Error(`power cut ${round + 1}: no result was in flight`);
    } finally {
      await cut(vm);
    }
  }
  console.log(`vm power cut: ${ROUNDS} cuts, ${acknowledged.size} acknowledged results all stored with all their `
    + 'answers, ' +
    `integrity_check ok at every boot; ${inWrite} of ${armed} armed cuts inside a write transaction`);
  for (const r of report) console.log(`  ${JSON.stringify(r)}`);
  if (inWrite < Math.ceil(armed / 2)) {
    throw new Error(`only ${inWrite} of ${armed} armed cuts landed inside a write transaction`);
  }
}

let finished = false;
// A promise nothing can settle would let node end quietly with 0: that is a failure too.
process.on('exit', (code) => {
  if (code === 0 && !finished) {
    console.error('vm power cut: FAILED: stopped before the last round');
    process.exitCode = 1;
  }
});
main().then(() => { finished = true; }, (err: unknown) => {
  console.error(`vm power cut: FAILED: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
