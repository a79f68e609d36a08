/**
 * OpenFeature's real server SDK with its real OFREP provider against a real `vexil serve`:
 * @openfeature/server-sdk 1.23.0 and @openfeature/ofrep-provider 0.1.3, unmodified, on the
 * examples' state.
 *
 * - boolean and string flags, with the reason, variant and metadata the provider hands on;
 * - typed context values as OpenFeature applications write them (`api_version: 3`,
 *   `prefers_contrast: true`, `cart_total: 250`) matching number and boolean constraints; over
 *   200 entity ids the SDK's answers equal `/evaluate/v1`'s for the same context as strings;
 * - a missing flag: the SDK's FLAG_NOT_FOUND and the caller's default value;
 * - the namespace header (`X-Flipt-Namespace`, as Flipt's docs configure OFREP providers);
 * - bulk evaluation over plain HTTP (the server provider does not use it): ETag, 304, and a new
 *   ETag after the state changes;
 * - the git backend with two branches: `X-Svc-Reference` and an environment
 *   (`X-Flipt-Environment`, mapped by VEXIL_ENVIRONMENTS_STAGING_REFERENCE) select the branch, and
 *   the bulk ETags of two branches differ even where the namespace's content is the same.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { OFREPProvider } from '@openfeature/ofrep-provider';
import { OpenFeature, type Client, type EvaluationContext } from '@openfeature/server-sdk';
import tap, { type Test } from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo } from '../support/git-repo.js';
import { mulberry32 } from '../support/prng.js';
import { testsNeeding } from '../support/requirements.js';

const t = tap;
const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));
const STATE_FILES = ['default.features.yml', 'segments.features.yml', 'checkout/features.yml'];
const BULK = '/ofrep/v1/evaluate/flags';

type Json = Record<string, unknown>;

function tempDir(t: Test, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

let domains = 0;
/** An OpenFeature client of its own domain, whose OFREP provider sends `headers`. */
async function clientFor(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const domain = `vexil-${++domains}`;
  await OpenFeature.setProviderAndWait(domain, new OFREPProvider({ baseUrl: url, headers }));
  return OpenFeature.getClient(domain);
}

/** The same context as `/evaluate/v1` takes it: every value a string. */
function asStrings(context: EvaluationContext): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(context)) if (k !== 'targetingKey' && v !== undefined && v !== null) out[k] = String(v);
  return out;
}

async function evaluateV1(url: string, kind: 'variant' | 'boolean', namespaceKey: string, flagKey: string, context: EvaluationContext, reference?: string): Promise<Json> {
  const res = await fetch(`${url}/evaluate/v1/${kind}`, {
    method: 'POST',
    body: JSON.stringify({ namespaceKey, flagKey, entityId: context.targetingKey ?? '', context: asStrings(context), ...(reference !== undefined ? { reference } : {}) }),
  });
  if (res.status !== 200) throw new Error(`${kind} ${res.status}: ${await res.text()}`);
  return (await res.json()) as Json;
}

async function bulk(url: string, context: Json, headers: Record<string, string> = {}): Promise<{ status: number; etag: string | null; body: Json | undefined }> {
  const res = await fetch(`${url}${BULK}`, { method: 'POST', body: JSON.stringify({ context }), headers });
  const text = await res.text();
  return { status: res.status, etag: res.headers.get('etag'), body: text === '' ? undefined : (JSON.parse(text) as Json) };
}

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

t.teardown(() => OpenFeature.close());

