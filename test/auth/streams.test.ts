/**
 * Authentication of the live-update streams: both paths follow the evaluation section, a token
 * scoped to a namespace streams that namespace only, and a stream whose token is deleted or
 * expires while it is open ends (at the next heartbeat, before the next event, or at the
 * expiry itself) while other streams go on. A JWT stream past `exp` but within the leeway is
 * re-checked from the verified-token cache (one signature verification in all) and ends when the
 * leeway runs out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startJwtIssuer } from '../support/jwt-issuer.js';
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

/** Log lines of the JWT method with this message (each signature verification logs one). */
function jwtLogCount(s: AuthServer, msg: string, reason?: string): number {
  return s.logs.entries().filter((e) => e.msg === msg && (reason === undefined || e.reason === reason)).length;
}

const jwtMethod = (jwksUri: string) => `    jwt:\n      enabled: true\n      jwks_url: ${jwksUri}\n      leeway: 2s\n`;

t.test('a JWT stream between exp and exp + leeway: one signature verification, then cache hits; it ends when the leeway runs out', async (t) => {
  const issuer = await startJwtIssuer(t);
  const s = await startAuthServer(t, { yaml: config('50ms', jwtMethod(issuer.jwksUri)) });
  // exp = T0 + 1 s, accepted until T0 + 3 s (leeway 2 s); the stream opens at T0 + 1.5 s.
  const jwt = await issuer.sign({}, { now: Math.floor(T0 / 1000), expiresIn: 1 });
  s.clock.advance(1500);
  const stream = await open(s, t, sse('default'), { authorization: `JWT ${jwt}` });
  t.equal(stream.status, 200, 'accepted within the leeway');
  await firstFrame(stream);
  // Twenty heartbeats, each preceded by a re-check of the credential (and the expiry timer, set
  // for the end of the leeway, in between): about a second of stream past exp.
  await stream.until(() => stream.comments.filter((c) => c === 'heartbeat').length >= 20, 'twenty heartbeats');
  const verified = jwtLogCount(s, 'JWT verified');
  t.equal(verified, 1, `the signature was verified once (${verified}): the re-checks past exp are cache hits`);

  s.clock.advance(2000);
  t.equal(await stream.ended(), 'end', 'past exp + leeway the stream ends');
  t.equal(jwtLogCount(s, 'JWT verified'), 1, 'no verification at the end either');
  t.equal(jwtLogCount(s, 'JWT refused', 'token expired'), 1, 'one refusal, made on the claims before any signature check');
  const metrics = (await request(`${s.url}/metrics`, { token: bootstrapTokenFrom(s.logs)! })).text;
  t.equal(closedCount(metrics, 'protocol="sse",reason="unauthenticated"'), 1);
});

t.test('without heartbeats a JWT stream ends at exp + leeway, from its timer, after one verification', async (t) => {
  const issuer = await startJwtIssuer(t);
  const s = await startAuthServer(t, { yaml: config('0s', jwtMethod(issuer.jwksUri)) });
  const jwt = await issuer.sign({}, { now: Math.floor(T0 / 1000), expiresIn: 1 });
  s.clock.advance(1500);
  const stream = await open(s, t, ndjson('default'), { authorization: `JWT ${jwt}` });
  await firstFrame(stream);
  // The timer was set for T0 + 3 s on the auth clock (1.5 s away); by then the clock is past it.
  s.clock.advance(2000);
  t.equal(await stream.ended(), 'end');
  t.equal(jwtLogCount(s, 'JWT verified'), 1, 'one signature verification in the stream\'s life');
  t.equal(jwtLogCount(s, 'JWT refused', 'token expired'), 1);
});
