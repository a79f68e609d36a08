/**
 * The diff page's part of `npm run bench -- ui` (issue 22): a 3,000-flag change opened on the
 * diff page first paints ≤ 1 s. One `vexil serve` (compiled build) on a local Git repository of two
 * generated 3,000-flag states (`main`, and `feature` generated with another seed: every flag and
 * segment differs), one namespace. Per cold load (a fresh browser context: empty cache, new
 * connections), from navigation start on the page's clock: when the comparison's summary and its
 * first (collapsed) namespace are in the DOM, and when the frame showing them is produced (the
 * measure judged). Without the impact preview (`impact=0`: the page's own cost over the diff's);
 * with `impact=10000` (the page's default) as information, since the server's evaluation of the
 * sample then sets the time. Baseline: `fetch` + `JSON.parse` of the same `GET /api/v1/diff`
 * answer from a page of the same origin, cold: the floor of any page that shows this diff.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { generateState } from '../test/support/generate-state.js';
import { createTestRepo } from '../test/support/git-repo.js';
import type { BenchBuild } from './build.js';
import { startVexil, stop } from './http-harness.js';
import { fmtInt, fmtMs, fmtRatio, median, percentile, verdict } from './stats.js';

export const DIFF_FLAGS = 3000;
export const DIFF_PAINT_TARGET_MS = 1000;

/**
 * Installed before the page's scripts: `window.__diffProbe.at` when `#diff-overall` and the first
 * `details.diff-namespace` are in the DOM, `paintedAt` when the frame showing them was produced
 * (requestAnimationFrame, then a message handled once that frame is done). Plain browser
 * JavaScript in a string: bench/ is compiled without the DOM library.
 */
const DIFF_PROBE = String.raw`(() => {
  const probe = { at: null, paintedAt: null, entries: 0 };
  Object.defineProperty(window, '__diffProbe', { value: probe });
  const mo = new MutationObserver(() => {
    if (probe.at !== null) return;
    if (document.getElementById('diff-overall') !== null && document.querySelector('details.diff-namespace') !== null) {
      probe.at = performance.now();
      probe.entries = document.querySelectorAll('details.diff-entry').length;
      mo.disconnect();
      requestAnimationFrame(() => {
        const ch = new MessageChannel();
        ch.port1.onmessage = () => { probe.paintedAt = performance.now(); };
        ch.port2.postMessage(null);
      });
    }
  });
  mo.observe(document, { childList: true, subtree: true });
})();`;

interface DiffLoad {
  at: number;
  paintedAt: number;
  entries: number;
  openEntries: number;
  apiStart: number;
  apiTtfb: number;
  apiEnd: number;
  apiBytes: number;
}

async function until(page: Page, condition: string, timeoutMs: number): Promise<void> {
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

async function coldDiffLoad(browser: Browser, url: string): Promise<DiffLoad> {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    await ctx.addInitScript(DIFF_PROBE);
    const page = await ctx.newPage();
    await page.goto(url, { waitUntil: 'load' });
    await until(page, 'window.__diffProbe.paintedAt !== null', 120_000);
    return (await page.evaluate(`(() => {
      const api = performance.getEntriesByType('resource').find((r) => r.name.includes('/api/v1/diff?'));
      return {
        at: window.__diffProbe.at,
        paintedAt: window.__diffProbe.paintedAt,
        entries: window.__diffProbe.entries,
        openEntries: document.querySelectorAll('details.diff-entry[open]').length,
        apiStart: api ? api.startTime : NaN,
        apiTtfb: api ? api.responseStart - api.requestStart : NaN,
        apiEnd: api ? api.responseEnd : NaN,
        apiBytes: api ? api.decodedBodySize : NaN,
      };
    })()`)) as DiffLoad;
  } finally {
    await ctx.close();
  }
}

