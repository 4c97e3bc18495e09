// The classroom server's /sync-log/ page: a teacher signs in, sees what the activity log holds and saves
// it as studentlog.zip for the central page.
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

let token: string | null = null;
let summary: Summary | null = null;
let saving = false;

const session = {
  signedOut(): void {
    const given = token;
    token = null;
    summary = null;
    // The classroom forgets the session too; a failure here changes nothing for the page.
    if (given) void call('POST', '/auth/logout', { token: given, body: {} }).catch(() => undefined);
    byId<HTMLButtonElement>('save').disabled = true;
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

initLanguage();
onLangChange(show);
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
    }
    return refused;
  },
  signedOut: session.signedOut,
});
byId('save').addEventListener('click', () => { void save(); });
