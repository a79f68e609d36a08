/**
 * The UI's only way to the server: vexil's public HTTP API, same origin. Adds the pasted client
 * token (Bearer) when there is one, the CSRF double-submit header on unsafe requests made with
 * the session cookie, and turns error bodies `{code, message}` into ApiError. A 401 anywhere
 * sends the person to the login page (the `onUnauthenticated` hook set by the app).
 */
import { cookieValue } from './lib/cookies.js';
import { readToken } from './lib/session-token.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

let onUnauthenticated: () => void = () => {};

export function setUnauthenticatedHandler(fn: () => void): void {
  onUnauthenticated = fn;
}

function headersFor(method: string, body: unknown): Headers {
  const h = new Headers({ Accept: 'application/json' });
  if (body !== undefined) h.set('Content-Type', 'application/json');
  const token = readToken(sessionStorage);
  if (token !== undefined) h.set('Authorization', `Bearer ${token}`);
  else if (method !== 'GET' && method !== 'HEAD') {
    const csrf = cookieValue(document.cookie, 'svc_csrf_token');
    if (csrf !== undefined) h.set('X-CSRF-Token', csrf);
  }
  return h;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT';
  body?: unknown;
  /** Do not redirect to the login page on 401 (the login page's own probes). */
  quiet401?: boolean;
  signal?: AbortSignal;
}

export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? 'GET';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers: headersFor(method, opts.body),
      credentials: 'same-origin',
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw new ApiError(0, undefined, 'the server cannot be reached');
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    if (res.status === 401 && !opts.quiet401) onUnauthenticated();
    const e = (json ?? {}) as { code?: number; message?: string };
    throw new ApiError(res.status, typeof e.code === 'number' ? e.code : undefined, typeof e.message === 'string' ? e.message : `HTTP ${res.status}`);
  }
  return json as T;
}

/** `path?k=v&…`, leaving out empty values. */
export function withQuery(path: string, params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? path : `${path}?${s}`;
}
