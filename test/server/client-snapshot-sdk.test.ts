/**
 * Flipt's real client SDK against a real `vexil serve`: @flipt-io/flipt-client-js 0.5.1 (Node
 * build: node-fetch and the WASM build of Flipt's Rust evaluation engine), unmodified.
 *
 * - It initialises from the snapshot endpoint and evaluates the examples' flags locally
 *   (evaluateVariant, evaluateBoolean, evaluateBatch) for 1,000 entity ids with varied contexts;
 *   every answer is compared, id for id, with vexil's own `/evaluate/v1/batch` answer.
 * - A state file changes → after `refresh()` the client has the new state (200); unchanged →
 *   `refresh()` is a 304 round trip (counted in the server's own request log).
 * - Its `environment` option (the X-Flipt-Environment header) and `reference` option select the
 *   reference: local backend with an environment mapped by a VEXIL_ENVIRONMENTS_* variable, then
 *   the git backend with two branches.
 *
 * One known divergence of the engine is kept out of the contexts: it refuses date-only datetime
 * constraint values (`gte 2023-01-01` in segment early-adopters never matches in the engine; Flipt's
 * server and vexil read it as midnight UTC; test/oracle/README.md, `datetime-syntax`). So
 * `signed_up_at` is drawn outside 2023, where both sides agree the segment does not match.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ErrorStrategy, FliptClient } from '@flipt-io/flipt-client-js';
import tap, { type Test } from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo } from '../support/git-repo.js';
import { mulberry32 } from '../support/prng.js';
import { testsNeeding } from '../support/requirements.js';

const t = tap;
const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const STATE_FILES = ['default.features.yml', 'segments.features.yml', 'checkout/features.yml'];
const FLAGS: ReadonlyArray<{ ns: string; key: string; type: 'variant' | 'boolean' }> = [
  { ns: 'default', key: 'color-theme', type: 'variant' },
  { ns: 'default', key: 'new-search', type: 'boolean' },
  { ns: 'default', key: 'legacy-dashboard', type: 'variant' },
  { ns: 'checkout', key: 'payment-provider', type: 'variant' },
  { ns: 'checkout', key: 'express-shipping', type: 'boolean' },
  { ns: 'checkout', key: 'gift-wrapping', type: 'boolean' },
];
const SNAPSHOT_PATH = '/internal/v1/evaluation/snapshot/namespace/';

type Json = Record<string, unknown>;

function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** 1,000 distinct entity ids, each with a context touching the examples' segments. */
function requests(): Array<{ entityId: string; context: Record<string, string> }> {
  const rng = mulberry32(2026);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  const out: Array<{ entityId: string; context: Record<string, string> }> = [];
  for (let i = 0; i < 1000; i++) {
    const entityId = i === 1 ? 'qa-bot-1' : i === 2 ? 'qa-bot-2' : i % 9 === 0 ? `user-${i}@example.com` : `user-${i}`;
    const context: Record<string, string> = {};
    const maybe = (key: string, values: readonly string[]) => {
      if (rng() < 0.8) context[key] = pick(values);
    };
    maybe('beta_opt_in', ['true', 'false']);
    maybe('plan', ['pro', 'enterprise', 'free']);
    maybe('platform', ['ios', 'android', 'web']);
    maybe('prefers_contrast', ['true', 'false']);
    maybe('client', ['web-app', 'mobile-app', 'web-']);
    maybe('signed_up_at', ['2022-05-01T10:00:00Z', '2024-06-01T00:00:00Z', '2021-12-31T23:59:59Z']);
    maybe('country', ['DE', 'FR', 'US', 'NL']);
    maybe('cart_total', ['250', '40', '200', '50', '10']);
    maybe('currency', ['EUR', 'JPY', 'USD']);
    maybe('item_count', ['1', '2', '5']);
    maybe('api_version', ['2', '3', '4']);
    maybe('user_agent', ['Mozilla/5.0', 'crawler-bot']);
    out.push({ entityId, context });
  }
  return out;
}

