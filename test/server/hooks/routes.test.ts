/**
 * The webhook routes in process (src/server/hooks/routes.ts) on a local-source store: a hook
 * without a secret is not there (404); a body declared over the cap is refused from its
 * Content-Length before any of it is sent (413); the registry's repeated envelope is acknowledged
 * (it resends until answered 2xx) where a Git host's repeated delivery is 409; a reference the
 * store does not serve is acknowledged and ignored.
 */
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { pino } from 'pino';
import tap, { type Test } from 'tap';
import { startHttpServer } from '../../../src/server/listen.js';
import { startTestStore } from '../support.js';

const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex');

async function start(t: Test) {
  const { config, store } = await startTestStore(t);
  // The registry hook reads the served repository from the OCI settings; the store stays local.
  config.storage.type = 'oci';
  config.storage.oci.repository = 'registry.test/team/flags:v1';
  const server = await startHttpServer({
    store,
    config,
    logger: pino({ level: 'silent' }),
    host: '127.0.0.1',
    port: 0,
    webhookSecrets: { github: Buffer.from('gh'), generic: Buffer.from('gen'), registry: Buffer.from('reg') },
  });
  t.teardown(() => server.close());
  return server.url;
}

const post = (url: string, body: string, headers: Record<string, string>) =>
  fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }).then(async (r) => ({ status: r.status, body: (await r.json()) as Record<string, unknown> }));

tap.test('only configured hooks exist', async (t) => {
  const url = await start(t);
  t.equal((await post(`${url}/hooks/gitlab`, '{}', { 'x-gitlab-token': 'x' })).status, 404);
  t.equal((await post(`${url}/hooks/gitea`, '{}', {})).status, 404);
  t.equal((await post(`${url}/hooks/generic`, '{}', {})).status, 401, 'configured: there, and refusing an unsigned delivery');
});

tap.test('a declared body far over 4 MiB: 413 before the body is sent, the connection closed', async (t) => {
  const url = new URL(await start(t));
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      // Headers only: the answer must not wait for the 16 MiB that never come (a body between the
      // cap and 8 MiB is drained first, so a client still sending reads the 413; http/body.ts).
      socket.write(`POST /hooks/github HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${16 * 1024 * 1024}\r\nX-GitHub-Event: push\r\n\r\n`);
    });
    let text = '';
    socket.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\r\n\r\n') && text.includes('}')) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('error', reject);
  });
  t.match(answer, /^HTTP\/1\.1 413 /);
  t.match(answer, '"message":"request body exceeds 4194304 bytes"');
  t.match(answer, /\r\nConnection: close\r\n/i);
});

tap.test("repeats: a Git host's delivery is 409, a registry's envelope is acknowledged", async (t) => {
  const url = await start(t);
  const push = JSON.stringify({ ref: 'refs/heads/main', after: 'a'.repeat(40) });
  const gh = { 'x-github-event': 'push', 'x-github-delivery': 'd-1', 'x-hub-signature-256': `sha256=${hmac('gh', push)}` };
  t.equal((await post(`${url}/hooks/github`, push, gh)).status, 202);
  t.equal((await post(`${url}/hooks/github`, push, gh)).status, 409);

  const envelope = JSON.stringify({ events: [{ id: 'ev-1', action: 'push', target: { repository: 'team/flags', tag: 'v1', digest: `sha256:${'b'.repeat(64)}` } }] });
  const reg = { authorization: 'Bearer reg', 'content-type': 'application/vnd.docker.distribution.events.v1+json' };
  t.same((await post(`${url}/hooks/registry`, envelope, reg)).body, { status: 'accepted', references: [], all: true, reason: '' });
  t.same((await post(`${url}/hooks/registry`, envelope, reg)), { status: 202, body: { status: 'ignored', references: [], all: false, reason: 'delivery ev-1 was already received' } });
});

tap.test('a reference the store does not serve: acknowledged and ignored', async (t) => {
  const url = await start(t);
  const one = '{"reference":"preview/nope"}';
  t.same(await post(`${url}/hooks/generic`, one, { 'x-vexil-signature': `sha256=${hmac('gen', one)}` }), {
    status: 202,
    body: { status: 'ignored', references: [], all: false, reason: 'reference "preview/nope" is not served' },
  });
  const local = '{"reference":"local"}';
  t.same((await post(`${url}/hooks/generic`, local, { 'x-vexil-signature': `sha256=${hmac('gen', local)}` })).body.references, ['local'], 'the served one: accepted');
});