export async function runUiDiffBench(build: BenchBuild, browser: Browser, samples: number, log: (s: string) => void): Promise<{ markdown: string; verdict: { target: string; ok: boolean } }> {
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-ui-diff-'));
  const teardowns: Array<() => void | Promise<void>> = [];
  try {
    const repo = await createTestRepo({ teardown: (fn) => teardowns.push(fn) });
    const files = (fs: ReadonlyArray<{ path: string; text: string }>) => Object.fromEntries(fs.map((f) => [f.path, f.text]));
    const base = await repo.commit('main', files(generateState({ flags: DIFF_FLAGS, namespaces: 1 })));
    await repo.commit('feature', files(generateState({ flags: DIFF_FLAGS, namespaces: 1, seed: 7 })), { parent: base });
    const v = await startVexil(build, join(root, 'serve'), {
      storage: ['storage:', '  type: git', '  git:', `    repository: ${repo.gitdir}`, `    cache_dir: ${join(root, 'cache')}`, '    poll_interval: 1h', '    prebuild: [main, feature]'],
      // Its own data folder: not the user's (another vexil's database there may be of another version).
      config: [`data_dir: ${join(root, 'data')}`],
    });
    try {
      const apiPath = '/api/v1/diff?base=main&head=feature&policy=auto';
      const first = await fetch(`${v.url}${apiPath}`);
      if (first.status !== 200) throw new Error(`the diff answered ${first.status}: ${await first.text()}`);
      const report = (await first.json()) as { summary: { flagsChanged: number; segmentsChanged: number } };
      log(`ui: the ${fmtInt(DIFF_FLAGS)}-flag diff: ${fmtInt(report.summary.flagsChanged)} flags and ${fmtInt(report.summary.segmentsChanged)} segments changed; ${samples} cold loads of the diff page without and with the impact preview ...`);
      const pageUrl = (impact: number) => `${v.url}/ui/diff?base=main&head=feature&impact=${impact}`;
      await coldDiffLoad(browser, pageUrl(0)); // unmeasured: Chromium's and the server's first-use costs

      const plain: DiffLoad[] = [];
      const withImpact: DiffLoad[] = [];
      const baseline: number[] = [];
      for (let i = 0; i < samples; i++) {
        plain.push(await coldDiffLoad(browser, pageUrl(0)));
        if (i < Math.min(3, samples)) withImpact.push(await coldDiffLoad(browser, pageUrl(10_000)));
        const ctx = await browser.newContext();
        const p = await ctx.newPage();
        await p.goto(`${v.url}/meta/info`);
        baseline.push(
          (await p.evaluate(`(async () => {
            const t0 = performance.now();
            const res = await fetch(${JSON.stringify(apiPath)}, { headers: { Accept: 'application/json' } });
            const body = JSON.parse(await res.text());
            if (body.summary.flagsChanged !== ${report.summary.flagsChanged}) throw new Error('flags changed: ' + body.summary.flagsChanged);
            return performance.now() - t0;
          })()`)) as number,
        );
        await ctx.close();
      }
      const painted = plain.map((s) => s.paintedAt);
      const paintMedian = median(painted);
      const ok = paintMedian <= DIFF_PAINT_TARGET_MS;
      const row = (label: string, xs: readonly number[]) => `| ${label} | ${xs.length} | ${fmtMs(median(xs))} ms | ${fmtMs(percentile(xs, 90))} ms | ${fmtMs(Math.min(...xs))} ms | ${fmtMs(Math.max(...xs))} ms |`;
      const markdown = [
        `#### 3. Diff page of a ${fmtInt(DIFF_FLAGS)}-flag change (${samples} cold loads; ${withImpact.length} with the impact preview)`,
        '',
        `\`/ui/diff?base=main&head=feature\` on a Git repository of two generated ${fmtInt(DIFF_FLAGS)}-flag states: ${fmtInt(report.summary.flagsChanged)} flags and ${fmtInt(report.summary.segmentsChanged)} segments changed; the API's answer is ${fmtInt(plain[0]!.apiBytes / 1024)} KB of JSON without the impact. The page draws the summary, the filter with its counts and the namespace with its first entries collapsed (${plain[0]!.entries} entries in the DOM at first paint, ${plain[0]!.openEntries} open; the rest on "Show more").`,
        '',
        '| measure | samples | median | p90 | min | max |',
        '|---|---:|---:|---:|---:|---:|',
        row('`impact=0`: diff API request sent by the page (startTime)', plain.map((s) => s.apiStart)),
        row('`impact=0`: the server\'s diff (responseStart − requestStart)', plain.map((s) => s.apiTtfb)),
        row('`impact=0`: diff API answer received (responseEnd)', plain.map((s) => s.apiEnd)),
        row('`impact=0`: summary and namespace in the DOM', plain.map((s) => s.at)),
        row('**`impact=0`: first paint of the comparison**', painted),
        row('`impact=0`: the page\'s own share (first paint − answer received)', plain.map((s) => s.paintedAt - s.apiEnd)),
        row('baseline: `fetch` + `JSON.parse` of the same diff, same origin, cold', baseline),
        row('`impact=10000` (informative): diff API answer received', withImpact.map((s) => s.apiEnd)),
        row('`impact=10000` (informative): first paint of the comparison', withImpact.map((s) => s.paintedAt)),
        '',
        `First paint: diff page / fetch + parse = **${fmtRatio(paintMedian / median(baseline))}** (medians). Target ≤ ${DIFF_PAINT_TARGET_MS} ms, judged on the median of ${samples} cold loads without the impact preview (${fmtMs(paintMedian)} ms; p90 ${fmtMs(percentile(painted, 90))} ms): **${verdict(ok)}**. With the impact preview the server's evaluation of 10,000 entities over the changed flags sets the time.`,
      ].join('\n');
      log(`  diff page first paint median ${fmtMs(paintMedian)} ms (fetch + parse ${fmtMs(median(baseline))} ms; with impact ${withImpact.length > 0 ? fmtMs(median(withImpact.map((s) => s.paintedAt))) : '-'} ms)`);
      return { markdown, verdict: { target: `diff page, ${fmtInt(DIFF_FLAGS)}-flag change: first paint ≤ ${DIFF_PAINT_TARGET_MS} ms (median ${fmtMs(paintMedian)} ms, p90 ${fmtMs(percentile(painted, 90))} ms)`, ok } };
    } finally {
      await stop(v.child);
    }
  } finally {
    for (const fn of teardowns.reverse()) await fn();
    rmSync(root, { recursive: true, force: true });
  }
}
