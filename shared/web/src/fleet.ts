// Central's /fleet/ page: an operator (or an administrator narrowed to some schools) lists the classroom
// boxes of the schools the API lets them see, registers a box and reads its one-time code, gives a box a new
// code, and revokes a box. The API's scope is the truth: the page shows only what GET /fleet/boxes answers.
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
  type Answer,
  type Key,
  type Lang,
  type Msg,
} from './common.js';
import { t } from './i18n.js';
import { encode } from './qr.js';

interface Box {
  boxid: string;
  schoolid: string;
  schoolname: string | null;
  name: string;
  state: 'registered' | 'enrolled' | 'revoked';
  lastcontactat: string | null;
  version: string | null;
  clockskewms: number | null;
  freediskbytes: number | null;
  lasterror: string | null;
  enrolcodeexpiresat: string | null;
  rowswaiting: number | null;
  failures: number;
  lastgoodat: string | null;
}
interface School { schoolid: string; schoolname: string }
interface CodeAnswer { box: Box; enrolmentcode: string; expiresat: string }

const STATES = ['registered', 'enrolled', 'revoked'] as const;
const PAGE_SIZE = 200;
const SVG = 'http://www.w3.org/2000/svg';

let token: string | null = null;
let boxes: Box[] = [];
let total = 0;
let schools: School[] = [];
/** The box whose revocation waits for a confirmation. */
let revoking: Box | null = null;
/** The code on show (until hidden): the page's memory is the only place it is kept. */
let shownCode: CodeAnswer | null = null;

const session = {
  signedOut(): void {
    token = null;
    boxes = [];
    schools = [];
    revoking = null;
    hideCode();
    byId('confirm').hidden = true;
    byId('boxes').replaceChildren();
    say(byId('fleet-status'), []);
    say(byId('register-status'), []);
  },
};

/** A refusal of the API in words: what the person can do about it. */
function refusal(a: Answer): Msg {
  if (a.status === 403) return msg('refused.forbidden');
  if (a.status === 404) return msg('refused.notFound');
  if (a.status === 400) return msg('refused.invalid', a.json?.errormessage ?? 'HTTP 400');
  return unexpected(a);
}

/** Says why, or signs out when central says the sign-in has ended. */
function refused(where: HTMLElement, a: Answer): void {
  if (a.status === 401) {
    signOut(session, msg('session.ended'));
    return;
  }
  say(where, [refusal(a)], 'error');
}

function duration(l: Lang, ms: number): string {
  const min = Math.round(ms / 60_000);
  if (min < 120) return t(l, 'dur.min', [min]);
  const h = Math.round(min / 60);
  if (h < 48) return t(l, 'dur.h', [h]);
  return t(l, 'dur.d', [Math.round(h / 24)]);
}

function skew(l: Lang, ms: number | null): string {
  if (ms === null) return t(l, 'box.notReported');
  if (Math.abs(ms) < 60_000) return t(l, 'skew.ok');
  // central's time minus the box's: a positive skew is a box whose clock is behind.
  return t(l, ms > 0 ? 'skew.behind' : 'skew.ahead', [duration(l, Math.abs(ms))]);
}

function field(dl: HTMLElement, label: Key, value: string, cls = ''): void {
  const row = document.createElement('div');
  const dt = document.createElement('dt');
  dt.textContent = t(currentLang(), label);
  const dd = document.createElement('dd');
  dd.textContent = value;
  if (cls) dd.className = cls;
  row.append(dt, dd);
  dl.append(row);
}

function button(label: Key, cls: string, onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = cls;
  b.textContent = t(currentLang(), label);
  b.addEventListener('click', onClick);
  return b;
}

