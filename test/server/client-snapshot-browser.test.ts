/**
 * Flipt's browser SDKs, unmodified, in headless Chromium on another origin than a real
 * `vexil serve` (the examples' state, authentication required, CORS on for the page's origin):
 * @flipt-io/flipt-client-browser 0.4.0 and the browser build of @flipt-io/flipt-client-js 0.5.1
 * (the one that also sends X-Flipt-Environment). Served to the page from node_modules through
 * an import map: no CDN, no bundler.
 *
 * - init downloads the snapshots through CORS (preflight, Authorization, the Flipt headers) and the
 *   page shows variant and boolean results for ten entities; every cell equals vexil's own
 *   /evaluate/v1 answer for that entity and context;
 * - the Refresh button: unchanged state → every client reports "unchanged" and vexil answered 304
 *   (the client read the exposed ETag, the preflight allowed If-None-Match); after a state file
 *   changes → the changed namespace's clients report "changed" and the page shows the new value;
 * - the same page from an origin not in cors.allowed_origins: init fails with the browser's error.
 * Screenshots: test-output/screenshots/flipt-client-browser*.png.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import tap, { type Test } from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { chromiumUnavailableReason, firstPage, saveScreenshot, startBrowser, startPageServer } from '../support/browser.js';
import { copyExampleState } from '../support/example-state.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'chromium', chromiumUnavailableReason());

const PAGE = readFileSync(new URL('./fixtures/browser/flipt-client-browser.html', import.meta.url), 'utf8');
const TOKEN = 'browser-sdk-token';
const SNAPSHOT_PATH = '/internal/v1/evaluation/snapshot/namespace/';
const CLIENTS = ['sdkDefault', 'sdkCheckout', 'jsDefault', 'jsCheckout'];

type Row = string[];

async function tableRows(page: Page, id: string): Promise<Row[]> {
  const rows = page.locator(`#${id} tbody tr`);
  const out: Row[] = [];
  for (let i = 0; i < (await rows.count()); i++) out.push((await rows.nth(i).locator('td').allInnerTexts()).map((s) => s.trim()));
  return out;
}

/** What each row of the page must show, from vexil's own /evaluate/v1 (Node, no CORS). */
async function serverRow(vexil: string, entityId: string, contextText: string): Promise<Row> {
  const context = JSON.parse(contextText) as Record<string, string>;
  const post = async (kind: 'variant' | 'boolean', namespaceKey: string, flagKey: string) => {
    const res = await fetch(`${vexil}/evaluate/v1/${kind}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ namespaceKey, flagKey, entityId, context }),
    });
    const body = (await res.json()) as { variantKey?: string; enabled?: boolean; reason: string };
    if (res.status !== 200) throw new Error(`${flagKey}: HTTP ${res.status} ${JSON.stringify(body)}`);
    return kind === 'variant' ? `${body.variantKey || '∅'} (${body.reason})` : `${String(body.enabled)} (${body.reason})`;
  };
  return [
    entityId,
    contextText,
    await post('variant', 'default', 'color-theme'),
    await post('variant', 'checkout', 'payment-provider'),
    await post('boolean', 'checkout', 'gift-wrapping'),
    await post('boolean', 'checkout', 'express-shipping'),
  ];
}

/** Both tables of the page, compared row by row with vexil's answers. */
async function compareWithServer(t: Test, page: Page, vexil: string): Promise<Row[]> {
  const sdk = await tableRows(page, 'browser-sdk');
  const js = await tableRows(page, 'client-js');
  t.equal(sdk.length, 10, 'ten entities shown');
  t.same(js.map((r) => r.slice(0, 2)), sdk.map((r) => r.slice(0, 2)), 'both tables show the same entities');
  for (const [i, row] of sdk.entries()) {
    const want = await serverRow(vexil, row[0]!, row[1]!);
    t.same(row, want, `flipt-client-browser: ${row[0]}`);
    t.same(js[i], want, `flipt-client-js: ${row[0]}`);
  }
  return sdk;
}

/** The snapshot requests vexil logged: `METHOD path status`. */
function snapshotRequests(logs: ReadonlyArray<Record<string, unknown>>): string[] {
  return logs.filter((l) => l.msg === 'request' && String(l.url).startsWith(SNAPSHOT_PATH)).map((l) => `${String(l.method)} ${String(l.url).slice(SNAPSHOT_PATH.length)} ${Number(l.status)}`);
}

async function waitFor(what: string, check: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Clicks Refresh and returns the line it writes once every client has refreshed. */
async function refresh(page: Page): Promise<string> {
  await page.click('#refresh');
  // The page empties the line on click and writes it when every client is done.
  const line = page.locator('#refreshed').filter({ hasText: /refresh/ });
  await line.waitFor({ timeout: 30_000 });
  return (await line.innerText()).trim();
}

t.test('flipt-client-browser and flipt-client-js in Chromium, from another origin, through CORS', async (t) => {
  const site = await startPageServer(t, { pages: { '/': PAGE }, packages: ['@flipt-io/flipt-client-browser', '@flipt-io/flipt-client-js'] });
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
  t.equal((await status.innerText()).trim(), 'ready', 'both SDKs initialised from vexil');
  t.same(consoleErrors, [], 'no browser errors (CORS refusals would show here)');
  t.ok(site.requests.includes('GET /node_modules/@flipt-io/flipt-client-browser/dist/index.mjs 200'), 'the SDK came from node_modules');

  const before = await compareWithServer(t, page, vexil);
  t.ok(before.some((r) => r[2] === 'dark (MATCH_EVALUATION_REASON)'), 'staff get the dark theme');
  t.ok(before.some((r) => r[4] === 'true (DEFAULT_EVALUATION_REASON)'), 'gift wrapping on');
  t.comment(`screenshot: ${await saveScreenshot(page, 'flipt-client-browser')}`);

  await waitFor('the init requests in the log', () => snapshotRequests(logs).filter((r) => r.startsWith('GET')).length >= 4);
  const init = snapshotRequests(logs);
  // The second client of a namespace may get the browser's cached copy, revalidated (304 to the
  // browser, which hands its stored 200 to the page): what a browser does with an ETag'd answer.
  const gets = init.filter((r) => r.startsWith('GET'));
  t.equal(gets.length, 4, `init: one snapshot request per client: ${gets.join('; ')}`);
  for (const ns of ['default', 'checkout']) {
    t.same(gets.filter((r) => r.startsWith(`GET ${ns} `)).sort()[0], `GET ${ns} 200`, `${ns}: downloaded`);
  }
  t.ok(init.some((r) => r.startsWith('OPTIONS') && r.endsWith(' 204')), `preflights answered 204: ${init.join('; ')}`);
  t.notOk(init.some((r) => r.startsWith('OPTIONS') && !r.endsWith(' 204')), 'and nothing else');

  // Unchanged: each refresh is a 304 the client recognises by the (exposed) ETag.
  const mark = snapshotRequests(logs).length;
  t.equal(await refresh(page), `refreshed ${CLIENTS.map((c) => `${c}: unchanged`).join(', ')}`);
  await waitFor('the refresh requests in the log', () => snapshotRequests(logs).slice(mark).filter((r) => r.startsWith('GET')).length >= 4);
  t.same(
    snapshotRequests(logs).slice(mark).filter((r) => r.startsWith('GET')).sort(),
    ['GET checkout 304', 'GET checkout 304', 'GET default 304', 'GET default 304'],
    'every refresh answered 304 (If-None-Match got through the preflight)',
  );

  // A change to checkout: its clients see it on the next refresh; default's keep their state.
  const file = join(state, 'checkout/features.yml');
  const revision = async () => (await fetch(`${vexil}/api/v1/namespaces`, { headers: { authorization: `Bearer ${TOKEN}` } })).headers.get('x-vexil-revision');
  const old = await revision();
  const text = readFileSync(file, 'utf8');
  const changed = text.replace(/(key: gift-wrapping\n\s+name: Gift wrapping\n\s+type: BOOLEAN_FLAG_TYPE\n\s+)enabled: true/, '$1enabled: false');
  t.not(changed, text, 'the edit applies');
  writeFileSync(file, changed);
  await waitFor('the reload', async () => (await revision()) !== old);
  t.equal(await refresh(page), 'refreshed sdkDefault: unchanged, sdkCheckout: changed, jsDefault: unchanged, jsCheckout: changed');
  const after = await compareWithServer(t, page, vexil);
  t.same([...new Set(after.map((r) => r[4]))], ['false (DEFAULT_EVALUATION_REASON)'], 'gift wrapping now off for everyone (the flag is off: its default, false), as the page shows');
  t.comment(`screenshot: ${await saveScreenshot(page, 'flipt-client-browser-after-change')}`);

  // The same page from an origin not in cors.allowed_origins: the SDKs cannot initialise.
  const other = await startPageServer(t, { pages: { '/': PAGE }, packages: ['@flipt-io/flipt-client-browser', '@flipt-io/flipt-client-js'] });
  await page.goto(`${other.url}/?${new URLSearchParams({ vexil, token: TOKEN }).toString()}`);
  await status.filter({ hasNotText: 'starting…' }).waitFor({ timeout: 30_000 });
  t.equal((await status.innerText()).trim(), 'failed: TypeError: Failed to fetch', 'another origin: the browser withholds the snapshot');
  t.comment(`screenshot: ${await saveScreenshot(page, 'flipt-client-browser-origin-not-allowed')}`);
});
