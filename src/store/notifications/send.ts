/**
 * One delivery attempt: a POST of the stored body to the sink's URL, and nothing else. The
 * receiver cannot steer vexil: redirects are not followed (`redirect: 'manual'`, a 3xx is a
 * failure, its Location never requested), the response body is never read (cancelled once the
 * status line is in), and the attempt ends at the sink's timeout whatever the receiver does.
 *
 * The outcome's `error` is built from fixed words and error codes only (never an error's message,
 * which can quote the URL): a Slack webhook URL is a secret, and so is everything in a sink but
 * its scheme and host.
 */
export interface SendOutcome {
  readonly ok: boolean;
  /** HTTP status, when one came back. */
  readonly status?: number;
  readonly error?: string;
}

export interface SendRequest {
  readonly url: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
  /** Aborted when the notifier stops. */
  readonly signal: AbortSignal;
}

export async function send(req: SendRequest): Promise<SendOutcome> {
  const timeout = AbortSignal.timeout(req.timeoutMs);
  let res: Response;
  try {
    res = await fetch(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      redirect: 'manual',
      signal: AbortSignal.any([timeout, req.signal]),
    });
  } catch (err) {
    if (timeout.aborted) return { ok: false, error: `no answer within ${req.timeoutMs} ms` };
    if (req.signal.aborted) return { ok: false, error: 'stopped' };
    return { ok: false, error: describe(err) };
  }
  // Ignored, unread: a receiver answering a large or endless body costs nothing.
  await res.body?.cancel().catch(() => undefined);
  if (res.status >= 200 && res.status < 300) return { ok: true, status: res.status };
  if (res.status >= 300 && res.status < 400) return { ok: false, status: res.status, error: `HTTP ${res.status}: redirect not followed` };
  return { ok: false, status: res.status, error: `HTTP ${res.status}` };
}

/** An error code (ECONNREFUSED, ENOTFOUND, ...) or a fixed description; never the message. */
function describe(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } }).cause;
  const code = typeof cause?.code === 'string' ? cause.code : typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : undefined;
  return code !== undefined && /^[A-Z0-9_]{2,40}$/.test(code) ? `request failed (${code})` : 'request failed';
}
