/**
 * Change notifications through the real CLI, a real `git http-backend` and loopback receivers
 * (node:http on 127.0.0.1): a receiver that never answers holds nothing else up (evaluation
 * answers, /meta/notifications shows the queue and the timeout, never the URL's path or the
 * secret); vexil stops with events queued; the receiver comes back on the same port and vexil
 * restarts: each queued event is delivered once (signed, CloudEvents), then the push made while it
 * was down, which its first build serves (the revision before it read from the history). Then two replicas coordinated
 * through PostgreSQL and sharing it as their data store: each event delivered once. And a token
 * created through /auth/v1 reaches a sink that asks for audit events, without any token value.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import tap from 'tap';
import { startServe, type ServeProcess } from '../auth/process.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { roles, servedRevision, waitFor } from './replicas.js';

const SECRET = 'serve-notifications-secret-0123';
const hello = { 'features.yml': gitFixture('hello.yml') };
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

interface Got {
  headers: IncomingMessage['headers'];
  body: Buffer;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve((server.address() as AddressInfo).port));
  });
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

async function notifications(r: ServeProcess) {
  const res = await fetch(`${r.url}/meta/notifications`);
  return { status: res.status, text: await res.text() };
}

const gitReason = gitUnavailableReason();
tap.test('a hanging receiver slows nothing; a restart delivers what was queued, once', { skip: gitReason !== undefined && !isCI() ? gitReason : false }, async (t) => {
  if (gitReason !== undefined) reportMissing(t, 'git', gitReason);
  const git = await startGitFixture(t);
  const c1 = await git.repo.commit('main', hello);

  // First a receiver that reads requests and never answers.
  let hung = 0;
  const hanging = createServer((req) => {
    req.resume();
    hung++;
  });
  const port = await listen(hanging, 0);
  t.teardown(() => close(hanging));
  const hook = `http://127.0.0.1:${port}/hook/private-path?token=in-the-url`;

  const { dir, config } = writeServeConfig(t, 'vexil-notify-', () => [
    `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 1h, cache_dir: cache } }`,
    'data_dir: data',
    `notifications: { sinks: [ { type: webhook, url: ${JSON.stringify(hook)}, secret: ${SECRET}, timeout: 1s, retries: 20 } ] }`,
  ]);
  let serve = await startServe(t, config, dir);
  await waitFor('the first event reaches the hanging receiver', async () => hung >= 1);
  const c2 = await git.repo.commit('main', bonjour);
  await (await fetch(`${serve.url}/meta/refresh`, { method: 'POST' })).arrayBuffer();

  const evaluation = await fetch(`${serve.url}/evaluate/v1/variant`, { method: 'POST', body: JSON.stringify({ flagKey: 'greeting', entityId: 'e1' }) });
  t.equal(evaluation.status, 200, 'evaluation answers while the receiver hangs');
  t.equal(((await evaluation.json()) as { variantKey: string }).variantKey, 'bonjour', 'with the new revision');

  await waitFor('two queued, one attempt timed out', async () => {
    const n = await notifications(serve);
    return /"queued":2/.test(n.text) && /no answer within 1000 ms/.test(n.text);
  });
  const shown = await notifications(serve);
  t.equal(shown.status, 200);
  const body = JSON.parse(shown.text) as { sinks: Array<Record<string, unknown>> };
  t.match(body.sinks[0], { index: 0, type: 'webhook', url: `http://127.0.0.1:${port}`, references: ['*'], events: ['served', 'rejected'], queued: 2, dropped: 0 });
  t.notMatch(shown.text, /private-path|in-the-url|serve-notifications-secret/, 'neither the URL path nor the secret shown');
  const metrics = await (await fetch(`${serve.url}/metrics`)).text();
  t.match(metrics, /vexil_notifications_queued\{sink="0",type="webhook"\} 2/, 'the queue length in Prometheus');
  t.notMatch(metrics, /private-path|127\.0\.0\.1:\d+\/hook|serve-notifications-secret/, 'no URL or secret in metrics');

  t.equal(await serve.stop(), 0, 'stops cleanly with events queued');
  t.notMatch(serve.lines.join('\n'), /private-path|in-the-url|serve-notifications-secret/, 'neither the URL path nor the secret logged');
  await close(hanging);

  // The receiver comes back on the same address; vexil restarts.
  const got: Got[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(202).end();
    });
  });
  await listen(receiver, port);
  t.teardown(() => close(receiver));
  // A push while vexil is down: its first build after the restart serves it.
  const c3 = await git.repo.commit('main', hello);
  serve = await startServe(t, config, dir);
  await waitFor('the queued events and the new one delivered', async () => got.length >= 3);
  await waitFor('nothing left queued', async () => /"queued":0/.test((await notifications(serve)).text));
  await new Promise((r) => setTimeout(r, 500));
  t.equal(got.length, 3, 'each queued event delivered once, then the revision the restart serves');
  const events = got.map((g) => {
    const expected = Buffer.from(`sha256=${createHmac('sha256', SECRET).update(g.body).digest('hex')}`);
    const given = Buffer.from(String(g.headers['x-vexil-signature']));
    t.ok(given.length === expected.length && timingSafeEqual(given, expected), 'signed');
    t.equal(g.headers['content-type'], 'application/cloudevents+json');
    return JSON.parse(g.body.toString('utf8')) as { id: string; type: string; data: { revision: string; previousRevision: string | null; changes: { text: string } | null } };
  });
  t.same(events.map((e) => [e.type, e.data.revision, e.data.previousRevision]), [
    ['io.vexil.revision.served', c1, null],
    ['io.vexil.revision.served', c2, c1],
    ['io.vexil.revision.served', c3, c2],
  ], 'in order: the first start, the push with the revision before it, the push served at the restart (previous from the history)');
  t.match(events[1]!.data.changes?.text, /greeting/, 'the diff names the flag that changed');
  t.match(events[2]!.data.changes?.text, /greeting/, 'the revision served before the restart is built by its id and diffed');
  t.equal(new Set(events.map((e) => e.id)).size, 3, 'distinct event ids');

  // Once more, with nothing new: the restart serves what the history has, and announces nothing.
  await serve.stop();
  serve = await startServe(t, config, dir);
  await serve.waitForLog((e) => e.msg === 'notifications on');
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(got.length, 3, 'a restart serving the recorded revision sends nothing');
  await serve.stop();
});

const pgReason = postgresUnavailableReason() ?? gitReason;
tap.test('two replicas coordinated through PostgreSQL: each event delivered once', { skip: pgReason !== undefined && !isCI() ? pgReason : false }, async (t) => {
  if (pgReason !== undefined) reportMissing(t, 'postgres', pgReason);
  const pg = await startPostgres({ database: 'vexil_notify_cluster' });
  t.teardown(() => pg.close());
  const git = await startGitFixture(t);
  const c1 = await git.repo.commit('main', hello);
  const got: Got[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  const port = await listen(receiver, 0);
  t.teardown(() => close(receiver));
  const replicas: ServeProcess[] = [];
  for (const name of ['a', 'b']) {
    const { dir, config } = writeServeConfig(t, `vexil-notify-${name}-`, () => [
      `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 2s, cache_dir: cache } }`,
      `cluster: { coordination: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
      `authentication: { storage: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
      `notifications: { sinks: [ { type: webhook, url: "http://127.0.0.1:${port}/hook", secret: ${SECRET} } ] }`,
    ]);
    replicas.push(await startServe(t, config, dir));
  }
  await waitFor('one leader, one follower', async () => (await roles(replicas)).sort().join() === 'follower,leader');
  const c2 = await git.repo.commit('main', bonjour);
  await (await fetch(`${replicas[0]!.url}/meta/refresh`, { method: 'POST' })).arrayBuffer();
  await waitFor('both serve c2', async () => (await servedRevision(replicas[0]!)) === c2 && (await servedRevision(replicas[1]!)) === c2);
  const revisions = () => got.map((g) => (JSON.parse(g.body.toString('utf8')) as { data: { revision: string } }).data.revision);
  await waitFor('c2 announced', async () => revisions().includes(c2));
  // Longer than a worker's idle look at the queue (5 s): the other replica had its chance to send again.
  await new Promise((r) => setTimeout(r, 7000));
  const ids = got.map((g) => (JSON.parse(g.body.toString('utf8')) as { id: string }).id);
  t.equal(new Set(ids).size, ids.length, `no event delivered twice (${ids.length} deliveries)`);
  t.same(revisions().filter((r) => r === c2).length, 1, 'c2 announced once for the cluster');
  t.ok(revisions().filter((r) => r === c1).length <= 1, 'the first start announced at most once');
  for (const r of replicas) await r.stop();
});

tap.test('audit events from vexil serve reach a sink that asks for them, without a token', { skip: gitReason !== undefined && !isCI() ? gitReason : false }, async (t) => {
  if (gitReason !== undefined) reportMissing(t, 'git', gitReason);
  const git = await startGitFixture(t);
  await git.repo.commit('main', hello);
  const got: Got[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  const port = await listen(receiver, 0);
  t.teardown(() => close(receiver));
  const boot = 'bootstrap-token-for-the-notify-test';
  const { dir, config } = writeServeConfig(t, 'vexil-notify-audit-', () => [
    `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 1h, cache_dir: cache } }`,
    'data_dir: data',
    `authentication: { required: true, methods: { token: { enabled: true, bootstrap: { token: ${boot} } } } }`,
    `notifications: { sinks: [ { type: webhook, url: "http://127.0.0.1:${port}/audit", secret: ${SECRET}, events: [audit] } ] }`,
  ]);
  const serve = await startServe(t, config, dir);
  const res = await fetch(`${serve.url}/auth/v1/method/token`, { method: 'POST', headers: { authorization: `Bearer ${boot}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'ci' }) });
  t.equal(res.status, 200, 'a token created');
  const made = (await res.json()) as { clientToken: string; authentication: { id: string } };
  await waitFor('the audit event delivered', async () => got.some((g) => /token\.created/.test(g.body.toString('utf8')) && /"ci"/.test(g.body.toString('utf8'))));
  const e = got.map((g) => JSON.parse(g.body.toString('utf8')) as { type: string; data: { subject: { authenticationId: string } } }).find((x) => x.data.subject.authenticationId === made.authentication.id);
  t.match(e, { type: 'io.vexil.auth.token.created', data: { subject: { method: 'METHOD_TOKEN' }, actor: {}, address: '127.0.0.1' } });
  // The bootstrap token is made while authentication starts, before any request: delivered too.
  await waitFor('the bootstrap event delivered', async () => got.some((g) => /"origin":"bootstrap"/.test(g.body.toString('utf8'))));
  const bootstrap = got.map((g) => JSON.parse(g.body.toString('utf8')) as { type: string; data: { origin?: string } }).find((x) => x.data.origin === 'bootstrap');
  t.equal(bootstrap?.type, 'io.vexil.auth.token.created', 'the bootstrap token\'s creation is an event');
  const all = got.map((g) => g.body.toString('utf8')).join('\n');
  t.notOk(all.includes(made.clientToken) || all.includes(boot), 'no token in any delivered event');
  t.notOk(all.includes('io.vexil.revision'), 'a sink for audit events only hears no revision');
  await serve.stop();
});
