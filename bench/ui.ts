/**
 * `npm run bench -- ui`: the web UI in headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core, test/support/browser.ts's flags) against a real `vexil serve` of the compiled
 * build, local storage with generated state (test/support/generate-state.ts), over loopback.
 * Targets (issue 14 §5):
 *
 * 1. First load of the flags page of a 1,000-flag namespace from a cold cache (a fresh browser
 *    context per sample: empty HTTP cache, new connections): first contentful paint (the Paint
 *    Timing entry `first-contentful-paint`) ≤ 300 ms. Also reported: when the table's first rows
 *    are painted. Baseline, measured alternately in the same run: a static HTML page of the same
 *    byte size as the UI (index.html + script + stylesheet, uncompressed; a flags table written
 *    out) served gzip-compressed by a bare node:http server on loopback: what Chromium on this
 *    machine needs to paint that many bytes with no application in between; and, as the floor, a
 *    minimal page (the header and title written out, no script).
 * 2. The flags page of a 10,000-flag namespace, cold:
 *    - interactive ≤ 1 s, defined as: max(the frame showing the table's first row (with the search
 *      field in the DOM), the end of the last main-thread task over 50 ms begun before the first
 *      keystroke) + the first keystroke's latency (below). That is when a key typed the moment the
 *      rows appeared would have its filtered rows on screen. Baseline: the page's own data read,
 *      `fetch` of the same `/api/v1/namespaces/default/flags?limit=0` + `JSON.parse`, in a fresh
 *      context of the same browser: the floor of any page that shows the full list.
 *    - search keystroke → results ≤ 50 ms: real key events (CDP) into #flag-search one at a time,
 *      from the keydown's timestamp (when the browser received it) to the end of the first frame
 *      whose `#flag-count` shows the count the filter must give. Baseline: the same keys into a
 *      bare `<input>` with no handler on a static page: the browser's own key-to-frame latency.
 *
 * 3. The diff page of a 3,000-flag change: first paint ≤ 1 s (bench/ui-diff.ts, issue 22).
 * 4. "Used by" of a segment of a 3,000-flag namespace ≤ 100 KB on the wire (issue 22; bench/ui-usage.ts,
 *    no browser needed), against the evaluation snapshot it replaced.
 *
 * Only one Chromium may run at a time on the shared machine: the bench waits until no other
 * `chromium` process runs before it starts its own. Not part of `all` (needs Chromium, ~1–2 min).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, chromiumUnavailableReason } from '../test/support/browser.js';
import { generateState } from '../test/support/generate-state.js';
import { REPO, type BenchBuild } from './build.js';
import { sleep, startVexil, stop, waitFor } from './http-harness.js';
import { fmtInt, fmtMs, fmtRatio, median, percentile, verdict } from './stats.js';
import { runUiDiffBench } from './ui-diff.js';
import { UI_PROBE, type UiProbeState } from './ui-probe.js';
import { measureUsageBytes } from './ui-usage.js';
import type { StaticPagesArgs } from './workers/static-pages.js';

export interface UiBenchOptions {
  /** Flags in the namespace of the first-load measurement. */
  smallFlags: number;
  /** Flags in the namespace of the interactive and keystroke measurements. */
  bigFlags: number;
  /** Cold first loads per page (vexil and the static baseline, alternately). */
  loadSamples: number;
  /** Cold loads of the big flags page (each followed by the keystrokes). */
  bigSamples: number;
}

export const UI_DEFAULTS: UiBenchOptions = { smallFlags: 1000, bigFlags: 10_000, loadSamples: 15, bigSamples: 7 };
export const UI_QUICK: UiBenchOptions = { smallFlags: 1000, bigFlags: 10_000, loadSamples: 3, bigSamples: 2 };

export const FCP_TARGET_MS = 300;
export const INTERACTIVE_TARGET_MS = 1000;
export const KEYSTROKE_TARGET_MS = 50;

/** Typed into the search field one key at a time: narrowing, widening again, then a description word. */
const KEYS: readonly string[] = [...'flag_00123', ...Array<string>(10).fill('Backspace'), ...'boolean'];

const VIEWPORT = { width: 1280, height: 800 };

/** A link Chromium emulates (DevTools network throttling): round trip added, bandwidth both ways. */
interface NetworkShape {
  rttMs: number;
  mbitPerSec: number;
}

