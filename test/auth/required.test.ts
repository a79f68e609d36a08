/**
 * authentication.required and exclude.* (interface §5.1), the paths that never need a token, how
 * credentials are presented (Bearer header, or the cookie when there is no Authorization header),
 * and the 401 rows of the reference's error catalogue (§2.14).
 */
import t from 'tap';
import { bootstrapTokenFrom, createToken, denied, request, REQUIRED, startAuthServer, UNAUTHENTICATED } from './support.js';

const EVAL = { namespaceKey: 'default', flagKey: 'color', entityId: 'e1', context: {} };

t.test('required: false: every route is open, no credential looked at', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  methods:\n    token:\n      enabled: true\n' });
  for (const path of ['/api/v1/namespaces', '/api/v1/namespaces/default/flags/color', '/meta/info', '/auth/v1/tokens']) {
    const res = await request(`${s.url}${path}`);
    t.equal(res.status, 200, `${path} without a token`);
    const garbage = await request(`${s.url}${path}`, { token: 'not-a-token' });
    t.equal(garbage.status, 200, `${path} with an unknown token`);
  }
  const ev = await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, authorization: 'Basic Zm9vOmJhcg==' });
  t.equal(ev.status, 200, 'evaluation with a foreign scheme');
  // Token creation is open when authentication is not required.
  const created = await request(`${s.url}/auth/v1/method/token`, { body: { name: 'open' } });
  t.equal(created.status, 200);
  t.match(created.body, { clientToken: /^[A-Za-z0-9_-]{43}$/, authentication: { method: 'METHOD_TOKEN' } });
});

t.test('required: true: API routes need a valid client token (401 body and header)', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  t.ok(token, 'bootstrap token logged');

  const cases: Array<[string, string, unknown?]> = [
    ['GET', '/api/v1/namespaces'],
    ['GET', '/api/v1/namespaces/default/flags'],
    ['GET', '/api/v1/flags/color'],
    ['POST', '/evaluate/v1/variant', EVAL],
    ['POST', '/evaluate/v1/boolean', { ...EVAL, flagKey: 'new-checkout' }],
    ['POST', '/evaluate/v1/batch', { requests: [EVAL] }],
    ['GET', '/meta/info'],
    ['GET', '/meta/snapshots'],
    ['GET', '/auth/v1/tokens'],
    ['GET', '/auth/v1/self'],
    ['PUT', '/auth/v1/self/expire'],
    ['POST', '/auth/v1/method/token', { name: 'x' }],
    ['GET', '/no/such/path'],
  ];
  for (const [method, path, body] of cases) {
    const res = await request(`${s.url}${path}`, { method, ...(body !== undefined ? { body } : {}) });
    t.equal(res.status, 401, `${method} ${path} without a token`);
    t.same(res.body, UNAUTHENTICATED, `${method} ${path}: catalogue body`);
    t.equal(res.headers.get('www-authenticate'), 'Bearer realm="vexil"');
    const ok = await request(`${s.url}${path}`, { method, token, ...(body !== undefined ? { body } : {}) });
    t.not(ok.status, 401, `${method} ${path} with the token (${ok.status})`);
  }
});

t.test('required: true: unknown token, wrong scheme, lower-case bearer, empty bearer are 401', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  const url = `${s.url}/api/v1/namespaces`;
  for (const authorization of [
    'Bearer unknown-token',
    `Basic ${Buffer.from(`x:${token}`).toString('base64')}`,
    `bearer ${token}`,
    `Token ${token}`,
    'Bearer ',
    `Bearer  ${token}`,
    `JWT ${token}`,
    token,
  ]) {
    const res = await request(url, { authorization });
    t.equal(res.status, 401, JSON.stringify(authorization.replace(token, '<token>')));
    t.same(res.body, UNAUTHENTICATED);
  }
  t.equal((await request(url, { authorization: `Bearer ${token}` })).status, 200);
});

