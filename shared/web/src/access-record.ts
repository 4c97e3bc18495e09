// Central's /access-record/ page: a superadmin reads the access record of learner data (GET /accessrecord),
// filtered and a page at a time, downloads what the filter holds (GET /accessrecord/download) and verifies
// the hash chain (GET /accessrecord/verify). The record holds ids, routes and addresses, never a learner's
// personal data, so nothing here can show any.
import {
  byId, call, currentLang, formatBytes, initLanguage, initSignIn, msg, Offline, onLangChange, say, signOut,
  unexpected, type Msg,
} from './common.js';
import { t, type Key, type Lang } from './i18n.js';

/** One entry as GET /accessrecord answers it. */
interface Entry {
  id: number;
  at: string;
  accountid: string | null;
  accountkind: string;
  method: string;
  route: string;
  path: string;
  client: string | null;
  stage: string;
  outcome: number | null;
  learnercount: number | null;
  filter: string | null;
  hash: string;
  studentids: string[];
}
interface Listing { total: number; pageindex: number; pagesize: number; rows: Entry[] }
interface Verified {
  ok: boolean;
  checked: number;
  firstid: number | null;
  lastid: number | null;
  broken?: { id: number; reason: string };
}
type Filters = Partial<Record<'accountid' | 'studentid' | 'route' | 'from' | 'to', string>>;

const PAGE_SIZE = 25;
/** Learner ids drawn in one cell at most; a bulk answer's full list is in the download. */
const IDS_SHOWN = 30;

let token: string | null = null;
let applied: Filters = {};
let pageindex = 0;
let listing: Listing | null = null;
let brokenId: number | null = null;
let busy = false;
const routesSeen = new Set<string>();

const STAGES: Record<string, Key> = {
  answered: 'ar.stage.answered',
  'download started': 'ar.stage.started',
  'download finished': 'ar.stage.finished',
  'download cut': 'ar.stage.cut',
  'download failed': 'ar.stage.failed',
};
const KINDS: Record<string, Key> = {
  staff: 'ar.kind.staff', school: 'ar.kind.school', apikey: 'ar.kind.apikey', synckey: 'ar.kind.synckey',
  box: 'ar.kind.box', token: 'ar.kind.token', anonymous: 'ar.kind.anonymous', cli: 'ar.kind.cli',
};
// The two reasons central's verify gives, by a word each holds; any other is shown as central wrote it.
const REASONS: Array<[RegExp, Key]> = [[/prevhash/, 'ar.verify.prev'], [/columns or learners/, 'ar.verify.hash']];

const session = {
  signedOut(): void {
    const given = token;
    token = null;
    listing = null;
    brokenId = null;
    pageindex = 0;
    // Central forgets the session too; a failure here changes nothing for the page.
    if (given) void call('POST', '/auth/logout', { token: given, body: {} }).catch(() => undefined);
    byId('rows').replaceChildren();
    byId('entries').hidden = true;
    for (const id of ['list-status', 'download-status', 'verify-status']) say(byId(id), []);
  },
};

const query = (f: Filters, extra: Record<string, string | number>): string => {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) p.set(k, v);
  for (const [k, v] of Object.entries(extra)) p.set(k, String(v));
  return p.toString();
};

/** A day of the date inputs as the API's ISO time: its start, or for "to" the start of the next day (excluded). */
function dayStart(day: string, next = false): string {
  const d = new Date(`${day}T00:00:00.000Z`);
  if (next) d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString();
}

/** The filter the form holds, or a message saying what is wrong with it. */
function formFilters(): Filters | Msg {
  const v = (id: string) => byId<HTMLInputElement>(id).value.trim();
  const from = v('f-from');
  const to = v('f-to');
  if (from && to && from > to) return msg('ar.f.badDates');
  const f: Filters = { accountid: v('f-account'), studentid: v('f-learner'), route: v('f-route') };
  if (from) f.from = dayStart(from);
  if (to) f.to = dayStart(to, true);
  return f;
}

/** Tells the person about an answer that is not the one asked for; a 401 signs the page out. */
function failed(el: HTMLElement, a: { status: number; json?: { errormessage?: string } | null }): void {
  if (a.status === 401) {
    signOut(session, msg('session.ended'));
    return;
  }
  say(el, [a.status === 403 ? msg('ar.notSuper') : unexpected(a)], 'error');
}

