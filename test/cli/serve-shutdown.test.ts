/**
 * SIGTERM while the Git server hangs, through a real `vexil serve` process and a real
 * `git http-backend` whose answer to the poll in flight never comes: vexil stops accepting
 * connections, answers the request in flight, ends the open streams cleanly, abandons the hung
 * Git request instead of waiting for its timeout, and exits 0. The test checks the order of
 * events and the exit status, never durations.
 */
import { connect, type Socket } from 'node:net';
import tap from 'tap';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';
import { StreamClient } from '../support/stream-client.js';
import { parseRawResponse } from '../server/support.js';
import { serveCli } from './run-cli.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

/** Connects; resolves with the socket, or with the error code when the connection is refused. */
function tryConnect(port: number): Promise<Socket | string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(socket));
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

t.test('SIGTERM while the Git server hangs: no new connections, the request in flight answered, streams ended, exit 0', async (t) => {
  const g = await startGitFixture(t);
  const commit = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const { config } = writeServeConfig(t, 'vexil-shutdown-', () => [
    'storage:',
    '  type: git',
    '  git:',
    `    repository: ${g.url}`,
    '    cache_dir: cache',
    '    poll_interval: 100ms',
  ]);
  const { child, listening, logs } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);
  const port = Number(new URL(url).port);
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));

  // From now on the Git server takes every request and never answers it.
  let releaseGit!: () => void;
  // Released at teardown with a bare 503 (serving it would start a git process for a gone client).
  const hang = new Promise<number>((resolve) => (releaseGit = () => resolve(503)));
  t.teardown(() => releaseGit());
  let hung = 0;
  let firstHung!: () => void;
  const gitHangs = new Promise<void>((resolve) => (firstHung = resolve));
  g.server.setHook(() => {
    hung++;
    firstHung();
    return hang;
  });
  await gitHangs; // a poll is now waiting on the Git server

  const sse = await StreamClient.open('sse', `${url}/evaluate/v1/namespaces/default/stream`);
  const ndjson = await StreamClient.open('ndjson', `${url}/client/v2/environments/default/namespaces/default/stream`);
  await sse.until(() => sse.events.length === 1, 'the first SSE state');
  await ndjson.until(() => ndjson.rawLines.length === 1, 'the first NDJSON state');

  // A request in flight: headers and half of the body sent before the signal, the rest after it.
  const body = JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'user-1', context: {} });
  const half = Math.floor(body.length / 2);
  const inFlight = await tryConnect(port);
  if (typeof inFlight === 'string') throw new Error(`cannot connect: ${inFlight}`);
  t.teardown(() => inFlight.destroy());
  let answer = '';
  inFlight.on('data', (c: Buffer) => (answer += c.toString('utf8')));
  const answered = new Promise<void>((resolve) => inFlight.on('end', () => resolve()));
  inFlight.write(
    `POST /evaluate/v1/variant HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`,
  );
  // A round trip on another connection: the server has read those bytes by the time it answers.
  t.equal((await fetch(`${url}/health`)).status, 200);

  child.kill('SIGTERM');
  const draining = () => logs.some((l) => l.msg === 'no longer accepting connections; draining requests');
  while (!draining() && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));

  const refused = await tryConnect(port);
  if (typeof refused !== 'string') refused.destroy();
  t.equal(refused, 'ECONNREFUSED', 'a new connection is refused once shutdown began');

  inFlight.write(body.slice(half));
  await answered;
  const res = parseRawResponse(answer);
  t.equal(res.status, 200, 'the request in flight is answered');
  t.equal(JSON.parse(res.body).variantKey, 'hello');
  t.equal(res.headers.get('x-vexil-revision'), commit);
  t.equal(res.headers.get('connection'), 'close');

  t.equal(await sse.ended(), 'end', 'the SSE stream ends cleanly');
  t.equal(await ndjson.ended(), 'end', 'the NDJSON stream ends cleanly');
  t.equal(await exited, 0, 'exit 0');
  t.ok(hung > 0, 'vexil exited while its Git requests were unanswered (the hook answers only at teardown)');

  const order = ['shutting down: stop accepting, drain requests and streams, then abandon backend work', 'no longer accepting connections; draining requests', 'http server closed', 'backend work abandoned', 'stopped'];
  const seen = logs.map((l) => String(l.msg)).filter((m) => order.includes(m));
  t.same(seen, order, 'stop accepting, drain, then abandon the backend');
  t.notOk(
    logs.some((l) => /shutdown (did not finish|timeout)|did not answer|sent nothing/.test(String(l.msg) + String(l.err ?? ''))),
    'no timeout: neither the shutdown nor the Git request timed out',
  );
  t.notOk(
    logs.some((l) => l.msg === 'reading state failed; still serving the last good snapshot'),
    'the abandoned Git request is not reported as a backend fault',
  );
});