t.test('/health, /ready and GET /auth/v1/method never need a token', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  for (const path of ['/health', '/ready', '/auth/v1/method', '/health/', '/ready/', '/auth/v1/method/']) {
    t.equal((await request(`${s.url}${path}`)).status, 200, `${path} without a token`);
    t.equal((await request(`${s.url}${path}`, { token: 'garbage' })).status, 200, `${path} with a garbage token`);
    t.equal((await request(`${s.url}${path}`, { cookie: 'garbage' })).status, 200, `${path} with a garbage cookie`);
  }
  // Only reading the listing is public.
  t.equal((await request(`${s.url}/auth/v1/method`, { method: 'POST', body: {} })).status, 401);
});

t.test('GET /auth/v1/method lists the five methods', async (t) => {
  const s = await startAuthServer(t, {
    yaml: `
authentication:
  required: true
  session:
    domain: flags.example.com
  methods:
    token:
      enabled: true
    oidc:
      enabled: true
      providers:
        google:
          issuer_url: https://accounts.example.com
          client_id: id
          client_secret: secret
          redirect_address: https://flags.example.com
`,
  });
  const res = await request(`${s.url}/auth/v1/method`);
  t.equal(res.status, 200);
  t.same(res.body, {
    methods: [
      { method: 'METHOD_TOKEN', enabled: true, sessionCompatible: false, metadata: null },
      {
        method: 'METHOD_CODE_HOST',
        enabled: false,
        sessionCompatible: true,
        metadata: { authorize_url: '/auth/v1/method/code_host/authorize', callback_url: '/auth/v1/method/code_host/callback' },
      },
      {
        method: 'METHOD_OIDC',
        enabled: true,
        sessionCompatible: true,
        metadata: {
          providers: {
            google: { authorize_url: '/auth/v1/method/oidc/google/authorize', callback_url: '/auth/v1/method/oidc/google/callback' },
          },
        },
      },
      { method: 'METHOD_CLUSTER', enabled: false, sessionCompatible: false, metadata: null },
      { method: 'METHOD_JWT', enabled: false, sessionCompatible: false, metadata: null },
    ],
  });
  const behindProxy = await request(`${s.url}/auth/v1/method`, { headers: { 'X-Forwarded-Prefix': '/flags/' } });
  t.equal(behindProxy.body.methods[1].metadata.authorize_url, '/flags/auth/v1/method/code_host/authorize');
  t.equal(behindProxy.body.methods[2].metadata.providers.google.callback_url, '/flags/auth/v1/method/oidc/google/callback');
});

t.test('exclude.management opens /api/v1 only; exclude.evaluation opens /evaluate/v1 only', async (t) => {
  const mgmt = await startAuthServer(t, {
    yaml: `${REQUIRED}  exclude:\n    management: true\n`,
  });
  t.equal((await request(`${mgmt.url}/api/v1/namespaces`)).status, 200, 'management open');
  t.equal((await request(`${mgmt.url}/api/v1/namespaces`, { token: 'garbage' })).status, 200, 'a garbage token is not looked at');
  t.equal((await request(`${mgmt.url}/evaluate/v1/variant`, { body: EVAL })).status, 401, 'evaluation still closed');
  t.equal((await request(`${mgmt.url}/meta/info`)).status, 401, '/meta still closed');
  t.equal((await request(`${mgmt.url}/auth/v1/tokens`)).status, 401, '/auth/v1 still closed');

  const ev = await startAuthServer(t, {
    yaml: `${REQUIRED}  exclude:\n    evaluation: true\n`,
  });
  t.equal((await request(`${ev.url}/evaluate/v1/variant`, { body: EVAL })).status, 200, 'evaluation open');
  t.equal((await request(`${ev.url}/evaluate/v1/batch`, { body: { requests: [EVAL] }, token: 'garbage' })).status, 200);
  t.equal((await request(`${ev.url}/evaluate/v1/namespaces/default/variant`, { body: EVAL })).status, 200);
  t.equal((await request(`${ev.url}/api/v1/namespaces`)).status, 401, 'management still closed');

  // Exclusions only matter when authentication is required: without it everything is open anyway.
  const none = await startAuthServer(t, { yaml: 'authentication:\n  exclude:\n    evaluation: true\n' });
  t.equal((await request(`${none.url}/api/v1/namespaces`)).status, 200);
});