/** Reads the page of entries; at sign-in (`first`) a refusal is answered, for the sign-in form to show. */
async function load(first = false): Promise<Msg | null> {
  const status = byId('list-status');
  say(status, [msg('ar.loading')]);
  const a = await call('GET', `/accessrecord?${query(applied, { pageindex, pagesize: PAGE_SIZE })}`, { token });
  if (a.status !== 200) {
    if (first) return a.status === 403 ? msg('ar.notSuper') : unexpected(a);
    failed(status, a);
    return null;
  }
  listing = a.json?.data as Listing;
  for (const r of listing.rows) routesSeen.add(r.route);
  draw();
  return null;
}

function cell(tr: HTMLTableRowElement, label: Key, ...parts: Array<Node | string>): void {
  const td = document.createElement('td');
  td.dataset.label = t(currentLang(), label);
  const div = document.createElement('div');
  div.append(...parts);
  td.append(div);
  tr.append(td);
}

function span(text: string, cls?: string): HTMLSpanElement {
  const s = document.createElement('span');
  if (cls) s.className = cls;
  s.textContent = text;
  return s;
}

function row(l: Lang, r: Entry): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.id = String(r.id);
  const time = new Date(r.at);
  const when = Number.isNaN(time.getTime()) ? r.at : `${time.toISOString().slice(0, 19).replace('T', ' ')}`;
  cell(tr, 'ar.c.time', span(when), span(`#${r.id}`, 'sub'));
  const kind = KINDS[r.accountkind] ? t(l, KINDS[r.accountkind]) : r.accountkind;
  cell(tr, 'ar.c.account', span(r.accountid ?? '—', 'ids'), span(kind, 'sub'));
  cell(tr, 'ar.c.route', `${r.method} ${r.route}`);
  const path: Array<Node | string> = [span(r.path, 'ids')];
  if (r.filter) path.push(span(t(l, 'ar.filterOf', [r.filter]), 'sub'));
  cell(tr, 'ar.c.path', ...path);
  cell(tr, 'ar.c.client', r.client ?? '—');
  cell(tr, 'ar.c.stage', STAGES[r.stage] ? t(l, STAGES[r.stage]) : r.stage);
  cell(tr, 'ar.c.outcome', r.outcome === null ? '—' : String(r.outcome));
  const learners: Array<Node | string> = [];
  if (r.learnercount === null && !r.studentids.length) learners.push('—');
  else {
    learners.push(span(t(l, 'ar.learners.n', [r.learnercount ?? r.studentids.length])));
    if (r.studentids.length) {
      const ids = span('', 'sub ids');
      // One id a line, never broken inside: an id is copied whole into the learner filter.
      ids.append(...r.studentids.slice(0, IDS_SHOWN).map((id) => span(id, 'id')));
      learners.push(ids);
    }
    if (r.studentids.length > IDS_SHOWN) {
      learners.push(span(t(l, 'ar.learners.more', [r.studentids.length - IDS_SHOWN]), 'sub'));
    }
  }
  cell(tr, 'ar.c.learners', ...learners);
  const hash = span(r.hash.slice(0, 12), 'ids');
  hash.title = r.hash;
  const hashParts: Array<Node | string> = [hash];
  if (r.id === brokenId) {
    tr.className = 'broken';
    hashParts.push(span(t(l, 'ar.brokenRow'), 'sub flag'));
  }
  cell(tr, 'ar.c.hash', ...hashParts);
  return tr;
}

/** The table, pager and routes seen, in the language of the moment. */
function draw(): void {
  const list = byId('routes');
  list.replaceChildren(...[...routesSeen].sort().map((r) => {
    const o = document.createElement('option');
    o.value = r;
    return o;
  }));
  const l = currentLang();
  const s = listing;
  const status = byId('list-status');
  const prev = byId<HTMLButtonElement>('prev');
  const next = byId<HTMLButtonElement>('next');
  if (!s) return;
  byId('rows').replaceChildren(...s.rows.map((r) => row(l, r)));
  byId('entries').hidden = !s.rows.length;
  const first = s.pageindex * s.pagesize;
  if (!s.rows.length) say(status, [msg('ar.none')]);
  else say(status, [msg('ar.range', String(first + 1), String(first + s.rows.length), s.total)]);
  prev.disabled = busy || s.pageindex === 0;
  next.disabled = busy || first + s.rows.length >= s.total;
}