function drawBoxes(): void {
  const l = currentLang();
  const when = (iso: string | null) => (iso ? formatDate(l, iso, true) : t(l, 'box.never'));
  const list = byId('boxes');
  list.replaceChildren(...boxes.map((b) => {
    const card = document.createElement('article');
    card.className = `box ${b.state}`;
    card.dataset.boxid = b.boxid;
    const h = document.createElement('h3');
    h.textContent = b.name;
    const dl = document.createElement('dl');
    field(dl, 'box.school', b.schoolname ?? b.schoolid);
    field(dl, 'box.state', t(l, `state.${b.state}` as Key), 'state');
    field(dl, 'box.version', b.version ?? t(l, 'box.notReported'));
    field(dl, 'box.lastContact', when(b.lastcontactat));
    field(dl, 'box.lastGood', when(b.lastgoodat));
    field(dl, 'box.waiting', b.rowswaiting === null ? t(l, 'box.notReported')
      : new Intl.NumberFormat(l).format(b.rowswaiting), 'waiting');
    field(dl, 'box.disk', b.freediskbytes === null ? t(l, 'box.notReported') : formatBytes(l, b.freediskbytes));
    field(dl, 'box.skew', skew(l, b.clockskewms));
    field(dl, 'box.failures', new Intl.NumberFormat(l).format(b.failures));
    field(dl, 'box.lastError', b.lasterror ?? t(l, 'box.noError'), b.lasterror ? 'lasterror' : '');
    card.append(h, dl);
    if (b.enrolcodeexpiresat) {
      const p = document.createElement('p');
      p.className = 'note';
      p.textContent = t(l, 'box.codeWaits', [formatDate(l, b.enrolcodeexpiresat, true)]);
      card.append(p);
    }
    const actions = document.createElement('div');
    actions.className = 'actions';
    actions.append(button('box.newCode', 'quiet new-code', () => void newCode(b)));
    if (b.state !== 'revoked') actions.append(button('box.revoke', 'quiet revoke', () => askRevoke(b)));
    card.append(actions);
    return card;
  }));
  const status = byId('fleet-status');
  if (!boxes.length) say(status, [msg('fleet.none')]);
  else if (total > boxes.length) say(status, [msg('fleet.countSome', boxes.length, total)]);
  else say(status, [msg('fleet.count', total)]);
}