/** Informative only (no target): the 10k-flag page over an office or home link instead of loopback. */
const LINK: NetworkShape = { rttMs: 20, mbitPerSec: 100 };

type Verdicts = Array<{ target: string; ok: boolean }>;

interface ResourceTiming {
  name: string;
  startTime: number;
  requestStart: number;
  responseStart: number;
  responseEnd: number;
  transferSize: number;
  encodedBodySize: number;
  decodedBodySize: number;
}

interface LoadSample {
  fcp: number;
  domContentLoaded: number;
  rowsAt: number | null;
  rowsPaintedAt: number | null;
  longTasks: Array<[number, number]>;
  resources: ResourceTiming[];
}

// ---------------------------------------------------------------- setup

/** Builds src/ui with Vite into the bench build's dist/ui, where its compiled ui-assets.js looks. */
function buildUi(build: BenchBuild, log: (s: string) => void): { files: Array<{ name: string; bytes: number; gzipBytes: number }>; buildMs: number } {
  const outDir = join(build.root, 'dist/ui');
  log(`ui: building src/ui with Vite into ${outDir} ...`);
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [join(REPO, 'node_modules/vite/bin/vite.js'), 'build', '--config', join(REPO, 'src/ui/vite.config.ts'), '--outDir', outDir, '--emptyOutDir'], {
    cwd: REPO,
    encoding: 'utf8',
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  if (r.status !== 0) throw new Error(`vite build failed (exit ${r.status}):\n${r.stdout}${r.stderr}`);
  const files = [join(outDir, 'index.html'), ...readdirSync(join(outDir, 'assets')).map((n) => join(outDir, 'assets', n))]
    .filter((f) => statSync(f).isFile())
    .map((f) => {
      const body = readFileSync(f);
      return { name: f.slice(outDir.length + 1), bytes: body.length, gzipBytes: gzipSync(body, { level: 9 }).length };
    });
  return { files, buildMs: performance.now() - t0 };
}

/** Waits until no other Chromium runs (one browser at a time on this machine). */
async function waitForBrowserSlot(log: (s: string) => void): Promise<void> {
  // Zombies (ended, not yet reaped by their parent) hold no CPU or memory: they do not count.
  const alive = (pid: string) => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  };
  const others = () =>
    spawnSync('pgrep', ['-f', 'chromium'], { encoding: 'utf8' })
      .stdout.split('\n')
      .filter((pid) => pid !== '' && alive(pid))
      .join(' ');
  if (others() === '') return;
  log('ui: another chromium is running; waiting for it to end (up to 15 min) ...');
  await waitFor('the other chromium to end', () => (others() === '' ? true : undefined), 15 * 60_000);
}

