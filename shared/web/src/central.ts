// The central API's /sync-log/ page: a teacher signs in with the school account, picks the studentlog.zip
// saved on the classroom page and uploads it to PUT /log/import, then reads what central did with it.
import { byId, formatBytes, initLanguage, initSignIn, msg, say, signOut, type Msg } from './common.js';

/** What the X-Log-Import header of a successful import says (see the central API's log import). */
interface ImportSummary {
  imported?: Record<string, number>;
  pending?: number;
  refused?: number;
  changed?: number;
  learners?: { written: number; unknown: number; otherSchool: number };
  logIniImported?: boolean;
}

const PROGRESS_TABLES = [
  'studentactives',
  'studentlearningsprogress',
  'studentgradesprogress',
  'studentlevelsprogress',
  'studentlessonsprogress',
  'studentpoints',
  'studentappusages',
];
/** Waits longer than this are not worth a page left open: the teacher is asked to try later instead. */
const MAX_WAIT_S = 600;

let token: string | null = null;
let countdown: ReturnType<typeof setInterval> | null = null;
let busy = false;

function stopCountdown(): void {
  if (countdown !== null) clearInterval(countdown);
  countdown = null;
  byId('countdown').hidden = true;
}

const session = {
  signedOut(): void {
    token = null;
    busy = false;
    stopCountdown();
    byId('upload-button').removeAttribute('aria-disabled');
    byId<HTMLButtonElement>('upload-button').disabled = true;
    byId('upload-progress').hidden = true;
    byId('upload-progress-label').hidden = true;
    say(byId('upload-status'), []);
  },
};

/** The import's answer in words. */
function described(s: ImportSummary): Msg[] {
  if (s.logIniImported === false) return [msg('result.empty')];
  const rows = s.imported ?? {};
  const total = Object.values(rows).reduce((a, b) => a + b, 0);
  const out: Msg[] = [];
  if (s.changed === 0) out.push(msg('result.unchanged'));
  else {
    out.push(msg('result.written', total));
    const progress = PROGRESS_TABLES.reduce((a, k) => a + (rows[k] ?? 0), 0);
    out.push(
      msg(
        'result.breakdown',
        rows.studentprogress ?? 0,
        rows.studentprogressquestions ?? 0,
        progress,
        rows.rpiuseraccess ?? 0,
      ),
    );
    if (s.learners) out.push(msg('result.learners', s.learners.written));
  }
  if (s.learners?.otherSchool || s.refused)
    out.push(msg('result.otherSchool', s.learners?.otherSchool ?? 0, s.refused ?? 0));
  if (s.learners?.unknown || s.pending) out.push(msg('result.unknown', s.learners?.unknown ?? 0, s.pending ?? 0));
  return out;
}

