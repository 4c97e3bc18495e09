// The classroom server's /sync-log/ page: a teacher signs in, sees what the activity log holds and saves
// it as studentlog.zip for the central page; and sees how this box keeps in step with central on its own
// (enrolled or not, what central confirmed, what waits), asks for a sync now, or enrols the box.
import {
  byId,
  call,
  currentLang,
  formatBytes,
  formatDate,
  initLanguage,
  initSignIn,
  msg,
  Offline,
  onLangChange,
  say,
  signOut,
  unexpected,
  type Lang,
  type Msg,
} from './common.js';
import { t } from './i18n.js';

interface Summary {
  learners: number;
  results: number;
  answers: number;
  progress: number;
  access: number;
  first: string | null;
  last: string | null;
  bytes: number;
  lastexport: { at: string; bytes: number; by: string | null } | null;
}

/** GET /fleet/state: the box's own record, never central's word for more than it acknowledged. */
interface SyncState {
  enrolled: boolean;
  agent: boolean;
  centralurl?: string;
  schoolid?: string;
  schoolname?: string | null;
  lastcontactat?: string | null;
  lastackat?: string | null;
  rowswaiting?: number;
  lastdownat?: string | null;
  lasterror?: string | null;
}

let token: string | null = null;
let summary: Summary | null = null;
let saving = false;
let sync: SyncState | null = null;
let syncing = false;

const session = {
  signedOut(): void {
    const given = token;
    token = null;
    summary = null;
    // The classroom forgets the session too; a failure here changes nothing for the page.
    if (given) void call('POST', '/auth/logout', { token: given, body: {} }).catch(() => undefined);
    byId<HTMLButtonElement>('save').disabled = true;
    sync = null;
    showSync();
    say(byId('sync-status'), []);
    say(byId('enrol-status'), []);
    byId('summary').hidden = true;
    byId('save-progress').hidden = true;
    byId('save-progress-label').hidden = true;
    say(byId('save-status'), []);
  },
};

function show(): void {
  const s = summary;
  const dl = byId('summary');
  dl.hidden = !s;
  if (!s) return;
  const l: Lang = currentLang();
  const n = (v: number) => new Intl.NumberFormat(l).format(v);
  byId('s-learners').textContent = n(s.learners);
  byId('s-results').textContent = n(s.results);
  byId('s-answers').textContent = n(s.answers);
  byId('s-progress').textContent = n(s.progress);
  byId('s-access').textContent = n(s.access);
  const dates = byId('s-dates');
  dates.textContent =
    s.first && s.last ? `${formatDate(l, s.first)} – ${formatDate(l, s.last)}` : t(l, 'summary.noDates');
  byId('s-size').textContent = formatBytes(l, s.bytes);
  const last = byId('s-last');
  say(last, [
    s.lastexport
      ? msg(
          'summary.lastBy',
          (x) => `${formatDate(x, s.lastexport!.at, true)} (${formatBytes(x, s.lastexport!.bytes)})`,
          s.lastexport.by ?? '?',
        )
      : msg('summary.never'),
  ]);
}

/** Reads the summary; answers the message to show instead when it cannot. */
async function loadSummary(): Promise<Msg | null> {
  const status = byId('summary-status');
  say(status, [msg('summary.loading')]);
  const a = await call('GET', '/export/log/summary', { token });
  if (a.status === 401 || a.status === 403) return msg('signin.notTeacher');
  if (a.status !== 200) return unexpected(a);
  summary = a.json?.data as Summary;
  say(status, []);
  show();
  byId<HTMLButtonElement>('save').disabled = false;
  return null;
}

/** GET /export/log into memory with progress, then handed to the browser as studentlog.zip. */
async function save(): Promise<void> {
  const button = byId<HTMLButtonElement>('save');
  const bar = byId<HTMLProgressElement>('save-progress');
  const status = byId('save-status');
  if (saving) return;
  saving = true;
  // aria-disabled rather than disabled: a focused button that is disabled drops the keyboard's focus.
  button.setAttribute('aria-disabled', 'true');
  bar.hidden = false;
  byId('save-progress-label').hidden = false;
  bar.removeAttribute('value');
  let received = 0;
  say(status, [msg('save.busy', (l) => formatBytes(l, received))]);
  try {
    let res: Response;
    try {
      res = await fetch('/export/log', {
        headers: { Authorization: `Bearer ${token}` },
        credentials: 'omit',
        cache: 'no-store',
      });
    } catch {
      throw new Offline();
    }
    if (res.status === 401) {
      signOut(session, msg('session.ended'));
      return;
    }
    if (res.status !== 200 || !res.body) {
      const json = (await res.json().catch(() => null)) as { errormessage?: string } | null;
      say(status, [unexpected({ status: res.status, json })], 'error');
      return;
    }
    // The size the summary measured is the size of this ZIP give or take the latest rows.
    const expected = summary?.bytes ?? 0;
    const reader = res.body.getReader();
    const parts: Uint8Array[] = [];
    let lastPaint = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parts.push(value);
      received += value.length;
      const now = Date.now();
      if (now - lastPaint > 250) {
        lastPaint = now;
        if (expected > 0) {
          bar.max = Math.max(expected, received);
          bar.value = received;
        }
        say(status, [msg('save.busy', (l) => formatBytes(l, received))]);
      }
    }
    bar.max = received || 1;
    bar.value = received;
    const url = URL.createObjectURL(new Blob(parts as BlobPart[], { type: 'application/zip' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'studentlog.zip';
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    const size = received;
    bar.hidden = true;
    byId('save-progress-label').hidden = true;
    say(status, [msg('save.done', (l) => formatBytes(l, size))], 'ok');
    await loadSummary();
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('save.failed', String(err))], 'error');
  } finally {
    saving = false;
    button.removeAttribute('aria-disabled');
    button.disabled = !token;
  }
}

