/**
 * `X-Forwarded-Prefix` on the public `GET /auth/v1/method`: its slashes are trimmed by a linear
 * scan (trimSlashes), not by a backtracking expression that was quadratic in a run of slashes.
 * Through the real server at the largest header the server accepts (Node's header limit), and a
 * 1 MB header is answered 431 with the JSON error body; the function itself at 1 MB.
 */
import { connect } from 'node:net';
import t from 'tap';
import { trimSlashes } from '../../src/http/url.js';
import { startAuthServer } from '../auth/support.js';
import { isErrorBody, parseRawResponse } from './support.js';

const MB = 1024 * 1024;

t.test('trimSlashes: leading and trailing slashes, nothing else', async (t) => {
  const cases: Array<[string, string]> = [
    ['', ''],
    ['/', ''],
    ['///', ''],
    ['flags', 'flags'],
    ['/flags', 'flags'],
    ['flags/', 'flags'],
    ['//flags//', 'flags'],
    ['/a/b/', 'a/b'],
    ['a//b', 'a//b'],
    [' /a/ ', ' /a/ '],
  ];
  for (const [input, want] of cases) {
    t.equal(trimSlashes(input), want, JSON.stringify(input));
    t.equal(trimSlashes(input), input.replace(/^\/+|\/+$/g, ''), `${JSON.stringify(input)}: as the expression it replaces`);
  }
  // A long run of slashes that does not end the string made the old expression quadratic.
  const run = '/'.repeat(MB);
  t.equal(trimSlashes(`a${run}b`), `a${run}b`);
  t.equal(trimSlashes(run), '');
  t.equal(trimSlashes(`${run}a${run}`), 'a');
  t.equal(trimSlashes(`${run}a${run}b${run}`), `a${run}b`);
});

/** One raw request on its own connection; the answer, even when the server stops reading early. */
function exchange(url: string, bytes: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const done = () => resolve(Buffer.concat(chunks).toString('utf8'));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('end', done);
    // The server may reset a connection whose request it refused before reading it all.
    socket.on('error', done);
    socket.write(bytes);
  });
}

/** `GET /auth/v1/method` with this `X-Forwarded-Prefix`, sent as raw bytes. */
function methodsAt(url: string, prefix: string) {
  return exchange(url, `GET /auth/v1/method HTTP/1.1\r\nHost: x\r\nX-Forwarded-Prefix: ${prefix}\r\nConnection: close\r\n\r\n`).then(parseRawResponse);
}

t.test('X-Forwarded-Prefix of slashes through the real server', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  const methods = (prefix: string) => methodsAt(s.url, prefix);
  const slashes = (n: number) => `a${'/'.repeat(n)}b`;

  const normal = await methods('/flags/');
  t.equal(JSON.parse(normal.body).methods[1].metadata.authorize_url, '/flags/auth/v1/method/code_host/authorize');

  const huge = await methods(slashes(MB));
  t.equal(huge.status, 431, '1 MB header: 431, not a crash');
  const body = JSON.parse(huge.body);
  t.ok(isErrorBody(body));
  t.equal(body.message, 'request header fields too large');

  // The largest run the server accepts (bisection over the header limit), answered in full.
  let accepted = 0;
  let refused = MB;
  while (refused - accepted > 1) {
    const n = Math.floor((accepted + refused) / 2);
    const res = await methods(slashes(n));
    if (res.status === 431) {
      refused = n;
      continue;
    }
    t.equal(res.status, 200, `${n} slashes`);
    accepted = n;
  }
  t.ok(accepted >= 8 * 1024, `the server accepts a header of ${accepted} slashes`);
  const largest = await methods(slashes(accepted));
  t.equal(largest.status, 200);
  t.equal(
    JSON.parse(largest.body).methods[1].metadata.authorize_url,
    '/auth/v1/method/code_host/authorize',
    'empty segments: not a plain path, so no prefix',
  );
  const half = Math.floor((accepted - 8) / 2);
  const outer = `${'/'.repeat(half)}flags${'/'.repeat(half)}`;
  t.equal(JSON.parse((await methods(outer)).body).methods[1].metadata.authorize_url, '/flags/auth/v1/method/code_host/authorize', 'outer slashes trimmed');
  t.equal((await methods(`${'/'.repeat(accepted)}`)).status, 200, 'only slashes');
  t.equal((await fetch(`${s.url}/health`)).status, 200, 'still serving');
});

t.test('X-Forwarded-Prefix: only a path of plain segments is put in front; anything else is ignored', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  const authorizeUrl = async (prefix: string) => {
    const res = await methodsAt(s.url, prefix);
    t.equal(res.status, 200, JSON.stringify(prefix));
    return JSON.parse(res.body).methods[1].metadata.authorize_url as string;
  };
  const path = '/auth/v1/method/code_host/authorize';
  for (const [prefix, want] of [
    ['/flags', `/flags${path}`],
    ['flags/v1/', `/flags/v1${path}`],
    ['/a-b_c.d~e/', `/a-b_c.d~e${path}`],
  ] as const) {
    t.equal(await authorizeUrl(prefix), want, `${JSON.stringify(prefix)} is used`);
  }
  for (const prefix of ['\\evil.example', '/\\evil.example/', 'a\\b', 'https://evil.example', 'a//b', '../x', 'a/./b', '..', 'a b', '%2e%2e', 'a?b', 'a#b', '@evil.example', 'ä']) {
    t.equal(await authorizeUrl(prefix), path, `${JSON.stringify(prefix)} is ignored`);
  }
});