/** Seconds to wait from a Retry-After header (seconds or an HTTP date); 30 when it says nothing usable. */
function retryAfter(header: string | null): number {
  if (!header) return 30;
  const n = Number(header);
  if (Number.isFinite(n) && n >= 0) return Math.ceil(n);
  const at = Date.parse(header);
  return Number.isNaN(at) ? 30 : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** A refusal in words, from the status and the contract's error message. */
function refusal(status: number, message: string): Msg {
  if (status === 404) return msg('refused.off');
  if (status === 413) return msg('refused.tooLarge');
  if (status === 400) {
    if (message === 'Please login as a teacher!') return msg('signin.notTeacher');
    if (message === 'Teacher does not exist!') return msg('refused.noTeacher');
    // `Invalid File` alone: the file was read but the database or object store failed (nothing written).
    if (message === 'Invalid File') return msg('refused.store');
    return msg('refused.notLog');
  }
  return msg('error.other', message ? `${message}, HTTP ${status}` : `HTTP ${status}`);
}

function upload(file: File): void {
  const status = byId('upload-status');
  const bar = byId<HTMLProgressElement>('upload-progress');
  const button = byId<HTMLButtonElement>('upload-button');
  busy = true;
  // aria-disabled rather than disabled: a focused button that is disabled drops the keyboard's focus.
  button.setAttribute('aria-disabled', 'true');
  stopCountdown();
  bar.hidden = false;
  byId('upload-progress-label').hidden = false;
  bar.max = file.size || 1;
  bar.value = 0;
  let sent = 0;
  say(status, [msg('upload.sending', (l) => `${formatBytes(l, sent)} / ${formatBytes(l, file.size)}`)]);

  const done = () => {
    busy = false;
    button.removeAttribute('aria-disabled');
    button.disabled = !token;
  };
  const form = new FormData();
  form.append('importfile', file, 'studentlog.zip');
  const xhr = new XMLHttpRequest();
  xhr.open('PUT', '/log/import');
  xhr.setRequestHeader('Authorization', `Bearer ${token}`);
  xhr.setRequestHeader('Accept', 'application/json');
  let lastPaint = 0;
  xhr.upload.onprogress = (e) => {
    sent = e.loaded;
    bar.value = e.loaded;
    const now = Date.now();
    if (now - lastPaint > 500) {
      lastPaint = now;
      say(status, [msg('upload.sending', (l) => `${formatBytes(l, sent)} / ${formatBytes(l, file.size)}`)]);
    }
  };
  xhr.upload.onload = () => {
    bar.value = bar.max;
    say(status, [msg('upload.reading')]);
  };
  xhr.onerror = () => {
    done();
    say(status, [msg('net.down')], 'error');
  };
  xhr.onload = () => {
    done();
    let json: { errormessage?: string } | null = null;
    try {
      json = JSON.parse(xhr.responseText) as { errormessage?: string };
    } catch {
      json = null;
    }
    if (xhr.status === 200) {
      let summary: ImportSummary = {};
      try {
        summary = JSON.parse(xhr.getResponseHeader('X-Log-Import') ?? '{}') as ImportSummary;
      } catch {
        summary = {};
      }
      const lines = described(summary);
      const refusedSome = !!(summary.refused || summary.pending);
      say(status, lines, refusedSome ? 'warn' : 'ok');
      return;
    }
    if (xhr.status === 401) {
      signOut(session, msg('session.ended'));
      return;
    }
    // Central asks to be asked again: too many imports (429), or a dependency out of reach (503, or the
    // import's 400 with Retry-After, which a refusal of the file never carries).
    const later = xhr.getResponseHeader('Retry-After');
    if (xhr.status === 429 || xhr.status === 503 || (xhr.status === 400 && later !== null)) {
      const wait = retryAfter(later);
      if (wait > MAX_WAIT_S) {
        say(status, [msg('error.other', json?.errormessage ?? `HTTP ${xhr.status}`)], 'error');
        return;
      }
      waitAndRetry(file, wait, xhr.status === 429 ? 'refused.busy' : 'refused.unavailable');
      return;
    }
    say(status, [refusal(xhr.status, json?.errormessage ?? '')], 'error');
  };
  xhr.send(form);
}

/** Says once (live) why central asks to wait, counts down where the teacher can see it, then uploads again. */
function waitAndRetry(file: File, seconds: number, why: 'refused.busy' | 'refused.unavailable'): void {
  const status = byId('upload-status');
  const shown = byId('countdown');
  say(status, [msg(why, seconds)], 'warn');
  let left = seconds;
  byId('upload-button').setAttribute('aria-disabled', 'true');
  shown.hidden = false;
  say(shown, [msg('refused.countdown', left)], 'warn');
  busy = true;
  countdown = setInterval(() => {
    left -= 1;
    if (left > 0) {
      say(shown, [msg('refused.countdown', left)], 'warn');
      return;
    }
    stopCountdown();
    busy = false;
    byId('upload-button').removeAttribute('aria-disabled');
    if (!token) return;
    say(status, [msg('retry.now')]);
    upload(file);
  }, 1000);
}

initLanguage();
initSignIn({
  url: '/auth/school/login',
  body: (user, password) => ({ lmsusername: user, lmsuserpassword: password }),
  async accept(accessToken) {
    token = accessToken;
    byId<HTMLButtonElement>('upload-button').disabled = false;
    return null;
  },
  signedOut: session.signedOut,
});
byId<HTMLFormElement>('upload').addEventListener('submit', (e) => {
  e.preventDefault();
  if (busy || !token) return;
  const input = byId<HTMLInputElement>('file');
  const file = input.files?.[0];
  if (!file) {
    say(byId('upload-status'), [msg('upload.pick')], 'error');
    input.focus();
    return;
  }
  upload(file);
});
