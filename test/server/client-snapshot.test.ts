/**
 * The client snapshot routes through the real server (src/server/client-snapshot/hot.ts):
 * the body is the document of the served snapshot, the ETag and If-None-Match rules, reference
 * selection (`?reference=`, the environment headers and their X-Svc-* twins, the v2 path, the
 * `environments` config), the 404s, and ETags across reloads, processes and references (local
 * backend, then the git backend with two branches).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/types.js';
import { snapshotDocumentText } from '../../src/server/client-snapshot/document.js';
import { startHttpServer } from '../../src/server/listen.js';
import type { SnapshotStore, StoreEvent } from '../../src/store/types.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';
import { call, isErrorBody, rawRequest, startTestStore, type JsonResponse } from './support.js';

const t = tap;
const ETAG = /^[0-9a-f]{40}$/;
const V1 = '/internal/v1/evaluation/snapshot/namespace';
const v2 = (env: string, ns: string) => `/client/v2/environments/${env}/namespaces/${ns}/snapshot`;

async function serve(t: Test, store: SnapshotStore, config: Config, environments: Config['environments'] = {}): Promise<string> {
  config.environments = environments;
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  return server.url;
}

async function startLocal(t: Test, environments: Config['environments'] = {}) {
  const { dir, config, store } = await startTestStore(t, { fixture: 'every-field' });
  const url = await serve(t, store, config, environments);
  return { dir, store, url, get: (path: string, headers: Record<string, string> = {}) => call(`${url}${path}`, { headers }) };
}

function nextSwap(store: SnapshotStore, reference?: string): Promise<StoreEvent> {
  return new Promise((resolve) => {
    const off = store.subscribe((e) => {
      if (e.type === 'swap' && (reference === undefined || e.reference === reference)) {
        off();
        resolve(e);
      }
    });
  });
}

function notFoundBody(t: Test, res: JsonResponse, message: string): void {
  t.equal(res.status, 404, message);
  t.ok(isErrorBody(res.body));
  t.same(res.body, { code: 5, message, details: [] });
}

t.test('local backend', async (t) => {
  const s = await startLocal(t, { staging: { reference: 'local' }, broken: { reference: 'nope' } });

  t.test('200: the document of the served snapshot, with a bare 40-hex ETag', async (t) => {
    const snapshot = s.store.get()!;
    for (const ns of snapshot.namespaces.values()) {
      const res = await s.get(`${V1}/${ns.key}`);
      t.equal(res.status, 200, ns.key);
      t.match(res.headers.get('content-type'), /^application\/json/);
      t.match(res.headers.get('etag'), ETAG, 'no quotes, lower-case hex');
      t.equal(res.headers.get('x-vexil-revision'), snapshot.revision);
      t.equal(res.text, snapshotDocumentText(ns, snapshot.builtAt), `${ns.key}: byte for byte the builder's text`);
    }
    const etags = new Set(await Promise.all([...snapshot.namespaces.keys()].map(async (k) => (await s.get(`${V1}/${k}`)).headers.get('etag'))));
    t.equal(etags.size, snapshot.namespaces.size, 'one ETag per namespace');
  });

  t.test('If-None-Match: exact, quoted, weak, in a list, or * → 304 with the ETag and no body', async (t) => {
    const first = await s.get(`${V1}/catalog`);
    const etag = first.headers.get('etag')!;
    for (const header of [etag, `"${etag}"`, `W/"${etag}"`, `W/${etag}`, `"0000", ${etag}`, `x,"${etag}" , y`, '*']) {
      const res = await s.get(`${V1}/catalog`, { 'if-none-match': header });
      t.equal(res.status, 304, header);
      t.equal(res.headers.get('etag'), etag, `${header}: the ETag on the 304`);
      t.equal(res.text, '', `${header}: empty body`);
    }
    for (const header of ['0000', `"${etag}x"`, `${etag.slice(1)}`, `""`, `W/""`, ',', '']) {
      const res = await s.get(`${V1}/catalog`, { 'if-none-match': header });
      t.equal(res.status, 200, `${JSON.stringify(header)}: no match`);
      t.equal(res.text, first.text);
    }
    const meta = await s.get(`${V1}/meta`, { 'if-none-match': etag });
    t.equal(meta.status, 200, 'another namespace never matches');
    const huge = await s.get(`${V1}/catalog`, { 'if-none-match': `${'x,'.repeat(5000)}${etag}` });
    t.equal(huge.status, 304, 'a long list (10 KB) is scanned');
  });

  t.test('HEAD, ?pretty, trailing slash', async (t) => {
    const get = await s.get(`${V1}/catalog`);
    const head = await rawRequest(s.url, { method: 'HEAD', path: `${V1}/catalog` });
    t.equal(head.status, 200);
    t.equal(head.headers.etag, get.headers.get('etag'));
    t.equal(head.text, '');
    const pretty = await s.get(`${V1}/catalog?pretty`);
    t.equal(pretty.headers.get('etag'), get.headers.get('etag'), '?pretty: the same representation, indented');
    t.same(pretty.body, get.body);
    t.match(pretty.text, /^\{\n {2}"namespace"/);
    t.equal((await s.get(`${V1}/catalog/`)).text, get.text);
  });

  t.test('404s in the error shape', async (t) => {
    notFoundBody(t, await s.get(`${V1}/nope`), 'getting flags: namespace "nope" not found');
    notFoundBody(t, await s.get(`${V1}/nope`, { 'if-none-match': '*' }), 'getting flags: namespace "nope" not found');
    notFoundBody(t, await s.get(v2('default', 'nope')), 'getting flags: namespace "nope" not found');
    notFoundBody(t, await s.get(`${V1}/catalog?reference=main`), 'reference "main" not found');
    notFoundBody(t, await s.get(`${V1}/catalog`, { 'x-flipt-environment': 'production' }), 'environment "production" not found: map it to a reference under environments.production.reference in the configuration');
    notFoundBody(t, await s.get(v2('production', 'catalog')), 'environment "production" not found: map it to a reference under environments.production.reference in the configuration');
    notFoundBody(t, await s.get(v2('constructor', 'catalog')), 'environment "constructor" not found: map it to a reference under environments.constructor.reference in the configuration');
    notFoundBody(t, await s.get(v2('broken', 'catalog')), 'reference "nope" not found');
    t.equal((await s.get(`${V1}`)).status, 404);
    t.equal((await s.get('/client/v2/environments/default/namespaces/catalog')).status, 404);
  });

  t.test('reference selection: ?reference=, environment headers and twins, the v2 path', async (t) => {
    const etag = (await s.get(`${V1}/catalog`)).headers.get('etag')!;
    const same = async (path: string, headers: Record<string, string> = {}) => {
      const res = await s.get(path, headers);
      t.equal(res.status, 200, `${path} ${JSON.stringify(headers)}`);
      t.equal(res.headers.get('etag'), etag, `${path} ${JSON.stringify(headers)}: the default reference (local)`);
    };
    await same(`${V1}/catalog?reference=local`);
    await same(`${V1}/catalog?reference=`);
    await same(`${V1}/catalog`, { 'x-flipt-environment': 'default' });
    await same(`${V1}/catalog`, { 'x-flipt-environment': 'staging' });
    await same(`${V1}/catalog`, { 'x-svc-environment': 'staging' });
    await same(`${V1}/catalog`, { 'x-svc-environment': 'staging', 'x-flipt-environment': 'staging' });
    await same(`${V1}/catalog`, { 'x-flipt-environment': '' });
    await same(`${V1}/catalog?reference=local`, { 'x-flipt-environment': 'production' });
    await same(`${V1}/catalog`, { 'x-flipt-accept-server-version': '1.0.0' });
    await same(v2('default', 'catalog'));
    await same(v2('staging', 'catalog'));
    await same(`${v2('broken', 'catalog')}?reference=local`);
    const conflict = await s.get(`${V1}/catalog`, { 'x-flipt-environment': 'staging', 'x-svc-environment': 'default' });
    t.equal(conflict.status, 400);
    t.same(conflict.body, {
      code: 3,
      message: 'X-Flipt-Environment "staging" and X-Svc-Environment "default" disagree: send one of them',
      details: [],
    });
    t.equal((await s.get(v2('staging', 'catalog'), { 'x-flipt-environment': 'production' })).status, 200, 'the v2 path takes the environment from the path');
  });

  t.test('the full document whatever X-Flipt-Accept-Server-Version says (no 1.37.1 downgrade)', async (t) => {
    const all = await Promise.all(['catalog', 'meta', 'object-ns', 'default'].map((ns) => s.get(`${V1}/${ns}`)));
    const texts = all.map((r) => r.text).join('\n');
    t.ok(texts.includes('"ENTITY_ID_CONSTRAINT_COMPARISON_TYPE"'), 'the fixture has entity id constraints (Flipt downgrades them)');
    t.ok(texts.includes('"defaultVariant"'), 'and default variants (Flipt drops them)');
    for (const ns of ['catalog', 'meta', 'object-ns', 'default']) {
      const full = all.find((r) => r.body.namespace.key === ns)!;
      for (const version of ['1.37.1', '1.0.0', 'garbage']) {
        const res = await s.get(`${V1}/${ns}`, { 'x-flipt-accept-server-version': version });
        t.ok(res.text === full.text, `${ns}, ${version}: the same document`);
      }
    }
  });

  t.test('a reload keeps the ETag of every namespace it did not change', async (t) => {
    const before = new Map<string, string>();
    for (const ns of ['catalog', 'meta', 'object-ns', 'default']) before.set(ns, (await s.get(`${V1}/${ns}`)).headers.get('etag')!);
    const builtAt = s.store.get()!.builtAt;
    const file = join(s.dir, 'v1_3.features.yml');
    const swapped = nextSwap(s.store);
    writeFileSync(file, readFileSync(file, 'utf8').replace(/\nflags:\n/, '\nflags:\n  - key: added-by-test\n    name: Added\n'));
    await swapped;
    t.not(s.store.get()!.builtAt, builtAt, 'a new snapshot');
    const meta = await s.get(`${V1}/meta`, { 'if-none-match': before.get('meta')! });
    t.equal(meta.status, 200, 'the edited namespace changed');
    t.not(meta.headers.get('etag'), before.get('meta'));
    t.match(meta.text, /added-by-test/);
    for (const ns of ['catalog', 'object-ns', 'default']) {
      const res = await s.get(`${V1}/${ns}`, { 'if-none-match': before.get(ns)! });
      t.equal(res.status, 304, `${ns}: unchanged, still 304`);
      t.equal(res.headers.get('etag'), before.get(ns), `${ns}: same ETag`);
    }
  });

  t.test('another process over the same content gives the same ETags (workers, restarts)', async (t) => {
    const other = await startLocal(t);
    for (const ns of ['catalog', 'object-ns']) {
      // The first server's files were edited in the previous test (meta only); these did not change.
      const [a, b] = await Promise.all([s.get(`${V1}/${ns}`), other.get(`${V1}/${ns}`)]);
      t.equal(a.headers.get('etag'), b.headers.get('etag'), ns);
    }
  });
});

const gitTest = testsNeeding(tap, 'git', gitUnavailableReason());

gitTest.test('git backend, two branches', async (t) => {
  const EXAMPLES = new URL('../../examples/', import.meta.url);
  const read = (p: string) => readFileSync(new URL(p, EXAMPLES), 'utf8');
  const g = await startGitFixture(t);
  const files = { 'default.features.yml': read('default.features.yml'), 'segments.features.yml': read('segments.features.yml'), 'checkout/features.yml': read('checkout/features.yml') };
  await g.repo.commit('main', files);
  await g.repo.commit('feature', { ...files, 'checkout/features.yml': files['checkout/features.yml'].replace('percentage: 10', 'percentage: 90') });
  const store = g.store();
  await store.start();
  const url = await serve(t, store, loadConfig({ env: {}, cwd: g.cacheDir }), { staging: { reference: 'feature' }, production: { reference: 'main' } });
  const get = (path: string, headers: Record<string, string> = {}) => call(`${url}${path}`, { headers });

  const main = { default: await get(`${V1}/default`), checkout: await get(`${V1}/checkout`) };
  const feature = { default: await get(`${V1}/default?reference=feature`), checkout: await get(`${V1}/checkout?reference=feature`) };
  for (const r of [main.default, main.checkout, feature.default, feature.checkout]) {
    t.equal(r.status, 200);
    t.match(r.headers.get('etag'), ETAG);
  }
  t.not(feature.checkout.text, main.checkout.text, 'checkout differs between the branches');
  t.match(feature.checkout.text, /"percentage":90/);
  const withoutTimes = (s: string) => s.replace(/"(created|updated)At":"[^"]*",/g, '');
  t.equal(withoutTimes(feature.default.text), withoutTimes(main.default.text), 'default has the same content on both');
  t.not(feature.default.headers.get('etag'), main.default.headers.get('etag'), 'yet its ETags differ: the reference is part of it');
  t.not(feature.checkout.headers.get('etag'), main.checkout.headers.get('etag'));

  const noFalse304 = await get(`${V1}/checkout?reference=feature`, { 'if-none-match': main.checkout.headers.get('etag')! });
  t.equal(noFalse304.status, 200, "a client switching references with the other's ETag gets the new document (Flipt answers 304)");

  const featureEtag = feature.checkout.headers.get('etag');
  for (const [path, headers] of [
    [`${V1}/checkout`, { 'x-flipt-environment': 'staging' }],
    [`${V1}/checkout`, { 'x-svc-environment': 'staging' }],
    [v2('staging', 'checkout'), {}],
    [`${v2('production', 'checkout')}?reference=feature`, {}],
    [`${V1}/checkout?reference=feature`, { 'x-flipt-environment': 'production' }],
  ] as Array<[string, Record<string, string>]>) {
    const res = await get(path, headers);
    t.equal(res.headers.get('etag'), featureEtag, `${path} ${JSON.stringify(headers)}: the feature branch`);
  }
  for (const [path, headers] of [
    [`${V1}/checkout`, { 'x-flipt-environment': 'production' }],
    [`${V1}/checkout`, { 'x-flipt-environment': 'default' }],
    [v2('production', 'checkout'), {}],
    [v2('default', 'checkout'), {}],
  ] as Array<[string, Record<string, string>]>) {
    const res = await get(path, headers);
    t.equal(res.headers.get('etag'), main.checkout.headers.get('etag'), `${path} ${JSON.stringify(headers)}: main`);
  }

  // A commit on main touching only checkout: default keeps its ETag on main, checkout gets a new one.
  await g.repo.commit('main', { 'checkout/features.yml': files['checkout/features.yml'].replace('percentage: 10', 'percentage: 20') });
  await store.refresh();
  const after = { default: await get(`${V1}/default`, { 'if-none-match': main.default.headers.get('etag')! }), checkout: await get(`${V1}/checkout`) };
  t.equal(after.default.status, 304, 'default: unchanged by the commit, still 304');
  t.not(after.checkout.headers.get('etag'), main.checkout.headers.get('etag'), 'checkout: a new ETag');
  t.match(after.checkout.text, /"percentage":20/);
});
