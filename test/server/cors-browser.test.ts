/**
 * CORS from a real page: headless Chromium loads a page from a second loopback origin (another
 * port) that calls a real `vexil serve` (the examples' state) with fetch: an evaluation with
 * `content-type: application/json` (so the browser sends a preflight first), one with
 * `Authorization` while authentication is required, one without a token (the 401 must be readable),
 * and the exposed response headers. The assertions read what a person sees on the page; each
 * case leaves a screenshot in test-output/screenshots/.
 *
 * - the page's origin in cors.allowed_origins: every answer shows, credentials included;
 * - another origin, CORS off: the browser refuses to hand over the answers ("Failed to fetch");
 * - `*`: answers show, but a request with credentials is refused by the browser (no credentials with `*`).
 * Plain-HTTP checks of the same headers on both server paths: cors.test.ts.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { chromiumUnavailableReason, firstPage, saveScreenshot, startBrowser, startPageServer } from '../support/browser.js';
import { copyExampleState } from '../support/example-state.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'chromium', chromiumUnavailableReason());

const PAGE = readFileSync(new URL('./fixtures/browser/cors-fetch.html', import.meta.url), 'utf8');
const TOKEN = 'browser-test-token';
const FAILED = 'failed: TypeError: Failed to fetch';

/** `vexil serve` over a copy of examples/ with the given VEXIL_* settings; returns its URL. */
async function serveExamples(t: Test, env: Record<string, string>): Promise<string> {
  const state = copyExampleState(t);
  const data = mkdtempSync(join(tmpdir(), 'vexil-data-'));
  t.teardown(() => rmSync(data, { recursive: true, force: true }));
  const { listening } = await serveCli(t, ['serve'], {
    env: { VEXIL_SERVER_HTTP_PORT: '0', VEXIL_STORAGE_LOCAL_PATH: state, VEXIL_DATA_DIR: data, ...env },
  });
  return String(listening.url);
}

const AUTH_REQUIRED = {
  VEXIL_AUTHENTICATION_REQUIRED: 'true',
  VEXIL_AUTHENTICATION_METHODS_TOKEN_ENABLED: 'true',
  VEXIL_AUTHENTICATION_METHODS_TOKEN_BOOTSTRAP_TOKEN: TOKEN,
};

/** Loads the page from `site` against `vexil` and returns the text of its lines once it is done. */
async function runPage(t: Test, site: string, vexil: string, query: Record<string, string>, screenshot: string) {
  const browser = await startBrowser(t);
  const page = await firstPage(browser);
  await page.goto(`${site}/?${new URLSearchParams({ vexil, ...query }).toString()}`);
  await page.locator('#done').filter({ hasText: 'done' }).waitFor({ timeout: 30_000 });
  const text = async (id: string) => (await page.locator(`#${id}`).innerText()).trim();
  const lines = {
    unauthenticated: await text('unauthenticated'),
    variant: await text('variant'),
    boolean: await text('boolean'),
    headers: await text('headers'),
  };
  t.comment(`screenshot: ${await saveScreenshot(page, screenshot)}`);
  return lines;
}

/** vexil's own answer, from Node (no CORS involved), to compare the page's text with. */
async function expected(vexil: string, token?: string) {
  const post = async (kind: string, body: unknown) => {
    const res = await fetch(`${vexil}/evaluate/v1/${kind}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify(body),
    });
    return { body: (await res.json()) as Record<string, unknown>, revision: res.headers.get('x-vexil-revision') };
  };
  const variant = await post('variant', { namespaceKey: 'default', flagKey: 'color-theme', entityId: 'ada@example.com', context: { platform: 'web' } });
  const boolean = await post('boolean', { namespaceKey: 'checkout', flagKey: 'gift-wrapping', entityId: 'u1', context: {} });
  return {
    variant: `color-theme for ada@example.com: ${String(variant.body.variantKey)} (${String(variant.body.reason)})`,
    boolean: `gift-wrapping for u1: enabled=${String(boolean.body.enabled)} (${String(boolean.body.reason)})`,
    revision: variant.revision ?? '',
  };
}

t.test('an allowed origin reads every answer: authenticated, with credentials, the 401, the exposed headers', async (t) => {
  const site = await startPageServer(t, { pages: { '/': PAGE } });
  const vexil = await serveExamples(t, { ...AUTH_REQUIRED, VEXIL_CORS_ENABLED: 'true', VEXIL_CORS_ALLOWED_ORIGINS: site.url });
  const want = await expected(vexil, TOKEN);
  t.equal(want.variant, 'color-theme for ada@example.com: dark (MATCH_EVALUATION_REASON)', 'staff get the dark theme');

  const lines = await runPage(t, site.url, vexil, { token: TOKEN, credentials: 'include' }, 'cors-allowed-origin');
  t.equal(lines.unauthenticated, 'without a token: HTTP 401: request was not authenticated', 'the error body is readable');
  t.equal(lines.variant, want.variant);
  t.equal(lines.boolean, want.boolean, 'a request with credentials: allowed with a listed origin');
  t.match(lines.headers, new RegExp(`^response headers: X-Vexil-Revision=${want.revision} X-Request-Id=[0-9a-f-]{36}$`));
  t.not(want.revision, '');
});

t.test('an origin not in the list, or CORS off: the browser withholds every answer', async (t) => {
  const allowed = await startPageServer(t, { pages: { '/': PAGE } });
  const other = await startPageServer(t, { pages: { '/': PAGE } });
  const listed = await serveExamples(t, { VEXIL_CORS_ENABLED: 'true', VEXIL_CORS_ALLOWED_ORIGINS: allowed.url });
  const off = await serveExamples(t, {});

  for (const [vexil, shot] of [
    [listed, 'cors-origin-not-allowed'],
    [off, 'cors-off'],
  ] as const) {
    const lines = await runPage(t, other.url, vexil, {}, shot);
    t.equal(lines.unauthenticated, `without a token: ${FAILED}`, shot);
    t.equal(lines.variant, `color-theme for ada@example.com: ${FAILED}`, shot);
    t.equal(lines.boolean, `gift-wrapping for u1: ${FAILED}`, shot);
    t.equal(lines.headers, 'response headers: failed: Error: no answer to read', shot);
  }
  // The same server answers the allowed origin: it is the origin that is refused, not the page.
  const fine = await runPage(t, allowed.url, listed, {}, 'cors-origin-allowed-open-server');
  t.match(fine.variant, /^color-theme for ada@example\.com: dark \(MATCH_EVALUATION_REASON\)$/);
});

t.test('"*": any origin reads answers, but the browser refuses a request with credentials', async (t) => {
  const site = await startPageServer(t, { pages: { '/': PAGE } });
  const vexil = await serveExamples(t, { ...AUTH_REQUIRED, VEXIL_CORS_ENABLED: 'true' });
  const want = await expected(vexil, TOKEN);

  const plain = await runPage(t, site.url, vexil, { token: TOKEN }, 'cors-any-origin');
  t.equal(plain.unauthenticated, 'without a token: HTTP 401: request was not authenticated');
  t.equal(plain.variant, want.variant, 'an Authorization header is no credential in the CORS sense: allowed');
  t.equal(plain.boolean, want.boolean);

  const withCredentials = await runPage(t, site.url, vexil, { token: TOKEN, credentials: 'include' }, 'cors-any-origin-credentials');
  t.equal(withCredentials.variant, want.variant);
  t.equal(withCredentials.boolean, `gift-wrapping for u1: ${FAILED}`, 'credentials: include with "*": refused by the browser');
});
