/**
 * The proof of OFREP change events in a real browser: headless Chromium loads a page from a second
 * loopback origin that runs OpenFeature's web SDK with the OFREP web provider (both unmodified,
 * from node_modules through an import map, as ofrep-browser.test.ts serves them) with the
 * provider's DEFAULT options: no polling, so the only way the page learns of a change is the
 * `eventStreams` of vexil's bulk answer. A real `vexil serve` (CORS on for the page's origin)
 * serves the examples' state, from a folder and again from a Git repository; the test edits the
 * state file, or commits the edit to the served branch (as a push lands it), and nothing else (no
 * focus, visibility or context change on the page), and the value the page shows changes.
 *
 * Also checked: the page shows the revision and namespace the flag's metadata carries (what
 * OpenFeature's telemetry reads as feature_flag.version / feature_flag.set.id), the browser opened
 * the advertised stream on vexil's origin, and its refetch carried the event's ETag as
 * `flagConfigEtag`. Screenshots: test-output/screenshots/ofrep-web-events-{local,git}.png.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tap, { type Test } from 'tap';
import { serveCli } from '../cli/run-cli.js';
import { chromiumUnavailableReason, firstPage, saveScreenshot, startBrowser, startPageServer } from '../support/browser.js';
import { EXAMPLE_STATE_FILES, EXAMPLES, copyExampleState } from '../support/example-state.js';
import { gitUnavailableReason } from '../support/git-fixture.js';
import { createTestRepo } from '../support/git-repo.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'chromium', chromiumUnavailableReason());

const PAGE = readFileSync(new URL('./fixtures/browser/ofrep-web-events.html', import.meta.url), 'utf8');
const PACKAGES = ['@openfeature/core', '@openfeature/web-sdk', '@openfeature/ofrep-web-provider'];
/** How long the page may take to show a state (generous: a shared 2-core machine). Not asserted. */
const WAIT_MS = 30_000;

/** Turns new-search on in the default namespace's file. */
function turnNewSearchOn(text: string): string {
  return text.replace(/(- key: new-search\n(?:\s+\w+: .*\n)*?\s+enabled: )false/, '$1true');
}

/**
 * Serves the state with `env` (plus CORS and a request log), loads the page, checks the first
 * state, calls `change()` and waits for the page to show the change; `name` names the screenshot.
 */