async function startStaticPages(build: BenchBuild, args: StaticPagesArgs): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(build.root, 'bench/workers/static-pages.js'), JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const port = await waitFor('the static page server to listen', () => {
    if (child.exitCode !== null) throw new Error(`the static page server exited (${child.exitCode})`);
    const m = /"port":(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** The FCP baseline: a flags table written out as static HTML, `bytes` long. */
function staticPageOf(bytes: number): string {
  const head = '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>vexil</title><link rel="icon" href="data:,"></head><body><header><a href="/">vexil</a></header><main><h1>Flags in default</h1><table><thead><tr><th>Key</th><th>Name</th><th>Type</th><th>State</th></tr></thead><tbody>';
  const tail = '</tbody></table></main></body></html>';
  const rows: string[] = [];
  let size = head.length + tail.length;
  for (let i = 0; size < bytes; i++) {
    const row = `<tr><td><a href="/ui/namespaces/default/flags/flag_${String(i).padStart(6, '0')}"><code>flag_${String(i).padStart(6, '0')}</code></a></td><td>Flag ${i}</td><td>${i % 10 < 7 ? 'Variant' : 'Boolean'}</td><td>enabled</td></tr>`;
    rows.push(row);
    size += row.length;
  }
  return head + rows.join('') + tail;
}

/** The FCP floor: the UI's index.html with its header written out instead of a script. */
const MINIMAL_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>vexil</title><link rel="icon" href="data:,"></head><body><header><a href="/ui/namespaces">vexil</a></header><main><h1>Flags in default</h1></main></body></html>';

const BARE_INPUT_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>input</title><link rel="icon" href="data:,"></head><body><label for="flag-search">Search</label> <input id="flag-search" type="search" autocomplete="off"><p id="flag-count">no handler</p></body></html>';

// ---------------------------------------------------------------- in the browser

/**
 * Resolves once `condition` (a JavaScript expression) holds in the page, checked every 5 ms.
 * Not `page.waitForFunction`: with a string it evaluates through `eval`, which the UI's
 * Content-Security-Policy (no 'unsafe-eval') refuses; an expression given to `page.evaluate`
 * is compiled by the DevTools protocol, outside the page's policy.
 */
async function waitInPage(page: Page, condition: string, timeoutMs: number): Promise<void> {
  await page.evaluate(`new Promise((resolve, reject) => {
    const end = Date.now() + ${timeoutMs};
    const check = () => {
      if (${condition}) resolve(true);
      else if (Date.now() > end) reject(new Error(${JSON.stringify(`timed out waiting for ${condition}`)}));
      else setTimeout(check, 5);
    };
    check();
  })`);
}

async function freshContext(browser: Browser): Promise<BrowserContext> {
  const ctx = await browser.newContext({ viewport: VIEWPORT });
  await ctx.addInitScript(UI_PROBE);
  return ctx;
}

/** One cold load: navigate, wait for FCP (and, with `rows`, the painted first rows), read the timings. */
async function coldLoad(browser: Browser, url: string, rows: boolean, network?: NetworkShape): Promise<{ sample: LoadSample; ctx: BrowserContext; page: Page }> {
  const ctx = await freshContext(browser);
  const page = await ctx.newPage();
  if (network !== undefined) {
    const cdp = await ctx.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: network.rttMs,
      downloadThroughput: (network.mbitPerSec * 1e6) / 8,
      uploadThroughput: (network.mbitPerSec * 1e6) / 8,
    });
  }
  await page.goto(url, { waitUntil: 'load' });
  await waitInPage(page, `performance.getEntriesByName('first-contentful-paint').length > 0${rows ? ' && window.__uiProbe.rowsPaintedAt !== null' : ''}`, 60_000);
  const sample = (await page.evaluate(`(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    const pick = (r) => ({ name: r.name, startTime: r.startTime, requestStart: r.requestStart, responseStart: r.responseStart, responseEnd: r.responseEnd, transferSize: r.transferSize, encodedBodySize: r.encodedBodySize, decodedBodySize: r.decodedBodySize });
    return {
      fcp: performance.getEntriesByName('first-contentful-paint')[0].startTime,
      domContentLoaded: nav.domContentLoadedEventEnd,
      rowsAt: window.__uiProbe.rowsAt,
      rowsPaintedAt: window.__uiProbe.rowsPaintedAt,
      longTasks: window.__uiProbe.longTasks.slice(),
      resources: [pick(nav), ...performance.getEntriesByType('resource').map(pick)],
    };
  })()`)) as LoadSample;
  return { sample, ctx, page };
}

/** The count text #flag-count must show for a search (the page's filter: key, name, description). */
function expectedCount(texts: readonly string[], search: string): string {
  const needle = search.trim().toLowerCase();
  const n = needle === '' ? texts.length : texts.filter((t) => t.includes(needle)).length;
  // As the page writes counts (src/ui/lib/format.ts countOf): `of 1 flag`, `of 10,000 flags`.
  return n === 0 ? 'No flags match' : ` of ${fmtInt(n)} ${n === 1 ? 'flag' : 'flags'}`;
}

/** Types KEYS into #flag-search one at a time; latency of each (ms, keydown → results painted). */
async function typeKeys(page: Page, texts: readonly string[] | undefined): Promise<number[]> {
  await page.focus('#flag-search');
  let value = '';
  const latencies: number[] = [];
  for (const [i, key] of KEYS.entries()) {
    value = key === 'Backspace' ? value.slice(0, -1) : value + key;
    await page.evaluate(`window.__uiProbe.expect = ${JSON.stringify(texts === undefined ? null : expectedCount(texts, value))}`);
    await page.keyboard.press(key);
    await waitInPage(page, `window.__uiProbe.keys.length === ${i + 1} && window.__uiProbe.keys[${i}].paintedAt !== null`, 30_000);
    const rec = (await page.evaluate(`window.__uiProbe.keys[${i}]`)) as UiProbeState['keys'][number];
    if (rec.value !== value) throw new Error(`key ${i} (${key}): the field holds ${JSON.stringify(rec.value)}, expected ${JSON.stringify(value)}`);
    if (texts !== undefined && !rec.shown!.includes(expectedCount(texts, value))) {
      throw new Error(`after typing ${JSON.stringify(value)} the page shows ${JSON.stringify(rec.shown)}, expected ${JSON.stringify(expectedCount(texts, value))}`);
    }
    latencies.push(rec.paintedAt! - rec.keyDownAt);
  }
  return latencies;
}

// ---------------------------------------------------------------- report helpers

const stat = (xs: readonly number[]) => ({ median: median(xs), p90: percentile(xs, 90), min: Math.min(...xs), max: Math.max(...xs) });
const ms = (n: number) => `${fmtMs(n)} ms`;
const kb = (bytes: number) => (bytes < 10_240 ? `${(bytes / 1024).toFixed(1)} KB` : `${fmtInt(bytes / 1024)} KB`);
const row = (label: string, xs: readonly number[]) => {
  const s = stat(xs);
  return `| ${label} | ${xs.length} | ${ms(s.median)} | ${ms(s.p90)} | ${ms(s.min)} | ${ms(s.max)} |`;
};
const TABLE_HEAD = ['| measure | samples | median | p90 | min | max |', '|---|---:|---:|---:|---:|---:|'];

function resource(s: LoadSample, ...parts: string[]): ResourceTiming {
  const r = s.resources.find((x) => parts.every((p) => x.name.includes(p)));
  if (r === undefined) throw new Error(`no request for ${parts.join('…')} among ${s.resources.map((x) => x.name).join(', ')}`);
  return r;
}

const flagsRequest = (s: LoadSample) => resource(s, '/flags?');

// ---------------------------------------------------------------- the benchmark

export async function runUiBench(build: BenchBuild, opts: UiBenchOptions, log: (s: string) => void): Promise<{ markdown: string; verdicts: Verdicts }> {
  const missing = chromiumUnavailableReason();
  if (missing !== undefined) throw new Error(`npm run bench -- ui needs Chromium: ${missing}`);
  const ui = buildUi(build, log);
  const uiBytes = ui.files.reduce((n, f) => n + f.bytes, 0);
  log(`  built in ${(ui.buildMs / 1000).toFixed(1)} s: ${ui.files.map((f) => `${f.name} ${fmtInt(f.bytes)} B (gzip ${fmtInt(f.gzipBytes)} B)`).join(', ')}`);

  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-ui-'));
  const started: ChildProcess[] = [];
  const { chromium } = await import('playwright-core');
  let browser: Browser | undefined;
  try {
    log(`ui: "used by" bytes on the wire ...`);
    const usedBy = await measureUsageBytes(build, dir, log);
    const staticPage = staticPageOf(uiBytes);
    const pages = await startStaticPages(build, { pages: { '/static.html': staticPage, '/minimal.html': MINIMAL_PAGE, '/input.html': BARE_INPUT_PAGE } });
    started.push(pages.child);

    await waitForBrowserSlot(log);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_ARGS] });
    log(`ui: ${browser.version()} headless, viewport ${VIEWPORT.width}×${VIEWPORT.height}, a fresh context (cold cache) per load`);

    // 1. First load, small namespace.
    // Each vexil its own data folder: the user's default one may hold a database of another vexil version.
    const small = await startVexil(build, join(dir, 'small'), { state: generateState({ flags: opts.smallFlags, namespaces: 1 }), config: [`data_dir: ${join(dir, 'small', 'data')}`] });
    started.push(small.child);
    const smallUrl = `${small.url}/ui/namespaces/default/flags`;
    log(`ui: ${opts.loadSamples} cold loads of ${smallUrl} (${opts.smallFlags} flags), of the ${fmtInt(staticPage.length)}-byte static page and of the minimal page, in turns ...`);
    // One unmeasured load of each first: Chromium's own first-use costs (its disk cache folder, fonts).
    for (const url of [smallUrl, `${pages.url}/static.html`, `${pages.url}/minimal.html`]) await (await coldLoad(browser, url, url === smallUrl)).ctx.close();
    const vexilLoads: LoadSample[] = [];
    const staticLoads: LoadSample[] = [];
    const minimalLoads: LoadSample[] = [];
    for (let i = 0; i < opts.loadSamples; i++) {
      const v = await coldLoad(browser, smallUrl, true);
      vexilLoads.push(v.sample);
      await v.ctx.close();
      for (const [page, into] of [['static.html', staticLoads], ['minimal.html', minimalLoads]] as const) {
        const s = await coldLoad(browser, `${pages.url}/${page}`, false);
        into.push(s.sample);
        await s.ctx.close();
      }
    }
    await stop(small.child);
    const fcp = vexilLoads.map((s) => s.fcp);
    const fcpStatic = staticLoads.map((s) => s.fcp);
    const fcpMinimal = minimalLoads.map((s) => s.fcp);
    const smallRows = vexilLoads.map((s) => s.rowsPaintedAt!);
    const smallFlagsReq = vexilLoads.map(flagsRequest);
    log(`  FCP median ${ms(median(fcp))} (static page ${ms(median(fcpStatic))}); first rows painted median ${ms(median(smallRows))}`);

    // 2. The big namespace: interactive and keystrokes.
    const big = await startVexil(build, join(dir, 'big'), { state: generateState({ flags: opts.bigFlags, namespaces: 1 }), config: [`data_dir: ${join(dir, 'big', 'data')}`] });
    started.push(big.child);
    const listPath = '/api/v1/namespaces/default/flags?limit=0';
    const listed = await fetch(`${big.url}${listPath}`);
    const listBody = Buffer.from(await listed.arrayBuffer());
    const flags = (JSON.parse(listBody.toString('utf8')) as { flags: Array<{ key: string; name: string; description: string }> }).flags;
    if (flags.length !== opts.bigFlags) throw new Error(`the list holds ${flags.length} flags, expected ${opts.bigFlags}`);
    const texts = flags.map((f) => `${f.key}\u0000${f.name}\u0000${f.description}`.toLowerCase());
    const listGzip = gzipSync(listBody, { level: 6 }).length;
    const bigUrl = `${big.url}/ui/namespaces/default/flags`;
    log(`ui: ${opts.bigSamples} cold loads of ${bigUrl} (${opts.bigFlags} flags; the list is ${kb(listBody.length)} of JSON), ${KEYS.length} keystrokes each ...`);
    await (await coldLoad(browser, bigUrl, true)).ctx.close();

    const bigLoads: LoadSample[] = [];
    const interactive: number[] = [];
    const keyLatencies: number[] = [];
    const firstKey: number[] = [];
    const fetchParse: Array<{ fetchMs: number; parseMs: number }> = [];
    const bareKeys: number[] = [];
    for (let i = 0; i < opts.bigSamples; i++) {
      const v = await coldLoad(browser, bigUrl, true);
      const keys = await typeKeys(v.page, texts);
      const probe = (await v.page.evaluate('window.__uiProbe')) as UiProbeState;
      await v.ctx.close();
      const firstKeyDown = probe.keys[0]!.keyDownAt;
      const blockedUntil = probe.longTasks.filter(([start]) => start < firstKeyDown).reduce((end, [start, d]) => Math.max(end, start + d), 0);
      interactive.push(Math.max(v.sample.rowsPaintedAt!, blockedUntil) + keys[0]!);
      firstKey.push(keys[0]!);
      keyLatencies.push(...keys);
      bigLoads.push({ ...v.sample, longTasks: probe.longTasks });

      // Baseline: the same list read by a page of the same origin, cold.
      const b = await freshContext(browser);
      const bp = await b.newPage();
      await bp.goto(`${big.url}/meta/info`);
      fetchParse.push(
        (await bp.evaluate(`(async () => {
          const t0 = performance.now();
          const res = await fetch(${JSON.stringify(listPath)}, { headers: { Accept: 'application/json' } });
          const text = await res.text();
          const t1 = performance.now();
          const n = JSON.parse(text).flags.length;
          if (n !== ${opts.bigFlags}) throw new Error('flags: ' + n);
          return { fetchMs: t1 - t0, parseMs: performance.now() - t1 };
        })()`)) as { fetchMs: number; parseMs: number },
      );
      await b.close();

      // Baseline: the same keys into an input with no handler.
      const k = await freshContext(browser);
      const kp = await k.newPage();
      await kp.goto(`${pages.url}/input.html`);
      bareKeys.push(...(await typeKeys(kp, undefined)));
      await k.close();
      await sleep(100);
    }
    // Informative: the same page over LINK, where the list's size, not the page, sets the time.
    const linkLoads: LoadSample[] = [];
    for (let i = 0; i < Math.min(3, opts.bigSamples); i++) {
      const l = await coldLoad(browser, bigUrl, true, LINK);
      linkLoads.push(l.sample);
      await l.ctx.close();
    }
    await stop(big.child);

    // 3. The diff page of a 3,000-flag change (ui-diff.ts).
    const diffPage = await runUiDiffBench(build, browser, opts.bigSamples, log);

    const fetchParseMs = fetchParse.map((f) => f.fetchMs + f.parseMs);
    const bigRows = bigLoads.map((s) => s.rowsPaintedAt!);
    const bigReq = bigLoads.map(flagsRequest);
    const longAfterRows = bigLoads.map((s) => s.longTasks.filter(([start, d]) => start + d > s.rowsAt!).reduce((n, [, d]) => n + d, 0));
    log(`  interactive median ${ms(median(interactive))} (fetch + parse ${ms(median(fetchParseMs))}); keystroke median ${ms(median(keyLatencies))} p90 ${ms(percentile(keyLatencies, 90))} (bare input ${ms(median(bareKeys))})`);

    // ------------------------------------------------------------ verdicts and report
    const fcpMedian = median(fcp);
    const interactiveMedian = median(interactive);
    const keyP90 = percentile(keyLatencies, 90);
    const okFcp = fcpMedian <= FCP_TARGET_MS;
    const okInteractive = interactiveMedian <= INTERACTIVE_TARGET_MS;
    const okKeys = keyP90 <= KEYSTROKE_TARGET_MS;
    const uiFiles = ui.files.map((f) => `${f.name} ${kb(f.bytes)} (${kb(f.gzipBytes)} gzip)`).join(', ');
    const d = (xs: readonly number[]) => ms(median(xs));

    const markdown = [
      `${browser.version()} headless (${CHROMIUM}), viewport ${VIEWPORT.width}×${VIEWPORT.height}, against \`vexil serve\` (compiled build, local storage, generated state, one namespace) over loopback. A fresh browser context per load: empty HTTP cache, new connections. UI files: ${uiFiles}. Times are from navigation start, on the page's clock.`,
      '',
      `#### 1. First load, flags page of a ${fmtInt(opts.smallFlags)}-flag namespace (${opts.loadSamples} cold loads of each page, in turns)`,
      '',
      ...TABLE_HEAD,
      row('vexil UI: first contentful paint', fcp),
      row(`baseline: static page of the same size (${kb(staticPage.length)}, bare node:http, gzip): first contentful paint`, fcpStatic),
      row(`floor: minimal static page (${MINIMAL_PAGE.length} B: the header, no script): first contentful paint`, fcpMinimal),
      row('vexil UI: index.html received (responseEnd)', vexilLoads.map((s) => s.resources[0]!.responseEnd)),
      row('vexil UI: script received (responseEnd)', vexilLoads.map((s) => resource(s, '/ui/assets/', '.js').responseEnd)),
      row('vexil UI: DOMContentLoaded (the module script has run)', vexilLoads.map((s) => s.domContentLoaded)),
      row(`vexil UI: flags list (\`limit=0\`, ${kb(smallFlagsReq[0]!.decodedBodySize)}) received (responseEnd)`, smallFlagsReq.map((r) => r.responseEnd)),
      row('vexil UI: first table rows painted', smallRows),
      '',
      `FCP: vexil UI / static page of the same size = **${fmtRatio(fcpMedian / median(fcpStatic))}**; vexil UI / minimal page = ${fmtRatio(fcpMedian / median(fcpMinimal))} (medians). Target FCP ≤ ${FCP_TARGET_MS} ms, judged on the median of ${opts.loadSamples} cold loads (${ms(fcpMedian)}; p90 ${ms(percentile(fcp, 90))}): **${verdict(okFcp)}**.`,
      '',
      `#### 2. Flags page of a ${fmtInt(opts.bigFlags)}-flag namespace (${opts.bigSamples} cold loads, ${KEYS.length} keystrokes each)`,
      '',
      `The page reads \`GET ${listPath}\`: ${kb(listBody.length)} of JSON (full flag objects: every flag with its variants and their attachments, ${fmtInt(listBody.length / flags.length)} bytes a flag; the page uses 5 of their fields), ${bigReq[0]!.encodedBodySize < bigReq[0]!.decodedBodySize ? `compressed to ${kb(bigReq[0]!.encodedBodySize)} on the wire` : `sent uncompressed (gzip level 6 would make it ${kb(listGzip)})`}, and filters in the browser.`,
      '',
      ...TABLE_HEAD,
      row('flags request: time to first byte (responseStart − requestStart)', bigReq.map((r) => r.responseStart - r.requestStart)),
      row('flags request: download (responseEnd − responseStart)', bigReq.map((r) => r.responseEnd - r.responseStart)),
      row('flags request: received (responseEnd, from navigation start)', bigReq.map((r) => r.responseEnd)),
      row('first table row in the DOM', bigLoads.map((s) => s.rowsAt!)),
      row('first table rows painted', bigRows),
      row('main-thread long tasks (> 50 ms) after the first row, total', longAfterRows),
      row('first keystroke: keydown → results painted', firstKey),
      row('**interactive** (rows painted, thread free, + first keystroke)', interactive),
      row('baseline: `fetch` + `JSON.parse` of the same list, same origin, cold', fetchParseMs),
      row('baseline: of which `JSON.parse`', fetchParse.map((f) => f.parseMs)),
      '',
      `Interactive: vexil UI / fetch + parse = **${fmtRatio(interactiveMedian / median(fetchParseMs))}** (medians). Target ≤ ${INTERACTIVE_TARGET_MS} ms, judged on the median of ${opts.bigSamples} cold loads (${ms(interactiveMedian)}; p90 ${ms(percentile(interactive, 90))}): **${verdict(okInteractive)}**.`,
      '',
      `Over an emulated ${LINK.mbitPerSec} Mbit/s link with ${LINK.rttMs} ms round trips (Chromium's network throttling; informative, no target; ${linkLoads.length} cold loads):`,
      '',
      ...TABLE_HEAD,
      row('flags request: download (responseEnd − responseStart)', linkLoads.map((s) => flagsRequest(s).responseEnd - flagsRequest(s).responseStart)),
      row('first table rows painted', linkLoads.map((s) => s.rowsPaintedAt!)),
      '',
      `Keystrokes (\`${KEYS.map((k) => (k === 'Backspace' ? '⌫' : k)).join('')}\`: narrowing to 10 flags, back to all, then a description word), keydown → the frame showing the filtered count and rows. Both rows are mostly the wait for the next frame (up to 16.7 ms at 60 Hz), hence a ratio near 1:`,
      '',
      ...TABLE_HEAD,
      row(`vexil UI, ${fmtInt(opts.bigFlags)} flags`, keyLatencies),
      row('baseline: the same keys into a bare `<input>` (no handler)', bareKeys),
      '',
      `Keystroke: vexil UI / bare input = **${fmtRatio(median(keyLatencies) / median(bareKeys))}** (medians). Target ≤ ${KEYSTROKE_TARGET_MS} ms, judged on the p90 of ${keyLatencies.length} keystrokes, since the slow ones are what a person notices (${ms(keyP90)}; median ${d(keyLatencies)}): **${verdict(okKeys)}**.\n\nLoad average when the measurements ended: ${loadavg().map((n) => n.toFixed(1)).join(' ')} (this machine's CPUs: ${availableParallelism()}); the browser, vexil and the baseline server share them.`,
      '',
      diffPage.markdown,
      '',
      `Load average when the diff page's measurements ended: ${loadavg().map((n) => n.toFixed(1)).join(' ')}.`,
      '',
      usedBy.markdown,
    ].join('\n');
    return {
      markdown,
      verdicts: [
        { target: `UI first load, ${fmtInt(opts.smallFlags)}-flag namespace, cold cache: FCP ≤ ${FCP_TARGET_MS} ms (median ${ms(fcpMedian)}, p90 ${ms(percentile(fcp, 90))})`, ok: okFcp },
        { target: `flags page, ${fmtInt(opts.bigFlags)} flags: interactive ≤ ${INTERACTIVE_TARGET_MS} ms (median ${ms(interactiveMedian)}, p90 ${ms(percentile(interactive, 90))})`, ok: okInteractive },
        { target: `flags page, ${fmtInt(opts.bigFlags)} flags: search keystroke → results ≤ ${KEYSTROKE_TARGET_MS} ms (p90 ${ms(keyP90)}, median ${d(keyLatencies)})`, ok: okKeys },
        diffPage.verdict,
        usedBy.verdict,
      ],
    };
  } finally {
    await browser?.close();
    for (const child of started) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}