/** The box's sync state as the teacher reads it. "In step" only when central acknowledged all of it. */
function showSync(): void {
  const s = sync;
  const facts = byId('sync-facts');
  const headline = byId('sync-headline');
  const now = byId<HTMLButtonElement>('sync-now');
  byId('enrol').hidden = !s || s.enrolled;
  facts.hidden = !s?.enrolled;
  now.hidden = !s?.enrolled;
  if (!s) { say(headline, []); return; }
  if (!s.enrolled) { say(headline, [msg('sync.notEnrolled')], 'warn'); return; }
  const l: Lang = currentLang();
  const when = (iso: string | null | undefined) => (iso ? formatDate(l, iso, true) : t(l, 'sync.never'));
  byId('y-school').textContent = s.schoolname ?? s.schoolid ?? '';
  byId('y-contact').textContent = when(s.lastcontactat);
  byId('y-ack').textContent = when(s.lastackat);
  const waiting = byId('y-waiting');
  waiting.textContent = t(l, 'sync.waitingN', [s.rowswaiting ?? 0]);
  waiting.className = s.rowswaiting ? 'waiting-some' : '';
  const error = byId('y-error');
  error.textContent = s.lasterror ?? t(l, 'sync.noError');
  error.className = s.lasterror ? 'lasterror' : '';
  // What the box wrote is at central only when central acknowledged all of it (the journal holds nothing
  // after central's last acknowledgement) in a contact it answered; a refused package is the last error's.
  const inStep = !s.rowswaiting && !!s.lastcontactat;
  say(headline, [msg('sync.enrolledAt', s.centralurl ?? ''),
    inStep ? msg('sync.inStep', (x) => formatDate(x, s.lastcontactat!, true)) : msg('sync.behind')],
  inStep && !s.lasterror ? 'ok' : 'warn');
  now.disabled = !s.agent;
  if (!s.agent) say(byId('sync-status'), [msg('sync.off')], 'warn');
}

/** Reads the box's sync state; a staff token the page already holds, so a refusal only says why. */
async function loadSync(): Promise<void> {
  const a = await call('GET', '/fleet/state', { token });
  if (a.status === 401) { signOut(session, msg('session.ended')); return; }
  if (a.status !== 200) { say(byId('sync-status'), [unexpected(a)], 'error'); return; }
  sync = a.json?.data as SyncState;
  showSync();
}

async function syncNow(): Promise<void> {
  const button = byId<HTMLButtonElement>('sync-now');
  const status = byId('sync-status');
  if (syncing) return;
  syncing = true;
  button.setAttribute('aria-disabled', 'true');
  say(status, [msg('sync.busy')]);
  try {
    const a = await call('POST', '/fleet/sync', { token, body: {} });
    if (a.status === 401) { signOut(session, msg('session.ended')); return; }
    if (a.status === 200) {
      sync = a.json?.data as SyncState;
      showSync();
      say(status, [msg('sync.done')], 'ok');
      return;
    }
    // What the run did get through (and the error it kept) shows in the state, before the words of the failure.
    await loadSync().catch(() => undefined);
    say(status, [a.json?.errormessage ? msg('sync.failed', a.json.errormessage) : unexpected(a)], 'error');
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  } finally {
    syncing = false;
    button.removeAttribute('aria-disabled');
  }
}

async function enrolBox(): Promise<void> {
  const status = byId('enrol-status');
  const button = byId<HTMLButtonElement>('e-button');
  const central = byId<HTMLInputElement>('e-central').value.trim();
  const code = byId<HTMLInputElement>('e-code');
  button.disabled = true;
  say(status, [msg('enrol.busy')]);
  try {
    const a = await call('POST', '/fleet/enrol', { token, body: { central, code: code.value.trim() } });
    if (a.status === 401) { signOut(session, msg('session.ended')); return; }
    if (a.status !== 200) {
      say(status, [a.json?.errormessage ? msg('enrol.failed', a.json.errormessage) : unexpected(a)], 'error');
      return;
    }
    code.value = '';
    const d = a.json?.data as { schoolname: string | null; schoolid: string };
    say(status, [msg('enrol.done', d.schoolname ?? d.schoolid)], 'ok');
    await loadSync();
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  } finally {
    button.disabled = false;
  }
}

initLanguage();
onLangChange(show);
onLangChange(showSync);
initSignIn({
  url: '/auth/login',
  body: (user, password) => ({ studentusername: user, studentpassword: password }),
  async accept(accessToken) {
    token = accessToken;
    const refused = await loadSummary().catch((err: unknown) =>
      err instanceof Offline ? msg('net.down') : msg('error.other', String(err)),
    );
    if (refused) {
      session.signedOut();
      say(byId('summary-status'), []);
      return refused;
    }
    await loadSync().catch((err: unknown) => say(byId('sync-status'),
      [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error'));
    return null;
  },
  signedOut: session.signedOut,
});
byId('save').addEventListener('click', () => { void save(); });
byId('sync-now').addEventListener('click', () => { void syncNow(); });
byId<HTMLFormElement>('enrol').addEventListener('submit', (e) => {
  e.preventDefault();
  if (token) void enrolBox();
});