async function proveChange(t: Test, name: string, env: Record<string, string>, change: () => Promise<void>): Promise<void> {
  const site = await startPageServer(t, { pages: { '/': PAGE }, packages: PACKAGES });
  const data = mkdtempSync(join(tmpdir(), 'vexil-data-'));
  t.teardown(() => rmSync(data, { recursive: true, force: true }));
  const { listening, logs } = await serveCli(t, ['serve'], {
    env: {
      VEXIL_SERVER_HTTP_PORT: '0',
      VEXIL_DATA_DIR: data,
      VEXIL_LOG_REQUESTS: 'all',
      VEXIL_CORS_ENABLED: 'true',
      VEXIL_CORS_ALLOWED_ORIGINS: site.url,
      ...env,
    },
  });
  const vexil = String(listening.url);
  /** The revision vexil serves now, as its single-flag answer names it (not the bulk path: those are the page's). */
  const revision = async () => {
    const res = await fetch(`${vexil}/ofrep/v1/evaluate/flags/new-search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"context":{}}' });
    return ((await res.json()) as { metadata: { version: string } }).metadata.version;
  };

  const page = await firstPage(await startBrowser(t));
  const consoleErrors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  await page.goto(`${site.url}/?${new URLSearchParams({ vexil }).toString()}`);
  await page.locator('#status').filter({ hasNotText: 'starting…' }).waitFor({ timeout: WAIT_MS });
  t.equal((await page.locator('#status').innerText()).trim(), 'ready');
  t.equal(await page.locator('#value').innerText(), 'false', 'new-search is off');
  const first = await revision();
  t.equal(await page.locator('#version').innerText(), first, 'flag metadata: version = the served revision');
  t.equal(await page.locator('#set').innerText(), 'default', 'flag metadata: flagSetId = the namespace');

  // The provider opened the advertised stream (on vexil's origin) before anything changes.
  const streamOpened = () => logs.some((l) => l.msg === 'request' && l.method === 'GET' && String(l.url).startsWith('/ofrep/v1/namespaces/default/events?') && l.status === 200);
  while (!streamOpened()) await new Promise((r) => setTimeout(r, 20));

  // The change: the state, nothing on the page.
  await change();
  await page.locator('#value', { hasText: 'true' }).waitFor({ timeout: WAIT_MS });
  t.pass('the page shows the new value');
  const second = await revision();
  t.not(second, first);
  t.equal(await page.locator('#version').innerText(), second, 'and the new revision in the flag metadata');
  // Every flag of the namespace is listed as changed: its metadata.version moved with the revision.
  const events = await page.locator('#log li').allInnerTexts();
  t.equal(events.length, 1, `one event, no stale or error event: ${events.join('; ')}`);
  t.match(events[0], /^configuration changed: (.+,)?new-search(,.+)?$/, 'ConfigurationChanged naming new-search');
  t.comment(`screenshot: ${await saveScreenshot(page, `ofrep-web-events-${name}`)}`);

  const requests = logs.filter((l) => l.msg === 'request' && String(l.url).startsWith('/ofrep/')).map((l) => `${String(l.method)} ${String(l.url)} ${Number(l.status)}`);
  const bulk = requests.filter((r) => /^POST \/ofrep\/v1\/evaluate\/flags[ ?]/.test(r));
  t.equal(bulk.length, 2, `the first evaluation and one refetch, no polling: ${bulk.join('; ')}`);
  t.match(bulk[1], /^POST \/ofrep\/v1\/evaluate\/flags\?flagConfigEtag=[0-9a-f]{40} 200$/, 'the refetch carried the event’s ETag');
  t.notOk(requests.some((r) => / [45]\d\d$/.test(r)), `no refused request: ${requests.join('; ')}`);
  t.same(consoleErrors, [], 'no browser errors (a CORS refusal of the stream would show here)');
}

t.test('a local folder: a file edit reaches a page on another origin through the provider’s default options, with no focus or context change', async (t) => {
  const state = copyExampleState(t);
  await proveChange(t, 'local', { VEXIL_STORAGE_LOCAL_PATH: state }, async () => {
    const file = join(state, 'default.features.yml');
    const text = readFileSync(file, 'utf8');
    t.not(turnNewSearchOn(text), text, 'the edit turns new-search on');
    writeFileSync(file, turnNewSearchOn(text));
  });
});

const gitTest = testsNeeding(t, 'git', gitUnavailableReason());
gitTest.test('a Git repository: a commit on the served branch reaches the page the same way', async (t) => {
  const repo = await createTestRepo(t);
  const files = Object.fromEntries(EXAMPLE_STATE_FILES.map((f) => [f, readFileSync(join(EXAMPLES, f), 'utf8')]));
  await repo.commit('main', files);
  const cache = mkdtempSync(join(tmpdir(), 'vexil-git-cache-'));
  t.teardown(() => rmSync(cache, { recursive: true, force: true }));
  await proveChange(
    t,
    'git',
    // No webhook here: the push is found by the poll (1 s), then told to the page at once.
    { VEXIL_STORAGE_TYPE: 'git', VEXIL_STORAGE_GIT_REPOSITORY: repo.gitdir, VEXIL_STORAGE_GIT_CACHE_DIR: cache, VEXIL_STORAGE_GIT_POLL_INTERVAL: '1s' },
    async () => {
      await repo.commit('main', { 'default.features.yml': turnNewSearchOn(files['default.features.yml']!) }, { message: 'Turn new-search on' });
    },
  );
});
