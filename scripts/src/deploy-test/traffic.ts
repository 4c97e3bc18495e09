/**
 * The write traffic of `make deploy-test`: what a school's day sends through the proxy while the operator
 * kills, restarts and upgrades. Two teachers import classroom logs, an administrator enrols learners and
 * signs in, a learner submits quiz results to the classroom server, and a reader fetches media and stats.
 *
 * Every write is recorded by its outcome: acknowledged (200), refused (an answer of the service other than
 * 200, so nothing may be written) or in doubt (the connection was cut before an answer, or the proxy answered
 * 502/504 because the instance went away mid-request: the write may or may not have happened). An import
 * answered with Retry-After is sent again after that wait, as `npm run sync-log` does.
 */
import crypto from 'node:crypto';
import { streamToBuffer, writeLogZipFromDocument, type LogDocument } from '@lms/shared';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}
export type Send = (
  url: string,
  o?: { method?: string; headers?: Record<string, string>; body?: Buffer | string },
) => Promise<Reply>;

export type Op = 'import' | 'enrol' | 'sign-in' | 'submit' | 'read';

/** What the whole run wrote, by outcome: checked against both databases at the end. */
export interface Ledger {
  /** studentactiveid of every row of every import. */
  importRows: { acked: string[]; refused: string[]; doubt: string[] };
  /** schoolusername of every learner enrolled. */
  learners: { acked: string[]; refused: string[]; doubt: string[] };
  /** starttime (ms) of every quiz submission. */
  submissions: { acked: number[]; refused: number[]; doubt: number[] };
}

export const newLedger = (): Ledger => ({
  importRows: { acked: [], refused: [], doubt: [] },
  learners: { acked: [], refused: [], doubt: [] },
  submissions: { acked: [], refused: [], doubt: [] },
});

export interface TrafficSetup {
  site: string;
  classroomSite: string;
  send: Send;
  /** Tokens of the two teachers (central school sign-in) that import. */
  teacherTokens: [string, string];
  adminToken: string;
  adminSignIn: { lmsusername: string; lmsuserpassword: string };
  learnerToken: string;
  learner: { studentid: string };
  lesson: {
    lessonid: string;
    lessonquizid: string;
    lessonquizquestionids: readonly string[];
    questionids: readonly string[];
  };
  enrol: { schoolid: string; standardid: string; curriculumid: string; countryname: string };
  mediaPath: string;
  ledger: Ledger;
  /** Rows per import ZIP. */
  rowsPerImport?: number;
}

