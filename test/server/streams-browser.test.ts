/**
 * Live updates in a real browser: headless Chromium loads a page from a second loopback origin
 * that follows a namespace with the browser's own EventSource (no library), against a real server
 * with authentication required and CORS on for the page's origin. EventSource cannot send an
 * Authorization header, so the page authenticates with vexil's session cookie (withCredentials).
 *
 * The page shows the first state, then a state file changes and it shows the change; then every
 * connection is cut and the browser reconnects by itself, sending Last-Event-ID: the state it
 * already has is not sent again (the page's next message is the next change). Screenshot:
 * test-output/screenshots/streams-event-source.png.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { bootstrapTokenFrom, startAuthServer, type AuthServer } from '../auth/support.js';
import { chromiumUnavailableReason, firstPage, saveScreenshot, startBrowser, startPageServer } from '../support/browser.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'chromium', chromiumUnavailableReason());

const PAGE = readFileSync(new URL('./fixtures/browser/event-source.html', import.meta.url), 'utf8');

/** Sets the description of the `color` flag of the default namespace (the `api` fixture). */
function describeColor(s: AuthServer, description: string): void {
  const file = join(s.dir, 'state', 'features.yml');
  writeFileSync(file, readFileSync(file, 'utf8').replace(/(- key: color\n\s+name: Color\n\s+description: ).*/, `$1${description}`));
}

t.test('EventSource from another origin: the state, each change, and a reconnect that resends nothing', async (t) => {
  const site = await startPageServer(t, { pages: { '/': PAGE } });
  const s = await startAuthServer(t, {
    yaml: `cors:\n  enabled: true\n  allowed_origins: ["${site.url}"]\nauthentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n`,
  });
  const token = bootstrapTokenFrom(s.logs)!;
  const etag = async () =>
    (await fetch(`${s.url}/internal/v1/evaluation/snapshot/namespace/default`, { headers: { authorization: `Bearer ${token}` } })).headers.get('etag');

  const browser = await startBrowser(t);
  await browser.addCookies([{ name: 'svc_client_token', value: token, url: s.url }]);
  const page = await firstPage(browser);
  const stream = `${s.url}/evaluate/v1/namespaces/default/stream?snapshot=true`;
  await page.goto(`${site.url}/?${new URLSearchParams({ stream, credentials: 'include' }).toString()}`);
  const lines = () => page.locator('#log li').allInnerTexts();
  const waitForLine = (text: string, nth = 0) => page.locator('#log li').filter({ hasText: text }).nth(nth).waitFor({ timeout: 30_000 });

  await waitForLine('message 1:');
  const first = `message 1: default@local id=${await etag()} color="Button color"`;
  t.same(await lines(), ['open', first], 'connected with the cookie through CORS; the current state');

  describeColor(s, 'Live colour');
  await waitForLine('message 2:');
  const second = `message 2: default@local id=${await etag()} color="Live colour"`;
  t.same((await lines())[2], second, 'the change, within the open connection');

  // Every connection cut: EventSource reconnects on its own, with Last-Event-ID = the second state's ETag.
  s.http.server.closeAllConnections();
  await waitForLine('open', 1);
  describeColor(s, 'After the reconnect');
  await waitForLine('message 3:');
  const third = `message 3: default@local id=${await etag()} color="After the reconnect"`;
  t.same(await lines(), ['open', first, second, 'error (readyState 0)', 'open', third], 'nothing resent at the reconnect; then the next change');
  t.comment(`screenshot: ${await saveScreenshot(page, 'streams-event-source')}`);

  const metrics = await (await fetch(`${s.url}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  t.match(metrics, /\nvexil_stream_events_total\{protocol="sse"\} 3\n/, 'three states written: none at the reconnect');
});