function option(value: string, text: string): HTMLOptionElement {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

/** The school and state choices, in the language of the moment, keeping what is chosen. */
function drawChoices(): void {
  const l = currentLang();
  for (const [id, all] of [['f-school', true], ['r-school', false]] as const) {
    const select = byId<HTMLSelectElement>(id);
    const chosen = select.value;
    select.replaceChildren(
      ...(all ? [option('', t(l, 'fleet.filter.all'))] : []),
      ...schools.map((s) => option(s.schoolid, s.schoolname)),
    );
    if ([...select.options].some((o) => o.value === chosen)) select.value = chosen;
  }
  const state = byId<HTMLSelectElement>('f-state');
  const chosen = state.value;
  state.replaceChildren(option('', t(l, 'fleet.filter.all')),
    ...STATES.map((s) => option(s, t(l, `state.${s}` as Key))));
  state.value = chosen;
  byId<HTMLButtonElement>('r-button').disabled = !schools.length;
  say(byId('register-status'), schools.length ? [] : [msg('register.noSchools')]);
}

async function loadBoxes(): Promise<Answer> {
  const q = new URLSearchParams({ pagesize: String(PAGE_SIZE) });
  const school = byId<HTMLSelectElement>('f-school').value;
  const state = byId<HTMLSelectElement>('f-state').value;
  if (school) q.set('schoolid', school);
  if (state) q.set('state', state);
  const a = await call('GET', `/fleet/boxes?${q}`, { token });
  if (a.status === 200) {
    const data = a.json?.data as { boxes: Box[]; total: number };
    boxes = data.boxes;
    total = data.total;
    drawBoxes();
  }
  return a;
}

async function refresh(): Promise<void> {
  try {
    const a = await loadBoxes();
    if (a.status !== 200) refused(byId('fleet-status'), a);
  } catch (err) {
    say(byId('fleet-status'), [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  }
}

/** The QR code of `text` as SVG drawn from the encoder's modules (no image URL: the policy allows none). */
function qrSvg(text: string): SVGSVGElement {
  const qr = encode(text, { ecc: 'M', border: 4 });
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${qr.size} ${qr.size}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', t(currentLang(), 'code.qr'));
  svg.setAttribute('shape-rendering', 'crispEdges');
  svg.dataset.text = text;
  const back = document.createElementNS(SVG, 'rect');
  back.setAttribute('width', String(qr.size));
  back.setAttribute('height', String(qr.size));
  back.setAttribute('fill', '#fff');
  let d = '';
  qr.data.forEach((row, y) => row.forEach((dark, x) => { if (dark) d += `M${x} ${y}h1v1h-1z`; }));
  const dots = document.createElementNS(SVG, 'path');
  dots.setAttribute('d', d);
  dots.setAttribute('fill', '#000');
  svg.append(back, dots);
  return svg;
}

/** The code, once: held only in the page until hidden, never asked of central again. */
function showCode(a: CodeAnswer): void {
  shownCode = a;
  const l = currentLang();
  byId('code-title').textContent = t(l, 'code.title', [a.box.name]);
  byId('code').textContent = a.enrolmentcode;
  byId('qr').replaceChildren(qrSvg(a.enrolmentcode));
  say(byId('code-once'), [msg('code.once', (x) => formatDate(x, a.expiresat, true))], 'warn');
  say(byId('code-how'), [msg('code.how', location.origin, a.enrolmentcode)]);
  byId('code-panel').hidden = false;
  byId('code-title').focus();
}

function hideCode(): void {
  shownCode = null;
  byId('code-panel').hidden = true;
  byId('code').textContent = '';
  byId('qr').replaceChildren();
  say(byId('code-once'), []);
  say(byId('code-how'), []);
}

async function register(): Promise<void> {
  const status = byId('register-status');
  const school = byId<HTMLSelectElement>('r-school').value;
  const name = byId<HTMLInputElement>('r-name');
  if (!school) { say(status, [msg('register.pickSchool')], 'error'); return; }
  if (!name.value.trim()) { say(status, [msg('register.needName')], 'error'); name.focus(); return; }
  const submit = byId<HTMLButtonElement>('r-button');
  submit.disabled = true;
  say(status, [msg('register.busy')]);
  try {
    const a = await call('POST', '/fleet/boxes', { token, body: { schoolid: school, name: name.value.trim() } });
    if (a.status !== 201) { refused(status, a); return; }
    say(status, []);
    name.value = '';
    await loadBoxes();
    showCode(a.json?.data as CodeAnswer);
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  } finally {
    submit.disabled = !token || !schools.length;
  }
}

async function newCode(b: Box): Promise<void> {
  const status = byId('fleet-status');
  try {
    const a = await call('POST', `/fleet/boxes/${b.boxid}/code`, { token });
    if (a.status !== 200) { refused(status, a); return; }
    await loadBoxes();
    say(status, [msg('newCode.done', b.name)], 'ok');
    showCode(a.json?.data as CodeAnswer);
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  }
}

function askRevoke(b: Box): void {
  revoking = b;
  say(byId('confirm-text'), [msg('revoke.confirm', b.name)], 'warn');
  byId('confirm').hidden = false;
  byId('confirm-no').focus();
}

async function revoke(): Promise<void> {
  const b = revoking;
  revoking = null;
  byId('confirm').hidden = true;
  if (!b) return;
  const status = byId('fleet-status');
  try {
    const a = await call('POST', `/fleet/boxes/${b.boxid}/revoke`, { token });
    if (a.status !== 200) { refused(status, a); return; }
    await loadBoxes();
    say(status, [msg('revoke.done', b.name)], 'ok');
  } catch (err) {
    say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  }
}

initLanguage();
onLangChange(() => {
  if (!token) return;
  drawChoices();
  drawBoxes();
  if (shownCode) {
    byId('code-title').textContent = t(currentLang(), 'code.title', [shownCode.box.name]);
    byId('qr').querySelector('svg')?.setAttribute('aria-label', t(currentLang(), 'code.qr'));
  }
});
initSignIn({
  url: '/auth/login',
  body: (user, password) => ({ lmsusername: user, lmsuserpassword: password }),
  async accept(accessToken) {
    token = accessToken;
    try {
      const a = await loadBoxes();
      if (a.status === 403 || a.status === 401) {
        token = null;
        return msg('fleet.notAllowed');
      }
      if (a.status !== 200) {
        token = null;
        return unexpected(a);
      }
      const s = await call('GET', '/school/all', { token });
      schools = s.status === 200 ? ((s.json?.data as School[]) ?? []) : [];
      drawChoices();
      return null;
    } catch (err) {
      token = null;
      return err instanceof Offline ? msg('net.down') : msg('error.other', String(err));
    }
  },
  signedOut: session.signedOut,
});
byId('f-school').addEventListener('change', () => void refresh());
byId('f-state').addEventListener('change', () => void refresh());
byId<HTMLFormElement>('register').addEventListener('submit', (e) => {
  e.preventDefault();
  if (token) void register();
});
byId('code-done').addEventListener('click', hideCode);
byId('confirm-yes').addEventListener('click', () => void revoke());
byId('confirm-no').addEventListener('click', () => {
  revoking = null;
  byId('confirm').hidden = true;
});