export interface Failure {
  op: Op;
  what: string;
  /** The answer's status (0: no answer) and whether it carried Retry-After. */
  status: number;
  retryAfter: boolean;
  /** When it came (Date.now()). */
  at: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let learnerSeq = 0;
/** Learners' usernames are letters and digits, at most 16 of them. */
const runTag = crypto.randomBytes(2).toString('hex');
let submissionClock = Date.parse('2026-09-01T06:00:00Z');

/** No answer, or the proxy's own answer for an instance that went away while it had the request. */
const inDoubt = (r: Reply | Error): boolean => r instanceof Error || r.status === 502 || r.status === 504;

function retryAfter(r: Reply): number | undefined {
  const h = r.headers['retry-after'];
  const n = Number(Array.isArray(h) ? h[0] : h);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

export function multipart(
  field: string,
  filename: string,
  type: string,
  bytes: Buffer,
): { body: Buffer; contentType: string } {
  const boundary = `----deploy-test-${crypto.randomBytes(8).toString('hex')}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\n`;
  return {
    body: Buffer.concat([
      Buffer.from(`${head}Content-Type: ${type}\r\n\r\n`),
      bytes,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

function logOf(studentid: string, lessonid: string, ids: string[]): LogDocument {
  const at = Date.now() - 3_600_000;
  const studentactives = ids.map((studentactiveid, i) => ({
    studentactiveid,
    studentid,
    referenceid: lessonid,
    referencetype: 3,
    created_at: new Date(at + i * 1000).toISOString(),
  }));
  const progress = {
    studentlearningprogress: [],
    studentgradesprogress: [],
    studentlevelsprogress: [],
    studentlessonsprogress: [],
    studentpoints: [],
    studentappusages: [],
    studentactives,
  };
  return { log: { result: [], progress, access: [] } } as unknown as LogDocument;
}

/**
 * Runs the traffic until `stop()`: one worker per teacher importing, one enrolling (with a sign-in every
 * third turn), one submitting results, one reading. `failures` are answers other than 200 (and cut
 * connections), except an import's answer with Retry-After, which is waited for and counted in `waits`.
 */
export function startTraffic(s: TrafficSetup, o: { reads?: boolean } = {}) {
  let stopped = false;
  let inFlight = 0;
  const sent: Record<Op, number> = { import: 0, enrol: 0, 'sign-in': 0, submit: 0, read: 0 };
  const failures: Failure[] = [];
  let waits = 0;
  const json = { 'Content-Type': 'application/json' };
  const rows = s.rowsPerImport ?? 20;

  // Every answer by operation and status ("submit 200", "submit 500", "enrol no answer"): what the drills report.
  const answers: Record<string, number> = {};
  const tracked = async (op: Op, fn: () => Promise<Reply>): Promise<Reply | Error> => {
    inFlight += 1;
    sent[op] += 1;
    let r: Reply | Error;
    try {
      r = await fn();
    } catch (err) {
      r = err as Error;
    } finally {
      inFlight -= 1;
    }
    const key = `${op} ${r instanceof Error ? 'no answer' : r.status}`;
    answers[key] = (answers[key] ?? 0) + 1;
    return r;
  };
  const fail = (op: Op, r: Reply | Error) => {
    failures.push({
      op,
      what: r instanceof Error ? r.message : `HTTP ${r.status} ${r.body.toString().slice(0, 120)}`,
      status: r instanceof Error ? 0 : r.status,
      retryAfter: !(r instanceof Error) && retryAfter(r) !== undefined,
      at: Date.now(),
    });
  };

  const importer = async (token: string) => {
    while (!stopped) {
      const ids = Array.from({ length: rows }, () => crypto.randomUUID());
      const zip = await streamToBuffer(writeLogZipFromDocument(logOf(s.learner.studentid, s.lesson.lessonid, ids)));
      for (;;) {
        const m = multipart('importfile', 'studentlog.zip', 'application/zip', zip);
        const r = await tracked('import', () =>
          s.send(`${s.site}/log/import?offline=false`, {
            method: 'PUT',
            headers: { Authorization: `Bearer ${token}`, 'Content-Type': m.contentType },
            body: m.body,
          }),
        );
        const wait = r instanceof Error ? undefined : retryAfter(r);
        if (!(r instanceof Error) && r.status !== 200 && wait !== undefined && !stopped) {
          // Busy or an outage: the teacher's page and sync-log wait and send the same ZIP again.
          waits += 1;
          await sleep(Math.min(wait, 10) * 1000);
          continue;
        }
        if (inDoubt(r)) s.ledger.importRows.doubt.push(...ids);
        else if (!(r instanceof Error) && r.status === 200) s.ledger.importRows.acked.push(...ids);
        else s.ledger.importRows.refused.push(...ids);
        if (r instanceof Error || r.status !== 200) fail('import', r);
        break;
      }
    }
  };

  const enroller = async () => {
    let turn = 0;
    while (!stopped) {
      turn += 1;
      if (turn % 3 === 0) {
        const r = await tracked('sign-in', () =>
          s.send(`${s.site}/auth/login`, {
            method: 'POST',
            headers: json,
            body: JSON.stringify(s.adminSignIn),
          }),
        );
        if (r instanceof Error || r.status !== 200) fail('sign-in', r);
        continue;
      }
      learnerSeq += 1;
      const username = `dt${runTag}${learnerSeq}`;
      const body = {
        curriculumid: [s.enrol.curriculumid],
        schoolid: s.enrol.schoolid,
        standard: s.enrol.standardid,
        students: [
          {
            studentfirstname: 'Load',
            studentlastname: `Learner ${learnerSeq}`,
            mothername: 'Ama',
            fathername: 'Yaw',
            contact: '0555',
            dateofbirth: '02-03-2016',
            dateofjoin: '05-01-2026',
            genderid: '1',
            wg_seeing: '1',
            wg_hearing: '1',
            wg_walking: '',
            wg_remembering: null,
            city: 'Phnom Penh',
            country: s.enrol.countryname,
            state: 'Phnom Penh',
            schoolusername: username,
            schooluserpasswordhash: 'pass1',
          },
        ],
      };
      const r = await tracked('enrol', () =>
        s.send(`${s.site}/student/create?online=false`, {
          method: 'POST',
          headers: { ...json, Authorization: `Bearer ${s.adminToken}` },
          body: JSON.stringify(body),
        }),
      );
      if (inDoubt(r)) s.ledger.learners.doubt.push(username);
      else if (!(r instanceof Error) && r.status === 200) s.ledger.learners.acked.push(username);
      else s.ledger.learners.refused.push(username);
      if (r instanceof Error || r.status !== 200) fail('enrol', r);
    }
  };

  const submitter = async () => {
    while (!stopped) {
      submissionClock += 60_000;
      const starttime = submissionClock;
      const result = s.lesson.lessonquizquestionids.map((lessonquizquestionid, i) => ({
        iscorrect: i % 2 === 0,
        lessonquizid: s.lesson.lessonquizid,
        lessonquizquestionid,
        questionid: s.lesson.questionids[i],
      }));
      const r = await tracked('submit', () =>
        s.send(`${s.classroomSite}/result/lesson/quiz/${s.lesson.lessonquizid}`, {
          method: 'POST',
          headers: { ...json, Authorization: `Bearer ${s.learnerToken}` },
          body: JSON.stringify({ starttime, endtime: starttime + 30_000, result }),
        }),
      );
      if (inDoubt(r)) s.ledger.submissions.doubt.push(starttime);
      else if (!(r instanceof Error) && r.status === 200) s.ledger.submissions.acked.push(starttime);
      else s.ledger.submissions.refused.push(starttime);
      if (r instanceof Error || r.status !== 200) fail('submit', r);
    }
  };

  const reader = async () => {
    let i = 0;
    while (!stopped) {
      i += 1;
      const url = i % 2 ? `${s.site}${s.mediaPath}` : `${s.site}/student/stats/${s.learner.studentid}/quiz`;
      const r = await tracked('read', () => s.send(url, { headers: { Authorization: `Bearer ${s.adminToken}` } }));
      if (r instanceof Error || r.status !== 200) fail('read', r);
    }
  };

  const workers = [importer(s.teacherTokens[0]), importer(s.teacherTokens[1]), enroller(), submitter()];
  if (o.reads !== false) workers.push(reader());
  return {
    get inFlight() {
      return inFlight;
    },
    sent,
    failures,
    answers,
    get waits() {
      return waits;
    },
    total: () => Object.values(sent).reduce((a, b) => a + b, 0),
    async stop() {
      stopped = true;
      await Promise.all(workers);
    },
  };
}

export type Traffic = ReturnType<typeof startTraffic>;

/** "1,234 requests (import 40, enrol 300, …)" */
export function describeTraffic(t: Traffic): string {
  const parts = (Object.keys(t.sent) as Op[]).filter((k) => t.sent[k]).map((k) => `${k} ${t.sent[k]}`);
  return `${t.total().toLocaleString('en-US')} requests (${parts.join(', ')})`;
}

/** "2 failed: import 1 (HTTP 502 …), read 1 (…)" or "0 failed" */
export function describeFailures(failures: Failure[]): string {
  if (!failures.length) return '0 failed';
  const by = new Map<Op, Failure[]>();
  for (const f of failures) by.set(f.op, [...(by.get(f.op) ?? []), f]);
  const parts = [...by].map(([op, fs]) => `${op} ${fs.length} (${fs[0].what.slice(0, 80)})`);
  return `${failures.length} failed: ${parts.join('; ')}`;
}

export { sleep };