t.test('local backend: boolean and string flags, typed context, not found, bulk with ETag', async (t) => {
  const dir = tempDir(t, 'vexil-ofrep-sdk-');
  const state = join(dir, 'state');
  for (const f of STATE_FILES) {
    mkdirSync(join(state, f, '..'), { recursive: true });
    cpSync(join(EXAMPLES, f), join(state, f));
  }
  writeFileSync(join(dir, 'vexil.yml'), 'server:\n  http_port: 0\nstorage:\n  local:\n    path: state\n');
  const { listening } = await serveCli(t, ['serve', '--config', join(dir, 'vexil.yml')]);
  const url = String(listening.url);
  const byDefault = await clientFor(url);
  const checkout = await clientFor(url, { 'X-Flipt-Namespace': 'checkout' });

  // Boolean flags.
  const gift = await checkout.getBooleanDetails('gift-wrapping', false, { targetingKey: 'u1' });
  t.match(gift, { value: true, reason: 'DEFAULT', variant: 'true' }, 'an enabled boolean flag without rollouts');
  const staff = await byDefault.getBooleanDetails('new-search', false, { targetingKey: 'ana@example.com' });
  t.match(staff, { value: true, reason: 'TARGETING_MATCH', variant: 'true', flagMetadata: { segments: 'internal-users' } }, 'the internal-users rollout (entity id constraint)');

  // String flags; a boolean context value against a boolean constraint.
  const contrast = await byDefault.getStringDetails('color-theme', 'light', { targetingKey: 'u1', prefers_contrast: true, client: 'web-app' });
  t.match(contrast, { value: 'high-contrast', variant: 'high-contrast', reason: 'TARGETING_MATCH', flagMetadata: { segments: 'accessibility-opt-in' } });
  t.same(JSON.parse(String(contrast.flagMetadata.attachment)), { background: '#000000', fontScale: 1.25, foreground: '#ffff00' }, 'the attachment as metadata');
  const noContrast = await byDefault.getStringDetails('color-theme', 'fallback', { targetingKey: 'u1', prefers_contrast: false, client: 'web-app' });
  t.match(noContrast, { value: 'light', reason: 'DEFAULT' }, 'false does not match operator "true": the default variant');

  // Number context values against number constraints: isoneof [3, 4] and gte 200.
  const modern = await checkout.getStringDetails('payment-provider', 'none', { targetingKey: 'u1', country: 'DE', api_version: 3, user_agent: 'Mozilla/5.0' });
  t.match(modern, { reason: 'TARGETING_MATCH', flagMetadata: { segments: 'eu-customers,modern-clients' } }, 'api_version 3 (a number) is one of [3, 4]');
  const old = await checkout.getStringDetails('payment-provider', 'none', { targetingKey: 'u1', country: 'DE', api_version: 5, user_agent: 'Mozilla/5.0' });
  t.match(old, { reason: 'TARGETING_MATCH', flagMetadata: { segments: 'eu-customers' } }, 'api_version 5 is not: the second rule');
  const spender = await checkout.getBooleanDetails('express-shipping', false, { targetingKey: 'u1', cart_total: 250, currency: 'EUR', country: 'FR' });
  t.match(spender, { value: true, reason: 'TARGETING_MATCH', flagMetadata: { segments: 'big-spenders,eu-customers' } }, 'cart_total 250 (a number) >= 200');

  // Over 200 entity ids with typed contexts, the SDK answers as /evaluate/v1 does with strings.
  const rng = mulberry32(12);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
  let differences = 0;
  const outcomes = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const theme: EvaluationContext = { targetingKey: `user-${i}`, beta_opt_in: pick([true, false]), plan: pick(['pro', 'free']), platform: pick(['ios', 'web']), prefers_contrast: pick([true, false]), client: pick(['web-app', 'ios-app']) };
    const a = await byDefault.getStringDetails('color-theme', 'x', theme);
    const b = await evaluateV1(url, 'variant', 'default', 'color-theme', theme);
    if (a.value !== b.variantKey && differences++ < 5) t.equal(a.value, b.variantKey, JSON.stringify(theme));
    outcomes.add(`color-theme ${a.value}`);
    const pay: EvaluationContext = { targetingKey: `user-${i}`, country: pick(['DE', 'US']), api_version: pick([2, 3, 4]), user_agent: pick(['Mozilla', 'a-bot']) };
    const c = await checkout.getStringDetails('payment-provider', 'x', pay);
    const d = await evaluateV1(url, 'variant', 'checkout', 'payment-provider', pay);
    if (c.value !== d.variantKey && differences++ < 5) t.equal(c.value, d.variantKey, JSON.stringify(pay));
    outcomes.add(`payment-provider ${c.value}`);
    const ship: EvaluationContext = { targetingKey: `user-${i}`, cart_total: pick([10, 50, 200, 250.5]), item_count: pick([1, 5]), currency: pick(['EUR', 'JPY']), country: pick(['DE', 'US']) };
    const e = await checkout.getBooleanDetails('express-shipping', false, ship);
    const f = await evaluateV1(url, 'boolean', 'checkout', 'express-shipping', ship);
    if (e.value !== f.enabled && differences++ < 5) t.equal(e.value, f.enabled, JSON.stringify(ship));
    outcomes.add(`express-shipping ${e.value}`);
  }
  t.equal(differences, 0, '600 evaluations with typed contexts: the same answers as /evaluate/v1');
  t.ok(outcomes.size >= 6, `the contexts reach different outcomes: ${[...outcomes].sort().join(', ')}`);

  // A missing flag, a missing namespace, a type the flag does not have: the caller's default.
  const missing = await byDefault.getStringDetails('no-such-flag', 'fallback', { targetingKey: 'u1' });
  t.match(missing, { value: 'fallback', reason: 'ERROR', errorCode: 'FLAG_NOT_FOUND' });
  t.match(missing.errorMessage, /not found/);
  const nowhere = await clientFor(url, { 'X-Svc-Namespace': 'nope' });
  t.match(await nowhere.getBooleanDetails('gift-wrapping', false, {}), { value: false, errorCode: 'FLAG_NOT_FOUND' }, 'an unknown namespace');
  t.match(await byDefault.getBooleanDetails('color-theme', true, { targetingKey: 'u1' }), { value: true, errorCode: 'TYPE_MISMATCH' }, 'a string flag read as a boolean');
  const invalid = await byDefault.getStringDetails('color-theme', 'fallback', { targetingKey: 'u1', profile: { plan: 'pro' } });
  t.match(invalid, { value: 'fallback', errorCode: 'INVALID_CONTEXT' }, 'an object in the context');
  t.match(invalid.errorMessage, /context\.profile/);

  // Bulk over plain HTTP: ETag, 304, a new ETag after a change.
  const context = { targetingKey: 'u1', country: 'DE', cart_total: 250, currency: 'EUR' };
  const first = await bulk(url, context, { 'X-Flipt-Namespace': 'checkout' });
  t.equal(first.status, 200);
  t.same((first.body!.flags as Json[]).map((f) => f.key), ['express-shipping', 'gift-wrapping', 'payment-provider']);
  const unchanged = await bulk(url, context, { 'X-Flipt-Namespace': 'checkout', 'If-None-Match': first.etag! });
  t.same([unchanged.status, unchanged.etag, unchanged.body], [304, first.etag, undefined], '304, the ETag, no body');
  const file = join(state, 'checkout/features.yml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/(key: gift-wrapping\n\s+name: Gift wrapping\n\s+type: BOOLEAN_FLAG_TYPE\n\s+enabled:) true/, '$1 false'));
  await waitFor('the reload', async () => (await bulk(url, context, { 'X-Flipt-Namespace': 'checkout', 'If-None-Match': first.etag! })).status === 200);
  const changed = await bulk(url, context, { 'X-Flipt-Namespace': 'checkout', 'If-None-Match': first.etag! });
  t.not(changed.etag, first.etag, 'a new ETag');
  t.match((changed.body!.flags as Json[]).find((f) => f.key === 'gift-wrapping'), { value: false }, 'the new state');
  t.equal(await checkout.getBooleanValue('gift-wrapping', true, { targetingKey: 'u1' }), false, 'and the SDK sees it');
});

