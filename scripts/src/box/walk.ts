import crypto from 'node:crypto';
import { DEMO_IDS } from '@lms/shared';

/**
 * A learner's and a teacher's walk through a classroom server that holds the demo data: sign-in, a lesson,
 * a practice and a quiz result, the teacher's log export, the teacher's /sync-log/ page with its script, and
 * media in folders. Returns one line per step: status, content type and the body with what differs between
 * two servers (tokens, generated ids, times) masked, so that two servers' walks can be compared whole.
 */
export async function walk(base: string): Promise<string[]> {
  const lines: string[] = [];
  const step = async (name: string, path: string, init: RequestInit & { token?: string; json?: unknown } = {}) => {
    const headers: Record<string, string> = { ...(init.headers as Record<string, string> | undefined) };
    if (init.token) headers.Authorization = init.token;
    if (init.json !== undefined) headers['Content-Type'] = 'application/json';
    const res = await fetch(`${base}${path}`, {
      method: init.method ?? 'GET', headers, body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const body = Buffer.from(await res.arrayBuffer());
    const type = res.headers.get('content-type') ?? '';
    const text = /json|text/.test(type) ? mask(body.toString('utf8')) : undefined;
    // Long texts (the page, its script) by their digest, after masking: the line stays readable.
    const shown = text === undefined ? `sha256 ${digest(type, body)}`
      : text.length > 2000 ? `masked sha256 ${digest('', Buffer.from(text))}` : JSON.stringify(text);
    lines.push(`${name}: ${res.status} ${type} ${res.headers.get('content-range') ?? ''} ${shown}`);
    return { status: res.status, body };
  };
  const signIn = async (who: string) => {
    const r = await step(`sign-in ${who}`, '/auth/login', {
      method: 'POST', json: { studentusername: who, studentpassword: DEMO_IDS.password, logintime: Date.now() },
    });
    if (r.status !== 200) throw new Error(`sign-in of ${who} answered ${r.status}: ${r.body.toString()}`);
    return `Bearer ${(JSON.parse(r.body.toString()) as { data: { accessToken: string } }).data.accessToken}`;
  };
  const L = DEMO_IDS.lessons[0];
  await step('root', '/');
  const learner = await signIn(DEMO_IDS.learners[0].schoolusername);
  await step('lesson learning', `/lesson/${L.lessonid}/learning`, { token: learner });
  const start = Date.now() - 120_000;
  await step('practice result', `/result/lesson/practice/${L.lessonpracticeid}`, {
    method: 'POST', token: learner, json: {
      starttime: start, result: L.lessonpracticequestionids.map((q, i) => ({
        iscorrect: i !== 1, lessonpracticeid: L.lessonpracticeid, lessonpracticequestionid: q,
        questionid: L.questionids[i], tries: 1,
      })),
    },
  });
  await step('quiz result', `/result/lesson/quiz/${L.lessonquizid}`, {
    method: 'POST', token: learner, json: {
      starttime: start + 60_000, endtime: start + 90_000, result: L.lessonquizquestionids.map((q, i) => ({
        iscorrect: true, lessonquizid: L.lessonquizid, lessonquizquestionid: q, questionid: L.questionids[i],
      })),
    },
  });
  await step('lesson progress', `/lesson/${L.lessonid}/learning/progress`, { token: learner });
  await step('media in a folder', `/media/${L.documentname}`, { headers: { Range: 'bytes=0-1023' } });
  await step('media at the top', '/media/triangle.png');
  await step('media outside the folder', '/media/..%2f..%2fetc%2fpasswd');
  const teacher = await signIn(DEMO_IDS.teacher.schoolusername);
  await step('export refused to a learner', '/export/log', { token: learner });
  const exp = await step('export', '/export/log', { token: teacher });
  lines.push(`export holds: ${zipNames(exp.body).join(', ')}`);
  await step('sync-log page', '/sync-log/');
  await step('sync-log script', '/sync-log/classroom.js');
  await step('sync-log stylesheet', '/sync-log/sync-log.css');
  return lines;
}

/** What two servers' answers may differ in: signed tokens, generated ids, clock times, ETags. */
function mask(text: string): string {
  return text
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<token>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z?/g, '<time>')
    .replace(/\b1\d{12}\b/g, '<ms>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, (id) => (KNOWN.has(id) ? id : '<id>'));
}

const KNOWN = new Set(JSON.stringify(DEMO_IDS).match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi));

function digest(type: string, body: Buffer): string {
  // A ZIP holds times: its entries' names stand for it (below), not its bytes.
  if (type.includes('zip')) return `(zip, ${body.length > 0 ? 'not empty' : 'empty'})`;
  return crypto.createHash('sha256').update(body).digest('hex');
}

/** Entry names of a ZIP from its central directory. */
function zipNames(zip: Buffer): string[] {
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) return ['(not a zip)'];
  const count = zip.readUInt16LE(eocd + 10);
  let at = zip.readUInt32LE(eocd + 16);
  const names: string[] = [];
  for (let i = 0; i < count && at + 46 <= zip.length; i++) {
    const n = zip.readUInt16LE(at + 28);
    names.push(zip.subarray(at + 46, at + 46 + n).toString());
    at += 46 + n + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return names.sort();
}

if (require.main === module) {
  walk(process.argv[2] ?? 'http://127.0.0.1:3000').then((lines) => console.log(lines.join('\n')), (err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
