/**
 * Authentication of OFREP's change-event stream (`/ofrep/v1/namespaces/{namespace}/events`), as
 * for the other streams: the evaluation section (`exclude.evaluation` opens it), the namespace in
 * the path for scoped tokens, 401/403 in the OFREP error schema, the credential checked again while
 * the stream is open (a deleted token ends it), and no credential ever in the URL a bulk answer
 * advertises.
 */
import t from 'tap';
import { classifyRequest } from '../../src/auth/scope.js';
import { StreamClient } from '../support/stream-client.js';
import { bootstrapTokenFrom, createToken, request, startAuthServer, type AuthServer } from './support.js';

const events = (ns: string) => `/ofrep/v1/namespaces/${ns}/events`;
const OFREP_UNAUTHENTICATED = { errorCode: 'GENERAL', errorDetails: 'request was not authenticated' };
const ofrepDenied = (ns: string) => ({ errorCode: 'GENERAL', errorDetails: `permission denied: token is scoped to namespace "${ns}"` });

const config = (heartbeat: string, extra = '') => `
server:
  stream_heartbeat_interval: ${heartbeat}
authentication:
  required: true
  methods:
    token:
      enabled: true
${extra}`;

async function open(s: AuthServer, t: { teardown(fn: () => void): void }, path: string, headers: Record<string, string>): Promise<StreamClient> {
  const c = await StreamClient.open('sse', `${s.url}${path}`, headers);
  t.teardown(() => c.close());
  return c;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

t.test('classification: the namespace from the path', async (t) => {
  t.same(classifyRequest('GET', events('prod')), { public: false, section: 'evaluation', namespace: { from: 'path', namespace: 'prod' }, self: false });
  t.same(classifyRequest('GET', `${events('prod')}/`), { public: false, section: 'evaluation', namespace: { from: 'path', namespace: 'prod' }, self: false }, 'one trailing slash, as the router');
  t.same(classifyRequest('GET', events('%70rod')), { public: false, section: 'evaluation', namespace: { from: 'path', namespace: 'prod' }, self: false }, 'decoded');
  t.same(classifyRequest('GET', events('%zz')), { public: false, section: 'evaluation', namespace: { from: 'none' }, self: false }, 'undecodable: no namespace, so scoped tokens are refused');
  t.same(classifyRequest('GET', '/ofrep/v1/namespaces/prod/events/x'), { public: false, section: 'evaluation', namespace: { from: 'header' }, self: false }, 'anything else under /ofrep/: the header');
});

t.test('a token required; scoped tokens stream their namespace; no token in the advertised URL; exclude.evaluation opens it', async (t) => {
  const s = await startAuthServer(t, { yaml: config('15s') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;

  const anonymous = await request(`${s.url}${events('default')}`);
  t.equal(anonymous.status, 401);
  t.same(anonymous.body, OFREP_UNAUTHENTICATED, 'the OFREP error schema');

  const bulk = await request(`${s.url}/ofrep/v1/evaluate/flags`, { token: prod, headers: { 'X-Flipt-Namespace': 'production' }, body: { context: {} } });
  t.equal(bulk.status, 200);
  const uri = (bulk.body as { eventStreams: Array<{ endpoint: { requestUri: string } }> }).eventStreams[0]!.endpoint.requestUri;
  t.notOk(uri.includes(prod) || uri.includes(prod.slice(0, 12)), 'the token is not in the URL');
  t.same([...new URL(uri, s.url).searchParams.keys()].sort(), ['since'], 'only the state the answer was made from');

  const scoped = await open(s, t, uri, bearer(prod));
  t.equal(scoped.status, 200, 'the token’s namespace');
  await scoped.until(() => scoped.comments.includes('connected'));
  const other = await request(`${s.url}${events('default')}`, { token: prod });
  t.equal(other.status, 403, 'another namespace');
  t.same(other.body, ofrepDenied('production'));
  const cookie = await open(s, t, events('default'), { cookie: `svc_client_token=${boot}` });
  t.equal(cookie.status, 200, 'the session cookie (a same-origin EventSource sends it)');

  const opened = await startAuthServer(t, { yaml: config('15s', '  exclude:\n    evaluation: true\n') });
  t.equal((await open(opened, t, events('default'), {})).status, 200, 'exclude.evaluation: open');
  const openBulk = await request(`${opened.url}/ofrep/v1/evaluate/flags`, { headers: { Origin: 'https://app.example' }, body: { context: {} } });
  t.ok('eventStreams' in (openBulk.body as object), 'exclude.evaluation: a browser gets eventStreams (its EventSource needs no credential)');
});

t.test('a browser that authenticates with an Authorization header gets no eventStreams: its EventSource could not send it', async (t) => {
  const s = await startAuthServer(t, { yaml: config('15s') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const bulk = (headers: Record<string, string>) => request(`${s.url}/ofrep/v1/evaluate/flags`, { token: boot, headers, body: { context: {} } });
  const browser = await bulk({ Origin: 'https://app.example' });
  t.equal(browser.status, 200);
  t.notOk('eventStreams' in (browser.body as object), 'a browser (Origin) with a bearer token: none, so the provider keeps its own change detection');
  const server = await bulk({});
  t.ok('eventStreams' in (server.body as object), 'no Origin (a server-side or mobile client, which can send the header on its stream): advertised');
});

t.test('a token deleted while streaming ends the OFREP stream at the next heartbeat', async (t) => {
  const s = await startAuthServer(t, { yaml: config('50ms') });
  const boot = bootstrapTokenFrom(s.logs)!;
  const doomed = await createToken(s.url, boot, { name: 'doomed' });
  const stream = await open(s, t, events('default'), bearer(doomed.clientToken));
  await stream.until(() => stream.comments.includes('heartbeat'), 'a heartbeat');
  const deleted = await request(`${s.url}/auth/v1/tokens/${String(doomed.authentication.id)}`, { method: 'DELETE', token: boot });
  t.equal(deleted.status, 200);
  t.equal(await stream.ended(), 'end', 'ended cleanly');
  const metrics = (await request(`${s.url}/metrics`, { token: boot })).text;
  t.match(metrics, /vexil_streams_closed_total\{protocol="ofrep",reason="unauthenticated"\} 1/);
});
