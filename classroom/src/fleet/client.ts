import {
  ENROL_SCHEME,
  FLEET_PROTOCOL,
  boxAuthorization,
  type ContactAnswer,
  type ContactBody,
  type EnrolAnswer,
  type EnrolBody,
} from '@lms/shared';

/**
 * The box's side of the fleet protocol (docs/fleet-protocol.md), over fetch. The box always dials out:
 * central never reaches a box, so a box behind NAT works as any other.
 */

/** A refusal or failure, with central's own words when it answered (`status` 0: no answer at all). */
export class FleetError extends Error {
  constructor(readonly status: number, message: string, readonly retryAfterSeconds?: number) {
    super(message);
    this.name = 'FleetError';
  }
}

export interface ClientOptions {
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** The central URL a person typed, as the client uses it (no trailing slash; http(s) only). */
export function centralBase(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new FleetError(0, `Not a URL: ${url}`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new FleetError(0, `Not an http(s) URL: ${url}`);
  return u.toString().replace(/\/+$/, '');
}

/** Whether a URL's host is this machine (where plain http carries no secret over a network). */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\./.test(host);
}

/** One request to central; answers its envelope's data, or throws a FleetError in central's words. */
export async function request<T>(
  base: string, method: 'GET' | 'POST', path: string, authorization: string, body: unknown, o: ClientOptions,
): Promise<T> {
  const f = o.fetch ?? fetch;
  let res: Response;
  try {
    res = await f(`${base}${path}`, {
      method,
      headers: { Authorization: authorization, Accept: 'application/json',
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(o.timeoutMs),
    });
  } catch (err) {
    const why = (err as { name?: string }).name === 'TimeoutError' ? `no answer within ${o.timeoutMs / 1000} s`
      : ((err as { cause?: { code?: string } }).cause?.code ?? (err as Error).message);
    throw new FleetError(0, `Central at ${base} could not be reached (${why})`);
  }
  const text = await res.text();
  let parsed: { error?: boolean; errormessage?: string; data?: unknown } | undefined;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (!res.ok || !parsed || parsed.error) {
    const retry = Number(res.headers.get('retry-after'));
    const words = parsed?.errormessage ?? `central answered ${res.status} ${res.statusText}`;
    throw new FleetError(res.status || 0, words, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  }
  return parsed.data as T;
}

const post = <T>(base: string, path: string, authorization: string, body: unknown, o: ClientOptions) =>
  request<T>(base, 'POST', path, authorization, body, o);

/** Exchanges a one-time code for this box's own credential: central keeps only the secret's SHA-256. */
export function enrol(base: string, code: string, body: Omit<EnrolBody, 'protocol'>, o: ClientOptions):
  Promise<EnrolAnswer> {
  return post(base, '/fleet/enrol', `${ENROL_SCHEME} ${code}`, { ...body, protocol: FLEET_PROTOCOL }, o);
}

/** One contact: the box's report; central answers its time and the skew it measured. */
export function contact(
  base: string, box: { boxid: string; secret: string }, body: Omit<ContactBody, 'protocol'>, o: ClientOptions,
): Promise<ContactAnswer> {
  return post(base, '/fleet/box/contact', boxAuthorization(box.boxid, box.secret),
    { ...body, protocol: FLEET_PROTOCOL }, o);
}
