import t from 'tap';
import { Writable } from 'node:stream';
import { createLogger, REDACTED_PATHS } from '../../src/logger.js';

/** A destination that keeps every chunk written to it. */
function capture() {
  const chunks: string[] = [];
  return { chunks, write: (s: string) => void chunks.push(s) };
}

t.test('json encoding writes one JSON object per line', async (t) => {
  const out = capture();
  const log = createLogger({ level: 'info', encoding: 'json', destination: out });
  log.info({ ref: 'main' }, 'snapshot loaded');
  log.debug('below the level');
  log.warn('careful');
  t.equal(out.chunks.length, 2, 'debug is below info');
  const lines = out.chunks.join('').split('\n').filter(Boolean);
  t.equal(lines.length, 2);
  const first = JSON.parse(lines[0]!);
  t.match(first, { level: 'info', msg: 'snapshot loaded', ref: 'main' });
  t.match(first.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/, 'RFC 3339 time');
  t.equal(JSON.parse(lines[1]!).level, 'warn');
});

t.test('levels follow the config', async (t) => {
  const out = capture();
  const log = createLogger({ level: 'trace', encoding: 'json', destination: out });
  log.trace('t');
  t.equal(JSON.parse(out.chunks[0]!).level, 'trace');
  const quiet = capture();
  const fatalOnly = createLogger({ level: 'fatal', encoding: 'json', destination: quiet });
  fatalOnly.error('e');
  fatalOnly.fatal('f');
  t.same(quiet.chunks.map((c) => JSON.parse(c).msg), ['f']);
});

t.test('console encoding writes readable text, not JSON', async (t) => {
  const out = capture();
  const log = createLogger({ level: 'debug', encoding: 'console', destination: out });
  log.info({ ref: 'main' }, 'snapshot loaded');
  log.debug('details');
  const text = out.chunks.join('');
  t.match(text, /INFO.*snapshot loaded/);
  t.match(text, /DEBUG.*details/);
  t.match(text, /ref: "main"/);
  t.notMatch(text, /\u001b\[/, 'no colour codes when writing to a given destination');
  for (const line of text.split('\n').filter(Boolean)) {
    t.throws(() => JSON.parse(line), `not JSON: ${line}`);
  }
});

t.test('console encoding works with a Node stream', async (t) => {
  let text = '';
  const stream = new Writable({
    write(chunk, _enc, cb) {
      text += String(chunk);
      cb();
    },
  });
  createLogger({ level: 'info', encoding: 'console', destination: stream }).error('it broke');
  t.match(text, /ERROR.*it broke/);
});

t.test('secrets are redacted, the bootstrap client_token is not', async (t) => {
  const out = capture();
  const log = createLogger({ level: 'info', encoding: 'json', destination: out });
  log.info(
    {
      req: { method: 'GET', headers: { authorization: 'Bearer abc123', cookie: 'svc_client_token=abc123', 'x-gitlab-token': 'abc123', host: 'h' } },
      res: { statusCode: 200, headers: { 'set-cookie': 'svc_client_token=abc123' } },
      provider: { client_id: 'id', client_secret: 'abc123' },
      client_token: 'bootstrap-value',
    },
    'request',
  );
  const line = out.chunks.join('');
  t.notMatch(line, /abc123/, 'no secret value anywhere in the line');
  const entry = JSON.parse(line);
  t.equal(entry.req.headers.authorization, '[REDACTED]');
  t.equal(entry.req.headers.cookie, '[REDACTED]');
  t.equal(entry.req.headers.host, 'h');
  t.equal(entry.res.headers['set-cookie'], '[REDACTED]');
  t.equal(entry.provider.client_secret, '[REDACTED]');
  t.equal(entry.provider.client_id, 'id');
  t.equal(entry.client_token, 'bootstrap-value', 'logged on purpose once at startup');
  t.notOk(REDACTED_PATHS.includes('client_token'));
});

t.test('the secrets of a logged config are redacted', async (t) => {
  const out = capture();
  const log = createLogger({ level: 'info', encoding: 'console', destination: out });
  log.info(
    {
      config: {
        authentication: {
          session: { csrf: { key: 'csrf-secret' } },
          methods: {
            token: { bootstrap: { token: 'boot-secret' } },
            oidc: { providers: { corp: { client_id: 'cid', client_secret: 'oidc-secret' } } },
            code_host: { client_secret: 'gh-secret' },
          },
        },
        webhooks: { github: { secret: 'hook-secret', secret_file: '/run/secrets/gh' }, gitlab: { token: 'hook-token' } },
      },
    },
    'config',
  );
  const text = out.chunks.join('');
  t.match(text, /cid/);
  t.match(text, /\/run\/secrets\/gh/, 'a secret file path is not a secret');
  t.notMatch(text, /csrf-secret|boot-secret|oidc-secret|gh-secret|hook-secret|hook-token/);
});