async function serverBatch(url: string, reference: string | undefined, ns: string, flagKey: string, reqs: ReturnType<typeof requests>): Promise<Json[]> {
  const res = await fetch(`${url}/evaluate/v1/batch`, {
    method: 'POST',
    body: JSON.stringify({
      ...(reference !== undefined ? { reference } : {}),
      requests: reqs.map((r) => ({ namespaceKey: ns, flagKey, entityId: r.entityId, context: r.context })),
    }),
  });
  if (res.status !== 200) throw new Error(`batch ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { responses: Json[] }).responses;
}

/** The fields both sides give, the segment keys as a set (the engine's order follows a hash map). */
function comparable(r: Json, type: 'variant' | 'boolean'): Json {
  const segments = [...((r.segmentKeys as string[] | undefined) ?? [])].sort();
  return type === 'variant'
    ? { match: r.match, reason: r.reason, variantKey: r.variantKey, variantAttachment: r.variantAttachment, segmentKeys: segments, flagKey: r.flagKey }
    : { enabled: r.enabled, reason: r.reason, segmentKeys: segments, flagKey: r.flagKey };
}

/** Every flag of the namespaces given, for every request: the client's local answers vs the server's. */
async function compareWithServer(
  t: Test,
  clients: ReadonlyMap<string, FliptClient>,
  url: string,
  reference: string | undefined,
  reqs: ReturnType<typeof requests>,
): Promise<Map<string, Set<string>>> {
  const outcomes = new Map<string, Set<string>>();
  for (const flag of FLAGS) {
    const client = clients.get(flag.ns);
    if (client === undefined) continue;
    const server = await serverBatch(url, reference, flag.ns, flag.key, reqs);
    const seen = new Set<string>();
    let differences = 0;
    for (let i = 0; i < reqs.length; i++) {
      const req = { flagKey: flag.key, ...reqs[i]! };
      const local = flag.type === 'variant' ? client.evaluateVariant(req) : client.evaluateBoolean(req);
      const remote = flag.type === 'variant' ? (server[i]!.variantResponse as Json) : (server[i]!.booleanResponse as Json);
      const a = comparable(local as unknown as Json, flag.type);
      const b = comparable(remote, flag.type);
      seen.add(JSON.stringify(flag.type === 'variant' ? [b.reason, b.variantKey] : [b.reason, b.enabled]));
      if (JSON.stringify(a) !== JSON.stringify(b) && differences++ < 5) t.same(a, b, `${flag.ns}/${flag.key} ${reqs[i]!.entityId} ${JSON.stringify(reqs[i]!.context)}`);
    }
    t.equal(differences, 0, `${flag.ns}/${flag.key}: ${reqs.length} entity ids, the client's answers are the server's`);
    outcomes.set(`${flag.ns}/${flag.key}`, seen);
  }
  // evaluateBatch: every flag of the namespace for the first 100 ids in one call each.
  for (const [ns, client] of clients) {
    const flags = FLAGS.filter((f) => f.ns === ns);
    const batch = reqs.slice(0, 100).flatMap((r) => flags.map((f) => ({ flagKey: f.key, entityId: r.entityId, context: r.context })));
    const local = client.evaluateBatch(batch).responses;
    t.equal(local.length, batch.length, `${ns}: evaluateBatch answers every request`);
    let differences = 0;
    for (const f of flags) {
      const remote = await serverBatch(url, reference, ns, f.key, reqs.slice(0, 100));
      for (let i = 0; i < 100; i++) {
        const l = local[i * flags.length + flags.indexOf(f)]!;
        const mine = f.type === 'variant' ? l.variantEvaluationResponse : l.booleanEvaluationResponse;
        const theirs = f.type === 'variant' ? remote[i]!.variantResponse : remote[i]!.booleanResponse;
        if (JSON.stringify(comparable(mine as unknown as Json, f.type)) !== JSON.stringify(comparable(theirs as Json, f.type))) differences++;
      }
    }
    t.equal(differences, 0, `${ns}: evaluateBatch agrees with the server`);
  }
  return outcomes;
}

async function initClient(opts: { url: string; namespace: string; environment?: string; reference?: string }): Promise<FliptClient> {
  const warn = console.warn;
  console.warn = () => {}; // wasm-bindgen: "using deprecated parameters for the initialization function"
  try {
    // updateInterval 0: no timer; the test calls refresh(). errorStrategy fail: refresh errors surface.
    return await FliptClient.init({ ...opts, updateInterval: 0, errorStrategy: ErrorStrategy.Fail });
  } finally {
    console.warn = warn;
  }
}

/** The server's request lines for snapshot requests so far: [url, status]. */
function snapshotRequests(logs: ReadonlyArray<Record<string, unknown>>): Array<[string, number]> {
  return logs.filter((l) => l.msg === 'request' && String(l.url).startsWith(SNAPSHOT_PATH)).map((l) => [String(l.url), Number(l.status)]);
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.test('local backend: 1,000 ids per flag, refresh after a change, 304 when unchanged, environment', async (t) => {
  const dir = tempDir(t, 'vexil-sdk-');
  const state = join(dir, 'state');
  for (const f of STATE_FILES) {
    mkdirSync(join(state, f, '..'), { recursive: true });
    cpSync(join(EXAMPLES, f), join(state, f));
  }
  writeFileSync(join(dir, 'vexil.yml'), 'server:\n  http_port: 0\nlog:\n  requests: all\nstorage:\n  local:\n    path: state\n');
  const { listening, logs } = await serveCli(t, ['serve', '--config', join(dir, 'vexil.yml')], { env: { VEXIL_ENVIRONMENTS_STAGING_REFERENCE: 'local' } });
  const url = String(listening.url);

  const clients = new Map<string, FliptClient>();
  for (const ns of ['default', 'checkout']) clients.set(ns, await initClient({ url, namespace: ns }));
  t.teardown(() => clients.forEach((c) => c.close()));
  await waitFor('the request lines', async () => snapshotRequests(logs).length >= 2);
  t.same(snapshotRequests(logs).map(([u, s]) => `${u} ${s}`).sort(), [`${SNAPSHOT_PATH}checkout 200`, `${SNAPSHOT_PATH}default 200`], 'init: one snapshot request per client');
  t.same(clients.get('default')!.listFlags().map((f: { key: string }) => f.key).sort(), ['color-theme', 'legacy-dashboard', 'new-search']);

  const reqs = requests();
  const outcomes = await compareWithServer(t, clients, url, undefined, reqs);
  // The comparison means something only if the ids reach the flags' different outcomes.
  t.ok(outcomes.get('default/color-theme')!.size >= 4, `color-theme outcomes: ${[...outcomes.get('default/color-theme')!].join(' ')}`);
  t.ok(outcomes.get('checkout/payment-provider')!.size >= 3, `payment-provider outcomes: ${[...outcomes.get('checkout/payment-provider')!].join(' ')}`);

  // Unchanged state: refresh() is a 304 round trip and changes nothing.
  const before = snapshotRequests(logs).length;
  t.equal(await clients.get('checkout')!.refresh(), false, 'unchanged: refresh reports no change');
  await waitFor('the request line', async () => snapshotRequests(logs).length > before);
  t.same(snapshotRequests(logs).slice(before), [[`${SNAPSHOT_PATH}checkout`, 304]], 'one request, answered 304');

  // A change to checkout: the next refresh() gets a 200 and the new state.
  const file = join(state, 'checkout/features.yml');
  const revision = (await fetch(`${url}/api/v1/namespaces`)).headers.get('x-vexil-revision');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/key: gift-wrapping\n(\s+)name: Gift wrapping\n(\s+)type: BOOLEAN_FLAG_TYPE\n(\s+)enabled: true/, 'key: gift-wrapping\n$1name: Gift wrapping\n$2type: BOOLEAN_FLAG_TYPE\n$3enabled: false'));
  await waitFor('the reload', async () => (await fetch(`${url}/api/v1/namespaces`)).headers.get('x-vexil-revision') !== revision);
  const gift = (c: FliptClient) => c.evaluateBoolean({ flagKey: 'gift-wrapping', entityId: 'u1', context: {} });
  t.equal(gift(clients.get('checkout')!).enabled, true, 'before refresh: the old state');
  const mark = snapshotRequests(logs).length;
  t.equal(await clients.get('checkout')!.refresh(), true, 'changed: refresh reports it');
  t.equal(gift(clients.get('checkout')!).enabled, false, 'after refresh: the new state');
  t.equal(await clients.get('default')!.refresh(), false, 'default did not change: its ETag survived the reload');
  t.equal(await clients.get('checkout')!.refresh(), false, 'and checkout is unchanged since');
  await waitFor('the request lines', async () => snapshotRequests(logs).length >= mark + 3);
  t.same(snapshotRequests(logs).slice(mark).map(([u, s]) => `${u} ${s}`), [`${SNAPSHOT_PATH}checkout 200`, `${SNAPSHOT_PATH}default 304`, `${SNAPSHOT_PATH}checkout 304`]);
  await compareWithServer(t, clients, url, undefined, reqs.slice(0, 200));

  // The environment option: X-Flipt-Environment, mapped by VEXIL_ENVIRONMENTS_STAGING_REFERENCE.
  const staging = await initClient({ url, namespace: 'checkout', environment: 'staging' });
  t.teardown(() => staging.close());
  t.equal(gift(staging).enabled, false, 'environment staging: the local reference');
  await t.rejects(initClient({ url, namespace: 'checkout', environment: 'production' }), 'an unmapped environment: init fails (404)');
  await t.rejects(initClient({ url, namespace: 'nope' }), 'an unknown namespace: init fails (404)');
});

const gitTest = testsNeeding(tap, 'git', gitUnavailableReason());

gitTest.test('git backend, two branches: the reference and environment options', async (t) => {
  const repo = await createTestRepo(t);
  const files = Object.fromEntries(STATE_FILES.map((f) => [f, readFileSync(join(EXAMPLES, f), 'utf8')]));
  await repo.commit('main', files);
  const checkout = files['checkout/features.yml']!;
  const changed = checkout.replace('rollout: 80', 'rollout: 30').replace('rollout: 20', 'rollout: 70').replace(/enabled: true\n*$/, 'enabled: false\n');
  t.not(changed, checkout);
  await repo.commit('feature', { 'checkout/features.yml': changed });

  const cache = tempDir(t, 'vexil-sdk-cache-');
  const { listening } = await serveCli(t, ['serve'], {
    env: {
      VEXIL_SERVER_HTTP_PORT: '0',
      VEXIL_STORAGE_TYPE: 'git',
      VEXIL_STORAGE_GIT_REPOSITORY: repo.gitdir,
      VEXIL_STORAGE_GIT_CACHE_DIR: cache,
      VEXIL_ENVIRONMENTS_STAGING_REFERENCE: 'feature',
    },
  });
  const url = String(listening.url);
  const reqs = requests().slice(0, 300);

  const main = await initClient({ url, namespace: 'checkout' });
  const byReference = await initClient({ url, namespace: 'checkout', reference: 'feature' });
  const byEnvironment = await initClient({ url, namespace: 'checkout', environment: 'staging' });
  t.teardown(() => [main, byReference, byEnvironment].forEach((c) => c.close()));

  await compareWithServer(t, new Map([['checkout', main]]), url, undefined, reqs);
  await compareWithServer(t, new Map([['checkout', byReference]]), url, 'feature', reqs);
  await compareWithServer(t, new Map([['checkout', byEnvironment]]), url, 'feature', reqs);
  const gift = (c: FliptClient) => c.evaluateBoolean({ flagKey: 'gift-wrapping', entityId: 'u1', context: {} }).enabled;
  t.same([gift(main), gift(byReference), gift(byEnvironment)], [true, false, false], 'main, ?reference=feature, environment staging');
  const eu = { flagKey: 'payment-provider', context: { country: 'DE' } };
  const variants = (c: FliptClient) => new Set(reqs.map((r) => c.evaluateVariant({ ...eu, entityId: r.entityId }).variantKey));
  t.same([...variants(main)].sort(), ['adyen', 'stripe']);
  t.equal(await byReference.refresh(), false, 'refresh on the feature reference: unchanged');
  t.equal(await main.refresh(), false, 'and on main');
});
