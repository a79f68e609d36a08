/**
 * "Copy as curl" (src/ui/lib/curl-command.ts): each argument survives a real POSIX shell as it was
 * (checked with /bin/sh), and the authorization header is a placeholder, never a token.
 */
import { execFileSync } from 'node:child_process';
import t from 'tap';
import { curlCommand, shellQuote, TOKEN_PLACEHOLDER } from '../../../src/ui/lib/curl-command.js';

/** What /bin/sh makes of `words` as the arguments of printf: one line per argument. */
function shellArgs(words: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', `printf '%s\\n' ${words}`], { encoding: 'utf8' });
  return out.split('\n').slice(0, -1);
}

t.test('shell quoting: every string comes back as it was', async (t) => {
  const nasty = ["it's", "''", '$(rm -rf /)', '`id`', '"a" \\ b', 'tab\there', '$HOME ${X}', '!event', 'ünïcode ✓', '', '; | & > <'];
  for (const s of nasty) t.same(shellArgs(shellQuote(s)), [s], JSON.stringify(s));
});

t.test('the command: POST, JSON, the body as sent; the placeholder only when authentication is on', async (t) => {
  const body = { requests: [{ namespaceKey: 'default', flagKey: 'f', entityId: "o'brien", context: { note: '$(x) `y`' } }] };
  const open = curlCommand({ url: 'http://127.0.0.1:8080/evaluate/v1/batch', body, authenticated: false });
  t.notMatch(open, /Authorization/);
  // The command's words after `curl`, as the shell splits them (line continuations included).
  const words = shellArgs(open.replace(/^curl /, ''));
  t.same(words, ['-sS', '-X', 'POST', 'http://127.0.0.1:8080/evaluate/v1/batch', '-H', 'Content-Type: application/json', '--data-raw', JSON.stringify(body)]);

  const closed = curlCommand({ url: 'http://h/evaluate/v1/batch', body, authenticated: true });
  t.match(closed, `-H 'Authorization: Bearer ${TOKEN_PLACEHOLDER}'`);
  t.equal(TOKEN_PLACEHOLDER, '<token>');
});
