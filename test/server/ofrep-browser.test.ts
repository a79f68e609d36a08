/**
 * OpenFeature's web SDK with the OFREP web provider (@openfeature/web-sdk 1.10.0,
 * @openfeature/ofrep-web-provider 0.4.3), unmodified, in headless Chromium on another origin than
 * a real `vexil serve` (the examples' state, authentication required, CORS on for the page's
 * origin). Served to the page from node_modules through an import map.
 *
 * The page sets five evaluation contexts with typed values (booleans, numbers) and shows every
 * flag's details: boolean and string flags of two namespaces (one provider per namespace, the
 * namespace in X-Flipt-Namespace) and a flag that does not exist. Each row must equal vexil's
 * own OFREP answer for that flag and context, and its value the /evaluate/v1 answer for the
 * context with its values written as strings; the unknown flag shows FLAG_NOT_FOUND and the
 * default value. With a wrong token the provider reads vexil's 401 and fails fatally. The page
 * authenticates with a bearer token, which its EventSource could not send, so vexil advertises no
 * `eventStreams` to it (ofrep-events-browser.test.ts covers change events on an open server).
 * Screenshots: test-output/screenshots/ofrep-web-provider*.png.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import tap from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { chromiumUnavailableReason, firstPage, saveScreenshot, startBrowser, startPageServer } from '../support/browser.js';
import { copyExampleState } from '../support/example-state.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'chromium', chromiumUnavailableReason());

const PAGE = readFileSync(new URL('./fixtures/browser/ofrep-web.html', import.meta.url), 'utf8');
const TOKEN = 'ofrep-browser-token';
const PACKAGES = ['@openfeature/core', '@openfeature/web-sdk', '@openfeature/ofrep-web-provider'];

type Row = string[];
type Json = Record<string, unknown>;

async function tableRows(page: Page): Promise<Row[]> {
  const rows = page.locator('#results tbody tr');
  const out: Row[] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push((await rows.nth(i).locator('td').allInnerTexts()).map((s) => s.trim()));
  return out;
}

async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

t.test('the OFREP web provider in Chromium, from another origin, through CORS', async (t) => {
  const site = await startPageServer(t, { pages: { '/': PAGE }, packages: PACKAGES });
  const state = copyExampleState(t);
  const data = mkdtempSync(join(tmpdir(), 'vexil-data-'));
  t.teardown(() => rmSync(data, { recursive: true, force: true }));
  const { listening, logs } = await serveCli(t, ['serve'], {
    env: {
      VEXIL_SERVER_HTTP_PORT: '0',
      VEXIL_STORAGE_LOCAL_PATH: state,
      VEXIL_DATA_DIR: data,
      VEXIL_LOG_REQUESTS: 'all',
      VEXIL_AUTHENTICATION_REQUIRED: 'true',
      VEXIL_AUTHENTICATION_METHODS_TOKEN_ENABLED: 'true',
      VEXIL_AUTHENTICATION_METHODS_TOKEN_BOOTSTRAP_TOKEN: TOKEN,
      VEXIL_CORS_ENABLED: 'true',
      VEXIL_CORS_ALLOWED_ORIGINS: site.url,
    },
  });
  const vexil = String(listening.url);

  const page = await firstPage(await startBrowser(t));
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto(`${site.url}/?${new URLSearchParams({ vexil, token: TOKEN }).toString()}`);
  const status = page.locator('#status');
  await status.filter({ hasNotText: 'starting…' }).waitFor({ timeout: 30_000 });
  t.equal((await status.innerText()).trim(), 'done', 'the providers initialised and every context was evaluated');
  t.same(consoleErrors, [], 'no browser errors (CORS refusals would show here)');
  t.comment(`screenshot: ${await saveScreenshot(page, 'ofrep-web-provider')}`);

  const rows = await tableRows(page);
  t.equal(rows.length, 5 * 6, 'five contexts, six flags each');
  for (const [contextText, namespace, flag, value, variant, reason, error] of rows) {
    const context = JSON.parse(contextText!) as Json;
    const what = `${namespace}/${flag} for ${contextText}`;
    if (flag === 'no-such-flag') {
      t.same([value, reason, error], ['fallback', 'ERROR', 'FLAG_NOT_FOUND'], `${what}: not found, the default value`);
      continue;
    }
    const ofrep = await postJson(`${vexil}/ofrep/v1/evaluate/flags/${flag}`, { context }, { 'x-flipt-namespace': namespace! });
    t.equal(ofrep.status, 200, what);
    t.same([value, variant, reason, error], [String(ofrep.body.value), String(ofrep.body.variant), String(ofrep.body.reason), ''], `${what}: as vexil's OFREP answer`);

    // The same context with its values as strings, through /evaluate/v1: the same outcome.
    const { targetingKey, ...rest } = context;
    const strings = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, String(v)]));
    const boolean = flag === 'new-search' || flag === 'gift-wrapping' || flag === 'express-shipping';
    const v1 = await postJson(`${vexil}/evaluate/v1/${boolean ? 'boolean' : 'variant'}`, { namespaceKey: namespace, flagKey: flag, entityId: targetingKey, context: strings });
    t.equal(value, String(boolean ? v1.body.enabled : v1.body.variantKey), `${what}: as /evaluate/v1 with string values`);
  }

  // Typed values reached the constraints: a boolean and a number decided these.
  const cell = (key: string, flag: string) => rows.find((r) => r[0]!.includes(`"targetingKey":"${key}"`) && r[2] === flag)!;
  t.same(cell('u-1', 'color-theme').slice(3, 6), ['dark', 'dark', 'TARGETING_MATCH'], 'beta_opt_in: true (a JSON boolean) matched the beta-testers segment');
  t.same(cell('u-4', 'express-shipping').slice(3, 6), ['true', 'true', 'TARGETING_MATCH'], 'cart_total: 250 (a JSON number) matched big-spenders');
  t.same(cell('ada@example.com', 'color-theme').slice(3, 6), ['dark', 'dark', 'TARGETING_MATCH'], 'staff get the dark theme');

  const ofrepLines = logs.filter((l) => l.msg === 'request' && String(l.url).startsWith('/ofrep/')).map((l) => `${String(l.method)} ${String(l.url)} ${Number(l.status)}`);
  t.ok(ofrepLines.includes('OPTIONS /ofrep/v1/evaluate/flags 204'), 'the bulk request was preflighted');
  t.ok(ofrepLines.includes('POST /ofrep/v1/evaluate/flags 200'), 'and made');
  t.notOk(ofrepLines.some((l) => / [45]\d\d$/.test(l)), `no refused request: ${ofrepLines.filter((l) => / [45]\d\d$/.test(l)).join('; ')}`);

  // A wrong token: the provider reads vexil's 401 (CORS headers on OFREP errors too) and fails
  // fatally, instead of seeing a network failure it would retry.
  await page.goto(`${site.url}/?${new URLSearchParams({ vexil, token: 'not-a-token' }).toString()}`);
  await status.filter({ hasNotText: 'starting…' }).waitFor({ timeout: 30_000 });
  t.equal((await status.innerText()).trim(), 'failed: ProviderFatalError: Initialization failed', 'unauthorized: a fatal provider error (a CORS-blocked answer would be a fetch error)');
  t.ok(
    logs.some((l) => l.msg === 'request' && l.method === 'POST' && l.url === '/ofrep/v1/evaluate/flags' && l.status === 401),
    'vexil answered 401',
  );
  t.comment(`screenshot: ${await saveScreenshot(page, 'ofrep-web-provider-wrong-token')}`);
});
