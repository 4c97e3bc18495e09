// What both log-sync pages share: the language (from the browser, switchable), messages that follow a
// switch of language, and the sign-in form. The access token is held by each page in a variable only:
// never in storage or a cookie, so closing the tab signs the teacher out.
import { browserLang, LANGS, t, type Arg, type Key, type Lang } from './i18n.js';

export { formatBytes, formatDate } from './i18n.js';
export type { Key, Lang } from './i18n.js';

let lang: Lang = browserLang(
  navigator.languages && navigator.languages.length ? navigator.languages : [navigator.language],
);
const listeners: Array<() => void> = [];

export const currentLang = (): Lang => lang;

/** A message: a key and its arguments, worked out again in the language of the moment. */
export interface Msg {
  key: Key;
  args: (l: Lang) => readonly Arg[];
}
export function msg(key: Key, ...args: Array<Arg | ((l: Lang) => Arg)>): Msg {
  return { key, args: (l) => args.map((a) => (typeof a === 'function' ? a(l) : a)) };
}

export type Tone = 'info' | 'ok' | 'warn' | 'error';
const shown = new Map<HTMLElement, { messages: Msg[]; tone: Tone }>();

function render(el: HTMLElement, messages: Msg[], tone: Tone): void {
  el.className = `status ${tone}`;
  el.replaceChildren(...messages.map((m) => {
    const p = document.createElement('p');
    p.textContent = t(lang, m.key, m.args(lang));
    return p;
  }));
}

/** Shows messages in a status element (an aria-live region); an empty list clears it. */
export function say(el: HTMLElement, messages: Msg[], tone: Tone = 'info'): void {
  if (messages.length) shown.set(el, { messages, tone });
  else shown.delete(el);
  render(el, messages, tone);
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`#${id} is missing`);
  return el as T;
}

function applyLang(): void {
  document.documentElement.lang = lang;
  document.querySelectorAll<HTMLElement>('[data-t]').forEach((el) => {
    el.textContent = t(lang, el.dataset.t as Key);
  });
  const title = document.querySelector<HTMLElement>('h1[data-t]');
  if (title) document.title = title.textContent ?? document.title;
  for (const [el, s] of shown) render(el, s.messages, s.tone);
  for (const f of listeners) f();
}

/** Runs `f` after every change of language (for parts a page draws itself). */
export function onLangChange(f: () => void): void {
  listeners.push(f);
}

export function initLanguage(): void {
  const select = byId<HTMLSelectElement>('lang');
  select.value = lang;
  select.addEventListener('change', () => {
    if ((LANGS as readonly string[]).includes(select.value)) lang = select.value as Lang;
    applyLang();
  });
  applyLang();
}

export interface Answer {
  status: number;
  json: { error?: boolean; errormessage?: string; data?: unknown } | null;
  headers: Headers;
}

export class Offline extends Error {}

/** A JSON request to the page's own server; a network failure is an `Offline`. */
export async function call(
  method: string,
  url: string,
  o: { token?: string | null; body?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (o.token) headers.Authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: o.body === undefined ? undefined : JSON.stringify(o.body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new Offline();
  }
  const json = (await res.json().catch(() => null)) as Answer['json'];
  return { status: res.status, json, headers: res.headers };
}

/** What to tell the teacher about an answer no page expected. */
export function unexpected(a: { status: number; json?: Answer['json'] }): Msg {
  if (a.status === 401) return msg('session.ended');
  return msg('error.other', a.json?.errormessage ? `${a.json.errormessage}, HTTP ${a.status}` : `HTTP ${a.status}`);
}

export interface SignIn {
  /** The server's sign-in route and its body. */
  url: string;
  body: (user: string, password: string) => unknown;
  /** Called with the new token; answers the message to show when the account cannot use the page. */
  accept: (token: string, user: string) => Promise<Msg | null>;
  /** Called once the teacher signs out (the token is already forgotten). */
  signedOut: () => void;
}

/** Wires the shared sign-in form (#signin) and the sign-out button (#signout) of the work section (#work). */
export function initSignIn(o: SignIn): void {
  const form = byId<HTMLFormElement>('signin');
  const status = byId('signin-status');
  const user = byId<HTMLInputElement>('user');
  const password = byId<HTMLInputElement>('password');
  const submit = form.querySelector('button[type=submit]') as HTMLButtonElement;
  const work = byId('work');
  let busy = false;

  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (busy) return;
    const name = user.value.trim();
    if (!name || !password.value) {
      (name ? password : user).focus();
      say(status, [msg('signin.wrong')], 'error');
      return;
    }
    busy = true;
    submit.disabled = true;
    say(status, [msg('signin.busy')]);
    void (async () => {
      try {
        const a = await call('POST', o.url, { body: o.body(name, password.value) });
        const token = (a.json?.data as { accessToken?: unknown } | undefined)?.accessToken;
        if (a.status !== 200 || typeof token !== 'string') {
          say(status, [a.status === 400 ? msg('signin.wrong') : unexpected(a)], 'error');
          password.select();
          password.focus();
          return;
        }
        const refused = await o.accept(token, name);
        if (refused) {
          say(status, [refused], 'error');
          return;
        }
        password.value = '';
        say(status, []);
        form.hidden = true;
        work.hidden = false;
        byId('who').dataset.user = name;
        say(byId('who'), [msg('signin.as', name)]);
        byId('work-title').focus();
      } catch (err) {
        say(status, [err instanceof Offline ? msg('net.down') : msg('error.other', String(err))], 'error');
      } finally {
        busy = false;
        submit.disabled = false;
      }
    })();
  });

  byId('signout').addEventListener('click', () => signOut(o));
}

/** Back to the sign-in form, the page's token forgotten by its owner in `signedOut`. */
export function signOut(o: Pick<SignIn, 'signedOut'>, reason?: Msg): void {
  o.signedOut();
  byId('work').hidden = true;
  byId<HTMLFormElement>('signin').hidden = false;
  say(byId('signin-status'), reason ? [reason] : [], reason ? 'error' : 'info');
  byId('user').focus();
}
