/**
 * "Copy as curl": a shell command that sends the same JSON request the page sent, for a person to
 * run or paste into an issue. When the server requires authentication it carries
 * `-H 'Authorization: Bearer <token>'` as a literal placeholder: the page never writes the pasted
 * token or the session cookie into text meant to be copied and shared. Every argument is quoted
 * for a POSIX shell (single quotes; a quote inside as `'\''`), so any context value survives.
 * Pure, no DOM.
 */

/** `s` as one POSIX shell word. */
export function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export interface CurlRequest {
  /** The absolute address (`http://host:8080/evaluate/v1/batch`). */
  url: string;
  /** The JSON body. */
  body: unknown;
  /** The server requires authentication: add the placeholder header. */
  authenticated: boolean;
}

/** The placeholder written in place of a token. */
export const TOKEN_PLACEHOLDER = '<token>';

export function curlCommand(r: CurlRequest): string {
  const lines = [
    `curl -sS -X POST ${shellQuote(r.url)}`,
    `-H ${shellQuote('Content-Type: application/json')}`,
    ...(r.authenticated ? [`-H ${shellQuote(`Authorization: Bearer ${TOKEN_PLACEHOLDER}`)}`] : []),
    `--data-raw ${shellQuote(JSON.stringify(r.body))}`,
  ];
  return lines.join(' \\\n  ');
}