t.test('cookie svc_client_token works without an Authorization header; the header wins when present', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  const url = `${s.url}/api/v1/namespaces`;
  t.equal((await request(url, { cookie: token })).status, 200, 'cookie alone');
  t.equal((await request(url, { cookie: 'garbage' })).status, 401, 'bad cookie alone');
  t.equal((await request(url, { cookie: token, token: 'garbage' })).status, 401, 'bad header + good cookie: the header decides');
  t.equal((await request(url, { cookie: 'garbage', token })).status, 200, 'good header + bad cookie');
  t.equal(
    (await request(url, { cookie: token, authorization: 'Basic Zm9vOmJhcg==' })).status,
    401,
    'any Authorization header, even an unusable one, hides the cookie',
  );
  const other = await request(url, { headers: { cookie: `a=1; svc_client_token=${token}; b=2` } });
  t.equal(other.status, 200, 'among other cookies');

  const self = await request(`${s.url}/auth/v1/self`, { cookie: token });
  t.equal(self.status, 200);
  t.equal(self.body.metadata['io.svc.auth.token.name'], 'initial_bootstrap_token');

  // A refused cookie on /auth/v1 is cleared (reference §2.17).
  const refused = await request(`${s.url}/auth/v1/self`, { cookie: 'garbage' });
  t.equal(refused.status, 401);
  t.equal(refused.headers.get('set-cookie'), 'svc_client_token=; Path=/; Max-Age=0');
});

t.test('required: true: creating a token needs a client token', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  const anonymous = await request(`${s.url}/auth/v1/method/token`, { body: { name: 'x' } });
  t.equal(anonymous.status, 401);
  t.same(anonymous.body, UNAUTHENTICATED);
  const created = await request(`${s.url}/auth/v1/method/token`, { token, body: { name: 'x' } });
  t.equal(created.status, 200);
  const second = await request(`${s.url}/auth/v1/method/token`, { token: created.body.clientToken, body: { name: 'y' } });
  t.equal(second.status, 200, 'a created (unscoped) token can create further tokens');
});

t.test('required: true with no method enabled warns that nobody can authenticate', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n' });
  t.ok(s.logs.entries().some((e) => e.level === 'warn' && String(e.msg).includes('no authentication method is enabled')));
  t.equal((await request(`${s.url}/api/v1/namespaces`)).status, 401);
  t.equal((await request(`${s.url}/auth/v1/method/token`, { body: {} })).status, 401);
});

t.test('required: true: /metrics (namespace and flag keys, references) needs an unscoped token', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  t.equal((await request(`${s.url}/evaluate/v1/variant`, { body: EVAL, token })).status, 200, 'an evaluation to count');
  for (const [what, opts] of [
    ['no token', {}],
    ['a garbage token', { token: 'garbage' }],
    ['a garbage cookie', { cookie: 'garbage' }],
  ] as const) {
    const res = await request(`${s.url}/metrics`, opts);
    t.equal(res.status, 401, `/metrics with ${what}`);
    t.same(res.body, UNAUTHENTICATED);
    t.notMatch(res.text, /color|vexil_/, 'nothing of the metrics in the refusal');
  }
  const ok = await request(`${s.url}/metrics`, { token });
  t.equal(ok.status, 200, 'with a token');
  t.match(ok.text, /vexil_evaluations_total\{namespace="default",flag="color"/);
  const scoped = (await createToken(s.url, token, { name: 'prod', namespaceKey: 'production' })).clientToken;
  const refused = await request(`${s.url}/metrics`, { token: scoped });
  t.equal(refused.status, 403, 'a namespace-scoped token: the metrics span every namespace');
  t.same(refused.body, denied('production'));
});