const gitTest = testsNeeding(tap, 'git', gitUnavailableReason());

gitTest.test('git backend, two branches: the reference header and the environment header', async (t) => {
  const repo = await createTestRepo(t);
  const files = Object.fromEntries(STATE_FILES.map((f) => [f, readFileSync(join(EXAMPLES, f), 'utf8')]));
  await repo.commit('main', files);
  const checkoutFile = files['checkout/features.yml']!;
  const changed = checkoutFile.replace(/enabled: true\n*$/, 'enabled: false\n');
  t.not(changed, checkoutFile);
  await repo.commit('feature', { ...files, 'checkout/features.yml': changed });

  const cache = tempDir(t, 'vexil-ofrep-sdk-cache-');
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
  const main = await clientFor(url, { 'X-Flipt-Namespace': 'checkout' });
  const byReference = await clientFor(url, { 'X-Flipt-Namespace': 'checkout', 'X-Svc-Reference': 'feature' });
  const byEnvironment = await clientFor(url, { 'X-Svc-Namespace': 'checkout', 'X-Flipt-Environment': 'staging' });
  const gift = (c: Client) => c.getBooleanValue('gift-wrapping', true, { targetingKey: 'u1' });
  t.same([await gift(main), await gift(byReference), await gift(byEnvironment)], [true, false, false], 'main, X-Svc-Reference: feature, X-Flipt-Environment: staging');
  const missingBranch = await clientFor(url, { 'X-Flipt-Namespace': 'checkout', 'X-Svc-Reference': 'no-such-branch' });
  t.match(await missingBranch.getBooleanDetails('gift-wrapping', true, {}), { value: true, reason: 'ERROR', errorCode: 'GENERAL', errorMessage: /reference "no-such-branch" not found/ }, 'an unknown reference: the default value, GENERAL (400)');
  const unmapped = await clientFor(url, { 'X-Flipt-Namespace': 'checkout', 'X-Flipt-Environment': 'production' });
  t.match(await unmapped.getBooleanDetails('gift-wrapping', true, {}), { value: true, reason: 'ERROR', errorCode: 'GENERAL', errorMessage: /environment "production" not found/ }, 'an unmapped environment: the default value, GENERAL (400)');

  for (const id of ['a', 'b', 'c', 'd', 'e']) {
    const context = { targetingKey: id, country: 'DE', api_version: 4, user_agent: 'Mozilla' };
    const viaSdk = await byReference.getStringValue('payment-provider', 'x', context);
    const viaV1 = await evaluateV1(url, 'variant', 'checkout', 'payment-provider', context, 'feature');
    t.equal(viaSdk, viaV1.variantKey, `${id}: the feature branch, as /evaluate/v1 with reference feature`);
  }

  // The namespace `default` is the same in both branches; its bulk ETags still differ.
  const onMain = await bulk(url, { targetingKey: 'u1' });
  const onFeature = await bulk(url, { targetingKey: 'u1' }, { 'X-Svc-Reference': 'feature' });
  // The same flags, each stamped with its branch's revision (metadata.version).
  type Flag = { metadata: Json };
  const flagsWithout = (body: Json | undefined) =>
    (body!.flags as Flag[]).map((f) => {
      const { version: _version, ...metadata } = f.metadata;
      return { ...f, metadata };
    });
  t.same(flagsWithout(onFeature.body), flagsWithout(onMain.body), 'the same answer from both branches');
  t.not((onFeature.body!.metadata as Json).version, (onMain.body!.metadata as Json).version, 'each with its own revision');
  t.not(onFeature.etag, onMain.etag, 'but not the same ETag: one branch never gets a 304 for the other');
  t.equal((await bulk(url, { targetingKey: 'u1' }, { 'X-Svc-Reference': 'feature', 'If-None-Match': onMain.etag! })).status, 200);
  t.equal((await bulk(url, { targetingKey: 'u1' }, { 'X-Flipt-Environment': 'staging', 'If-None-Match': onFeature.etag! })).status, 304, 'the environment names the same branch');
});
