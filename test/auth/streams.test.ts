/**
 * Authentication of the live-update streams: both paths follow the evaluation section, a token
 * scoped to a namespace streams that namespace only, and a stream whose token is deleted or
 * expires while it is open ends (at the next heartbeat, before the next event, or at the
 * expiry itself) while other streams go on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { StreamClient } from '../support/stream-client.js';
import { T0, UNAUTHENTICATED, bootstrapTokenFrom, createToken, denied, fakeClock, request, startAuthServer, type AuthServer } from './support.js';

const sse = (ns: string) => `/evaluate/v1/namespaces/${ns}/stream`;
const ndjson = (ns: string) => `/client/v2/environments/default/namespaces/${ns}/stream`;

const config = (heartbeat: string, extra = '') => `
server:
  stream_heartbeat_interval: ${heartbeat}
authentication:
  required: true
  methods:
    token:
      enabled: true
${extra}`;

function open(s: AuthServer, t: { teardown(fn: () => void): void }, path: string, headers: Record<string, string>) {
  return StreamClient.open(path.startsWith('/evaluate/') ? 'sse' : 'ndjson', `${s.url}${path}`, headers).then((c) => {
    t.teardown(() => c.close());
    return c;
  });
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const firstFrame = (c: StreamClient) => c.until(() => (c.protocol === 'sse' ? c.events.length : c.rawLines.length) === 1, 'the first frame');

/** Edits the default namespace of the server's state (the `api` fixture). */
function editDefault(s: AuthServer, text: string): void {
  const file = join(s.dir, 'state', 'features.yml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/description: Button colou?r.*/, `description: ${text}`));
}

function closedCount(metrics: string, labels: string): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`vexil_streams_closed_total{${labels}}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

t.test('both stream paths need a token; a namespaced token streams its namespace only; exclude.evaluation opens them', async (t) => {
  const s = await startAuthServer(t, { yaml: config('15s') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  for (const path of [sse('default'), ndjson('default')]) {
    const anonymous = await request(`${s.url}${path}`);
    t.equal(anonymous.status, 401, `${path}: no token`);
    t.same(anonymous.body, UNAUTHENTICATED);
    const unscoped = await open(s, t, path, bearer(boot));
    t.equal(unscoped.status, 200, `${path}: an unscoped token`);
  }
  for (const path of [sse('production'), ndjson('production'), sse('%70roduction')]) {
    const scoped = await open(s, t, path, bearer(prod));
    t.equal(scoped.status, 200, `${path}: the token's namespace`);
    await firstFrame(scoped);
  }
  for (const path of [sse('default'), ndjson('default'), sse('paging')]) {
    const res = await request(`${s.url}${path}`, { token: prod });
    t.equal(res.status, 403, `${path}: another namespace`);
    t.same(res.body, denied('production'));
  }

  const open_ = await startAuthServer(t, { yaml: config('15s', '  exclude:\n    evaluation: true\n') });
  for (const path of [sse('default'), ndjson('production')]) {
    t.equal((await open(open_, t, path, {})).status, 200, `exclude.evaluation: ${path} open`);
  }
});

t.test('a token deleted while streaming ends its streams at the next heartbeat; other streams go on', async (t) => {
  const s = await startAuthServer(t, { yaml: config('50ms') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const doomed = await createToken(s.url, boot, { name: 'doomed' });
  const token = doomed.clientToken;
  const streams = [
    await open(s, t, sse('default'), bearer(token)),
    await open(s, t, ndjson('default'), bearer(token)),
    // A browser's EventSource authenticates with the session cookie.
    await open(s, t, sse('default'), { cookie: `svc_client_token=${token}` }),
  ];
  const survivor = await open(s, t, sse('default'), bearer(boot));
  for (const c of [...streams, survivor]) await firstFrame(c);

  const deleted = await request(`${s.url}/auth/v1/tokens/${String(doomed.authentication.id)}`, { method: 'DELETE', token: boot });
  t.equal(deleted.status, 200);
  for (const c of streams) t.equal(await c.ended(), 'end', `${c.protocol}: ended cleanly`);

  editDefault(s, 'after the deletion');
  await survivor.until(() => survivor.events.length === 2, 'the change, on the stream whose token lives');
  for (const c of streams) t.equal(c.protocol === 'sse' ? c.events.length : c.rawLines.length, 1, 'nothing after the deletion');
  const metrics = (await request(`${s.url}/metrics`, { token: boot })).text;
  t.equal(closedCount(metrics, 'protocol="sse",reason="unauthenticated"'), 2);
  t.equal(closedCount(metrics, 'protocol="ndjson",reason="unauthenticated"'), 1);
});

t.test('without heartbeats the credential is checked before an event: a deleted token gets the end, not the change', async (t) => {
  const s = await startAuthServer(t, { yaml: config('0s') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const doomed = await createToken(s.url, boot, { name: 'doomed' });
  const stream = await open(s, t, sse('default'), bearer(doomed.clientToken));
  const witness = await open(s, t, sse('default'), bearer(boot));
  await firstFrame(stream);
  await firstFrame(witness);

  t.equal((await request(`${s.url}/auth/v1/tokens/${String(doomed.authentication.id)}`, { method: 'DELETE', token: boot })).status, 200);
  editDefault(s, 'not for the deleted token');
  await witness.until(() => witness.events.length === 2);
  t.equal(await stream.ended(), 'end');
  t.equal(stream.events.length, 1, 'the change was not sent');
});

t.test('a token that expires while streaming: the stream ends at the expiry, with no event or heartbeat to trigger it', async (t) => {
  const clock = fakeClock();
  const s = await startAuthServer(t, { yaml: config('0s'), clock });
  const boot = bootstrapTokenFrom(s.logs)!;
  const shortLived = await createToken(s.url, boot, { name: 'short', expiresAt: new Date(T0 + 300).toISOString() });
  const lasting = await createToken(s.url, boot, { name: 'lasting', expiresAt: new Date(T0 + 3_600_000).toISOString() });
  const stream = await open(s, t, sse('default'), bearer(shortLived.clientToken));
  const other = await open(s, t, ndjson('default'), bearer(lasting.clientToken));
  await firstFrame(stream);
  await firstFrame(other);
  // The auth clock passes the expiry; the stream's timer (set for it) finds the token expired.
  clock.advance(1000);
  t.equal(await stream.ended(), 'end');
  t.equal(other.ending, undefined, 'a token that has not expired keeps streaming');
  const metrics = (await request(`${s.url}/metrics`, { token: boot })).text;
  t.equal(closedCount(metrics, 'protocol="sse",reason="unauthenticated"'), 1);
});
