/**
 * One check per row of the reference's error catalogue (§2.14) that applies to the token method,
 * and per error of the interface (§7), with status and exact body. The rows of the other methods
 * are checked with those methods: OIDC in oidc.test.ts and login-state.test.ts, code host in
 * methods/code-host.test.ts, cluster in cluster.test.ts, JWT in jwt.test.ts. The authorization row
 * (Flipt's policy engine) has no counterpart: vexil has no authorization policies.
 */
import t from 'tap';
import { UNAUTHENTICATED, bootstrapTokenFrom, createToken, denied, request, startAuthServer } from './support.js';

t.test('error catalogue', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n' });
  const boot = bootstrapTokenFrom(s.logs)!;
  const scoped = (await createToken(s.url, boot, { name: 'scoped', namespaceKey: 'production' })).clientToken;
  const expiring = (await createToken(s.url, boot, { name: 'exp', expiresAt: new Date(s.clock.now + 1000).toISOString() })).clientToken;
  const flags = `${s.url}/api/v1/namespaces/production/flags`;

  const rows: Array<[string, Promise<{ status: number; body: unknown }>, number, unknown]> = [
    ['§2.14 no credentials (§7.1)', request(flags), 401, UNAUTHENTICATED],
    ['§2.14 unknown token (§7.1)', request(flags, { token: 'x'.repeat(43) }), 401, UNAUTHENTICATED],
    ['§2.14 wrong scheme', request(flags, { authorization: `Basic ${boot}` }), 401, UNAUTHENTICATED],
    ['§2.14 namespaced token, wrong namespace (§7.3)', request(`${s.url}/api/v1/namespaces/default/flags`, { token: scoped }), 403, denied('production')],
    ['§2.14 namespaced token, endpoint without a namespace (§7.3)', request(`${s.url}/auth/v1/tokens`, { token: scoped }), 403, denied('production')],
    ['§2.14 namespaced token creating a token (§7.4)', request(`${s.url}/auth/v1/method/token`, { token: scoped, body: { name: 'n' } }), 403, denied('production')],
    ['§2.14 self without authentication', request(`${s.url}/auth/v1/self`), 401, UNAUTHENTICATED],
    ['§2.14 self/expire without authentication', request(`${s.url}/auth/v1/self/expire`, { method: 'PUT' }), 401, UNAUTHENTICATED],
    [
      '§2.14 get token by unknown id',
      request(`${s.url}/auth/v1/tokens/unknown`, { token: boot }),
      404,
      { code: 5, message: 'getting authentication by token: resource not found', details: [] },
    ],
  ];
  for (const [name, res, status, body] of rows) {
    const r = await res;
    t.equal(r.status, status, name);
    t.same(r.body, body, name);
  }
  t.equal((await request(flags, { token: scoped })).status, 200, 'the scoped token in scope');

  s.clock.advance(1001);
  const expired = await request(flags, { token: expiring });
  t.equal(expired.status, 401, '§2.14 client token expired (§7.2)');
  t.same(expired.body, UNAUTHENTICATED);
});
