/**
 * One HTTP request to a code host's REST API (GitHub, GitLab) for `vexil comment`: JSON in and
 * out, the credential header added here and nowhere else, a bounded answer size, and the
 * rate-limit answers of both hosts waited out a bounded number of times. A refused credential
 * (401/403 that is not a rate limit) is an ApiError that names the status and the host's message,
 * never the token: the token only ever travels in the header.
 */

/** Answers larger than this are refused unread (a page of 100 comments of 65,536 characters fits). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Rate-limit answers waited out per request before giving up. */
export const MAX_RATE_LIMIT_RETRIES = 2;
/** A wait the host asks for beyond this is not waited: the command fails and says how long. */
export const MAX_RATE_LIMIT_WAIT_MS = 60_000;

export class ApiError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
  }
}

export interface ApiClient {
  /** `headers`: the credential and the host's fixed headers. */
  readonly headers: Readonly<Record<string, string>>;
  /** For error messages: `GitHub`, `GitLab`. */
  readonly host: string;
  /** Waits `ms` (tests of the retry pass a clock that does not sleep long). */
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface ApiAnswer<T> {
  readonly body: T;
  readonly headers: Headers;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function apiRequest<T>(client: ApiClient, method: string, url: string, body?: unknown): Promise<ApiAnswer<T>> {
  const sleep = client.sleep ?? defaultSleep;
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: { ...client.headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        redirect: 'error',
      });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message;
      throw new ApiError(`${client.host} API unreachable: ${method} ${redact(url)}: ${cause ?? (err as Error).message}`, 0);
    }
    const wait = rateLimitWait(res);
    if (wait !== undefined) {
      await res.body?.cancel();
      if (attempt >= MAX_RATE_LIMIT_RETRIES || wait > MAX_RATE_LIMIT_WAIT_MS) {
        throw new ApiError(
          `${client.host} API rate limit: ${method} ${redact(url)} answered ${res.status}${attempt > 0 ? ` after ${attempt} retr${attempt === 1 ? 'y' : 'ies'}` : ''}; the host asks to wait ${Math.ceil(wait / 1000)} s`,
          res.status,
        );
      }
      await sleep(wait);
      continue;
    }
    const text = await readBounded(res, client.host);
    if (!res.ok) {
      throw new ApiError(`${client.host} API: ${method} ${redact(url)} answered ${res.status}${hostMessage(text)}${hint(res.status)}`, res.status);
    }
    let parsed: unknown;
    try {
      parsed = text === '' ? null : JSON.parse(text);
    } catch {
      throw new ApiError(`${client.host} API: ${method} ${redact(url)} answered ${res.status} with a body that is not JSON`, res.status);
    }
    return { body: parsed as T, headers: res.headers };
  }
}

/**
 * The wait a rate-limit answer asks for, in ms, or undefined when the answer is no rate limit.
 * GitHub: 403 or 429 with `x-ratelimit-remaining: 0` (wait until `x-ratelimit-reset`, epoch
 * seconds) or with `retry-after` (seconds). GitLab: 429, `retry-after` (or `ratelimit-reset`).
 */
export function rateLimitWait(res: Response, now = Date.now()): number | undefined {
  if (res.status !== 403 && res.status !== 429) return undefined;
  const retryAfter = res.headers.get('retry-after');
  if (retryAfter !== null && /^\d+$/.test(retryAfter.trim())) return Number(retryAfter.trim()) * 1000;
  const remaining = res.headers.get('x-ratelimit-remaining') ?? res.headers.get('ratelimit-remaining');
  const reset = res.headers.get('x-ratelimit-reset') ?? res.headers.get('ratelimit-reset');
  if (remaining !== null && remaining.trim() === '0') {
    if (reset !== null && /^\d+$/.test(reset.trim())) return Math.max(0, Number(reset.trim()) * 1000 - now);
    return MAX_RATE_LIMIT_WAIT_MS;
  }
  // A 429 without any of these headers is still a rate limit (a 403 without them is a refusal).
  return res.status === 429 ? MAX_RATE_LIMIT_WAIT_MS : undefined;
}

async function readBounded(res: Response, host: string): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await res.body?.cancel();
    throw new ApiError(`${host} API answer of ${declared} bytes is larger than ${MAX_ANSWER_BYTES}`, res.status);
  }
  if (res.body === null) return '';
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > MAX_ANSWER_BYTES) throw new ApiError(`${host} API answer is larger than ${MAX_ANSWER_BYTES} bytes`, res.status);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** `: Bad credentials` from `{"message": ...}` (both hosts), bounded and on one line. */
function hostMessage(text: string): string {
  try {
    const m = (JSON.parse(text) as { message?: unknown; error?: unknown }).message ?? (JSON.parse(text) as { error?: unknown }).error;
    const s = typeof m === 'string' ? m : m !== undefined ? JSON.stringify(m) : '';
    return s === '' ? '' : `: ${s.replace(/\s+/g, ' ').slice(0, 300)}`;
  } catch {
    return '';
  }
}

function hint(status: number): string {
  if (status === 401) return ' (the token is missing, expired or not valid for this host)';
  if (status === 403) return ' (the token may not write comments on this repository)';
  if (status === 404) return ' (no such repository or pull request, or the token cannot see it)';
  return '';
}

/** A URL for messages: no userinfo, no query (neither carries our token, but a user's URL might). */
function redact(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  u.search = '';
  return u.toString();
}
