/**
 * Cache-Control of snapshot reads (issue 20 §5; src/server/pipeline/cache-control.ts), through a
 * real server over a real Git repository served by `git http-backend`, on both HTTP paths (the
 * node:http fast path and Koa):
 *
 * - a client snapshot of a branch or environment: `no-cache` with its ETag, on the 200 and the 304;
 * - a client snapshot or management read whose URL names a commit id (`?reference=<commit>`):
 *   `public, max-age=31536000, immutable`; `private, ...` when the request presented a credential;
 * - a commit reached through an environment (configuration can remap it): `no-cache`;
 * - error answers and management reads of a branch: no Cache-Control.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import tap, { type Test } from 'tap';
import { startAuthentication } from '../../src/auth/setup.js';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer, type RunningHttpServer } from '../../src/server/listen.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());

const IMMUTABLE = 'public, max-age=31536000, immutable';
const PRIVATE_IMMUTABLE = 'private, max-age=31536000, immutable';
const BOOTSTRAP = 'cache-control-bootstrap-token-0123456789';

/** Both server paths over one store: the default (fast path on) and Koa only. */
async function startServers(t: Test, authentication: boolean) {
  const g = await startGitFixture(t);
  const first = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const second = await g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') }, { parent: first });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-cache-control-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'vexil.yml');
  const auth = authentication
    ? ['authentication:', '  required: true', '  methods:', '    token:', '      enabled: true', `      bootstrap: { token: ${BOOTSTRAP} }`]
    : [];
  writeFileSync(file, ['data_dir: data', ...auth, ''].join('\n'));
  const config = loadConfig({ file, cwd: dir, env: {} });
  config.environments = { production: { reference: 'main' }, frozen: { reference: first } };
  const logger = pino({ level: 'silent' });
  const store = g.store();
  await store.start();
  const runtime = authentication ? await startAuthentication({ config, logger, cwd: dir, cleanup: false }) : undefined;
  if (runtime) t.teardown(() => runtime.close());
  const common = {
    store,
    config,
    logger,
    host: '127.0.0.1',
    port: 0,
    ...(runtime ? { authGate: runtime.gate, auth: runtime.routes } : {}),
  };
  const servers: Array<[string, RunningHttpServer]> = [];
  for (const [name, fastPath] of [['fast path', true], ['Koa', false]] as const) {
    const s = await startHttpServer({ ...common, fastPath });
    t.teardown(() => s.close());
    t.equal(s.fastPath, fastPath);
    servers.push([name, s]);
  }
  return { servers, first, second };
}

async function head(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  return { status: res.status, cacheControl: res.headers.get('cache-control'), etag: res.headers.get('etag') };
}

const V1 = '/internal/v1/evaluation/snapshot/namespace/default';
const V2 = (environment: string) => `/client/v2/environments/${environment}/namespaces/default/snapshot`;

t.test('an open server: no-cache for moving references, public immutable for a commit in the URL', async (t) => {
  const { servers, first, second } = await startServers(t, false);
  for (const [name, s] of servers) {
    await t.test(name, async (t) => {
      const branch = await head(`${s.url}${V1}`);
      t.same([branch.status, branch.cacheControl], [200, 'no-cache'], 'v1, the default branch');
      t.ok(branch.etag, 'with its ETag');
      const revalidated = await head(`${s.url}${V1}`, { 'If-None-Match': branch.etag! });
      t.same([revalidated.status, revalidated.cacheControl, revalidated.etag], [304, 'no-cache', branch.etag], 'the 304 says the same');
      t.same((await head(`${s.url}${V1}?reference=main`)).cacheControl, 'no-cache', 'a branch named in the URL');
      t.same((await head(`${s.url}${V2('production')}`)).cacheControl, 'no-cache', 'v2, an environment');

      for (const commit of [first, second]) {
        const pinned = await head(`${s.url}${V1}?reference=${commit}`);
        t.same([pinned.status, pinned.cacheControl], [200, IMMUTABLE], `v1, commit ${commit.slice(0, 7)} in the URL`);
        const notModified = await head(`${s.url}${V1}?reference=${commit}`, { 'If-None-Match': pinned.etag! });
        t.same([notModified.status, notModified.cacheControl], [304, IMMUTABLE], 'its 304');
      }
      t.same((await head(`${s.url}${V2('production')}?reference=${first}`)).cacheControl, IMMUTABLE, 'v2 with ?reference=<commit>');
      t.same((await head(`${s.url}${V2('frozen')}`)).cacheControl, 'no-cache', 'a commit reached through an environment name: configuration can remap it');
      t.same((await head(`${s.url}${V1}`, { 'X-Flipt-Environment': 'frozen' })).cacheControl, 'no-cache', 'a commit reached through the environment header');

      const missing = await head(`${s.url}/internal/v1/evaluation/snapshot/namespace/nope?reference=${first}`);
      t.same([missing.status, missing.cacheControl], [404, null], 'an error answer carries none');
      const unknown = await head(`${s.url}${V1}?reference=${'0'.repeat(40)}`);
      t.same([unknown.status, unknown.cacheControl], [404, null], 'an unknown commit: 404, none');

      t.same((await head(`${s.url}/api/v1/namespaces/default/flags?reference=${first}`)).cacheControl, IMMUTABLE, 'a management read of a commit');
      t.same((await head(`${s.url}/api/v1/namespaces/default/flags/greeting?reference=${first}`)), { status: 200, cacheControl: IMMUTABLE, etag: null }, 'a management read of one flag at a commit');
      t.same((await head(`${s.url}/api/v1/namespaces/default/flags`)).cacheControl, null, 'a management read of the default branch: none');
      t.same((await head(`${s.url}/api/v1/namespaces/default/flags/nope?reference=${first}`)).cacheControl, null, 'a management 404: none');
    });
  }
});

t.test('authentication required: a credentialed read of a commit is private', async (t) => {
  const { servers, first } = await startServers(t, true);
  const bearer = { Authorization: `Bearer ${BOOTSTRAP}` };
  for (const [name, s] of servers) {
    await t.test(name, async (t) => {
      t.same((await head(`${s.url}${V1}?reference=${first}`, bearer)).cacheControl, PRIVATE_IMMUTABLE, 'client snapshot');
      t.same((await head(`${s.url}/api/v1/namespaces?reference=${first}`, bearer)).cacheControl, PRIVATE_IMMUTABLE, 'management read');
      t.same((await head(`${s.url}${V1}`, bearer)).cacheControl, 'no-cache', 'a branch: no-cache');
      const refused = await head(`${s.url}${V1}?reference=${first}`);
      t.same([refused.status, refused.cacheControl], [401, null], 'no credential: 401, no Cache-Control');
    });
  }
});