/** Runs one request of the page at a time, its failure to reach central said in `el`. */
async function run(el: HTMLElement, f: () => Promise<void>): Promise<void> {
  if (busy || !token) return;
  busy = true;
  try {
    await f();
  } catch (err) {
    say(el, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
  } finally {
    busy = false;
    if (listing) draw();
  }
}

function show(): void {
  const status = byId('list-status');
  const f = formFilters();
  if ('key' in f) {
    say(status, [f], 'error');
    return;
  }
  void run(status, async () => {
    applied = f;
    pageindex = 0;
    brokenId = null;
    await load();
  });
}

function turn(by: number): void {
  void run(byId('list-status'), async () => {
    pageindex = Math.max(0, pageindex + by);
    await load();
  });
}

/** The file name central gives the download, from its Content-Disposition. */
function fileName(headers: Headers, format: string): string {
  const m = /filename="([^"]+)"/.exec(headers.get('Content-Disposition') ?? '');
  return m ? m[1] : `accessrecord.${format}`;
}

function download(format: 'csv' | 'ndjson'): void {
  const status = byId('download-status');
  void run(status, async () => {
    say(status, [msg('ar.dl.busy')]);
    let res: Response;
    try {
      // fetch rather than a link: the token goes in the Authorization header, never in an address.
      res = await fetch(`/accessrecord/download?${query(applied, { format })}`, {
        headers: { Authorization: `Bearer ${token}` }, credentials: 'omit', cache: 'no-store',
      });
    } catch {
      throw new Offline();
    }
    if (res.status !== 200) {
      const json = (await res.json().catch(() => null)) as { errormessage?: string } | null;
      failed(status, { status: res.status, json });
      return;
    }
    const blob = await res.blob();
    const name = fileName(res.headers, format);
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    a.href = url;
    a.download = name;
    a.hidden = true;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
    say(status, [msg('ar.dl.done', name, (l) => formatBytes(l, blob.size))], 'ok');
  });
}

function verify(): void {
  const status = byId('verify-status');
  void run(status, async () => {
    say(status, [msg('ar.verify.busy')]);
    const a = await call('GET', '/accessrecord/verify', { token });
    if (a.status !== 200) {
      failed(status, a);
      return;
    }
    const v = a.json?.data as Verified;
    if (v.ok) {
      brokenId = null;
      say(status, [v.checked
        ? msg('ar.verify.ok', v.checked, String(v.firstid), String(v.lastid))
        : msg('ar.verify.empty')], 'ok');
      return;
    }
    const broken = v.broken ?? { id: 0, reason: '' };
    brokenId = broken.id;
    const known = REASONS.find(([re]) => re.test(broken.reason));
    say(status, [msg('ar.verify.broken', String(broken.id), (l) => (known ? t(l, known[1]) : broken.reason),
      v.checked)], 'error');
  });
}

initLanguage();
onLangChange(draw);
initSignIn({
  url: '/auth/login',
  body: (user, password) => ({ lmsusername: user, lmsuserpassword: password }),
  async accept(accessToken) {
    token = accessToken;
    applied = {};
    pageindex = 0;
    // The first page says whether the account may read the record: central answers 403 to anyone but a superadmin.
    const refused = await load(true).catch((err: unknown) =>
      err instanceof Offline ? msg('net.down') : msg('error.other', String(err)),
    );
    if (refused) session.signedOut();
    return refused;
  },
  signedOut: session.signedOut,
});
byId<HTMLFormElement>('filters').addEventListener('submit', (e) => {
  e.preventDefault();
  show();
});
byId('clear').addEventListener('click', () => {
  byId<HTMLFormElement>('filters').reset();
  show();
});
byId('prev').addEventListener('click', () => turn(-1));
byId('next').addEventListener('click', () => turn(1));
byId('download-csv').addEventListener('click', () => download('csv'));
byId('download-ndjson').addEventListener('click', () => download('ndjson'));
byId('verify').addEventListener('click', verify);
