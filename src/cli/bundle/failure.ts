/**
 * One-line wording of a failed registry operation for `vexil bundle push/pull`, and the redaction
 * every line written by those commands goes through: a password or token must never reach the
 * terminal or a CI log, even inside a message some lower layer composed.
 */
import { RegistryError } from '../../sources/oci/types.js';

/** Why `action` (e.g. `push flags:v1 to 127.0.0.1:5000/flags:v1`) failed, in one line. */
export function describeFailure(action: string, registry: string, err: unknown): string {
  const message = oneLine(err instanceof Error ? err.message : String(err));
  if (!(err instanceof RegistryError)) return `cannot ${action}: ${message}`;
  // The client says which request failed ("pulling blob … of …: why"); the action already says enough.
  const why = message.replace(/^(?:pulling|pushing|checking|resolving|listing) .*?: /, '');
  switch (err.kind) {
    case 'unauthorized':
      return `cannot ${action}: authentication failed: ${why}; credentials come from --username with --password-stdin, storage.oci.authentication or VEXIL_STORAGE_OCI_AUTHENTICATION_USERNAME/_PASSWORD`;
    case 'denied':
      return `cannot ${action}: access denied: ${why}`;
    case 'not-found':
      return `cannot ${action}: ${why}`;
    case 'unreachable':
      // TLS spoken to a plain-HTTP registry fails in the handshake: say what to do about it.
      return tlsToPlainHttp(why)
        ? `cannot ${action}: registry ${registry} unreachable: ${why}; if it speaks plain HTTP, use --insecure or an http:// REMOTE`
        : `cannot ${action}: registry ${registry} unreachable: ${why}`;
    case 'digest-mismatch':
      return `cannot ${action}: digest mismatch: ${message}${action.startsWith('pull') ? '; nothing was tagged' : ''}`;
    case 'invalid':
    case 'server':
      return `cannot ${action}: ${message}`;
  }
}

/**
 * Every run of whitespace that holds a line break becomes one space. Matched as whole runs of
 * `\s+` (linear): the expression it replaces, `\s*\r?\n\s*`, retried `\s*` from every blank of
 * a long run without a line break, quadratic in the run.
 */
function oneLine(text: string): string {
  return text.replace(/\s+/g, (run) => (run.includes('\n') ? ' ' : run)).trim();
}

/** The message says TLS failed on an https:// address: the registry may speak plain HTTP. */
function tlsToPlainHttp(why: string): boolean {
  const at = why.indexOf('cannot reach https://');
  return at !== -1 && /SSL|TLS|EPROTO/.test(why.slice(at));
}

/**
 * Replaces every occurrence of each secret (and its base64 Basic form) with `***`. Secrets under
 * 4 characters are left alone: hiding them would garble every message, and guessing them is trivial.
 */
export function redactor(secrets: ReadonlyArray<string | undefined>, username?: string): (text: string) => string {
  const hide = new Set<string>();
  for (const s of secrets) {
    if (s === undefined || s.length < 4) continue;
    hide.add(s);
    if (username !== undefined) hide.add(Buffer.from(`${username}:${s}`).toString('base64'));
  }
  const list = [...hide].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of list) out = out.split(s).join('***');
    return out;
  };
}