t.test('required: true with exclude.metrics: true: /metrics is open, the rest is not', async (t) => {
  const s = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    metrics: true\n` });
  const res = await request(`${s.url}/metrics`);
  t.equal(res.status, 200);
  t.match(res.text, /vexil_http_request_duration_seconds/);
  t.equal((await request(`${s.url}/api/v1/namespaces`)).status, 401);
});

t.test('required: true: /ready says ready or not to anyone, the reference and revision only to a caller with a valid credential', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  for (const [what, opts] of [
    ['no token', {}],
    ['a garbage token', { token: 'garbage' }],
    ['a garbage cookie', { cookie: 'garbage' }],
    ['a foreign scheme', { authorization: 'Basic Zm9vOmJhcg==' }],
  ] as const) {
    const res = await request(`${s.url}/ready`, opts);
    t.equal(res.status, 200, what);
    t.equal(res.body.status, 'READY', `${what}: ready`);
    t.notOk('reference' in res.body || 'revision' in res.body, `${what}: no reference, no revision`);
  }
  const stranger = await request(`${s.url}/ready`);
  t.equal(stranger.headers.get('x-vexil-revision'), '', 'no revision in the header either');
  const known = await request(`${s.url}/ready`, { token });
  t.equal(known.status, 200);
  t.match(known.body, { status: 'READY', reference: String, revision: /^[0-9a-f]+$/ });
  t.equal(known.body.revision, known.headers.get('x-vexil-revision'), 'the served revision');
});

t.test('server.metrics_address: /metrics on its own listener without a token, not on the main port', async (t) => {
  const s = await startAuthServer(t, { yaml: `${REQUIRED}server:\n  metrics_address: 127.0.0.1:0\n` });
  const token = bootstrapTokenFrom(s.logs)!;
  t.ok(s.http.metricsUrl, 'the metrics listener is up');
  const scraped = await request(`${s.http.metricsUrl}/metrics`);
  t.equal(scraped.status, 200, 'no token on the metrics listener');
  t.match(scraped.text, /vexil_snapshot_reloads_total/);
  t.equal((await fetch(`${s.http.metricsUrl}/metrics`, { method: 'HEAD' })).status, 200);
  const other = await request(`${s.http.metricsUrl}/api/v1/namespaces`, { token });
  t.equal(other.status, 404, 'nothing else there');
  t.match(other.body, { code: 5, message: 'Not Found', details: [] });
  t.equal((await request(`${s.http.metricsUrl}/metrics`, { method: 'POST', body: {} })).status, 405);
  t.equal((await request(`${s.url}/metrics`)).status, 401, 'main port, no token: refused as any closed path');
  t.equal((await request(`${s.url}/metrics`, { token })).status, 404, 'main port, with a token: no such route');
});

t.test('required: true: X-Vexil-Revision (a commit id) only to callers with a valid credential, on both server paths', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const token = bootstrapTokenFrom(s.logs)!;
  const revision = (await request(`${s.url}/ready`, { token })).headers.get('x-vexil-revision');
  t.match(revision, /^[0-9a-f]{8,}$/, 'the served revision, to a known caller');
  // /health never looks at credentials: no revision, whoever asks.
  t.equal((await request(`${s.url}/health`, { token })).headers.get('x-vexil-revision'), '', '/health: no revision');
  // Koa routes, the fast path's evaluation route and a path nobody serves.
  for (const [method, path, body] of [
    ['GET', '/api/v1/namespaces', undefined],
    ['POST', '/evaluate/v1/variant', EVAL],
    ['POST', '/evaluate/v1/variant', { flagKey: 'color' }],
    ['GET', '/no/such/path', undefined],
  ] as const) {
    const stranger = await request(`${s.url}${path}`, { method, ...(body !== undefined ? { body } : {}) });
    t.equal(stranger.headers.get('x-vexil-revision'), '', `${method} ${path} without a token (${stranger.status}): no revision`);
    const garbage = await request(`${s.url}${path}`, { method, token: 'garbage', ...(body !== undefined ? { body } : {}) });
    t.equal(garbage.headers.get('x-vexil-revision'), '', `${method} ${path} with a garbage token (${garbage.status}): no revision`);
    const known = await request(`${s.url}${path}`, { method, token, ...(body !== undefined ? { body } : {}) });
    t.equal(known.headers.get('x-vexil-revision'), revision, `${method} ${path} with the token (${known.status}): the revision`);
  }
});
