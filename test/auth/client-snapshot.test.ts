/**
 * Authentication of the client snapshot paths (v1 and Flipt v2's): they follow the evaluation
 * section (`authentication.exclude.evaluation` opens them, and nothing else), and a token scoped
 * to a namespace reaches the snapshot of that namespace only, on either path.
 */
import t from 'tap';
import { bootstrapTokenFrom, createToken, denied, request, REQUIRED, startAuthServer, UNAUTHENTICATED } from './support.js';

const v1 = (ns: string) => `/internal/v1/evaluation/snapshot/namespace/${ns}`;
const v2 = (ns: string, env = 'default') => `/client/v2/environments/${env}/namespaces/${ns}/snapshot`;

t.test('required: a token for both paths; a namespaced token reaches its namespace only', async (t) => {
  const s = await startAuthServer(t, { yaml: REQUIRED });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  for (const path of [v1('production'), v2('production'), v1('default'), v2('default')]) {
    const anonymous = await request(`${s.url}${path}`);
    t.equal(anonymous.status, 401, `${path}: no token`);
    t.same(anonymous.body, UNAUTHENTICATED);
    t.equal((await request(`${s.url}${path}`, { token: boot })).status, 200, `${path}: an unscoped token`);
  }
  for (const path of [v1('production'), v2('production'), `${v1('production')}/`, v1('%70roduction')]) {
    const res = await request(`${s.url}${path}`, { token: prod });
    t.equal(res.status, 200, `${path}: the token's namespace`);
    t.match(res.headers.get('etag'), /^[0-9a-f]{40}$/);
  }
  for (const path of [v1('default'), v2('default'), v1('paging'), v2('paging', 'production')]) {
    const res = await request(`${s.url}${path}`, { token: prod });
    t.equal(res.status, 403, `${path}: another namespace`);
    t.same(res.body, denied('production'));
  }
  const missing = await request(`${s.url}${v1('nope')}`, { token: boot });
  t.equal(missing.status, 404, 'in scope, then the route answers');
});

t.test('exclude.evaluation opens the snapshot paths, and not management', async (t) => {
  const s = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    evaluation: true\n` });
  for (const path of [v1('default'), v2('default'), v1('production'), v2('production')]) {
    t.equal((await request(`${s.url}${path}`)).status, 200, `${path}: open`);
    t.equal((await request(`${s.url}${path}`, { token: 'garbage' })).status, 200, `${path}: a garbage token is not looked at`);
  }
  t.equal((await request(`${s.url}/api/v1/namespaces`)).status, 401, 'management still closed');

  const mgmt = await startAuthServer(t, { yaml: `${REQUIRED}  exclude:\n    management: true\n` });
  for (const path of [v1('default'), v2('default')]) t.equal((await request(`${mgmt.url}${path}`)).status, 401, `exclude.management: ${path} closed`);
});
