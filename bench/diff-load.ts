/**
 * The second part of `npm run bench -- diff`: what diffs cost the requests around them. One
 * `vexil serve` (compiled build, one process) on a local Git repository of two 10k-flag branches
 * (`main`, and `feature` with 100 flags changed: test/support/changed-state.ts), evaluation load
 * from autocannon in its own process (POST /evaluate/v1/variant, few connections: latency, not
 * saturation), measured in alternating turns: alone, then while 4 clients each run
 * `GET /api/v1/diff?base=main&head=feature&impact=100000` one after the other (4 diffs in flight
 * all the time; `diff.max_concurrent` set to 4 through VEXIL_DIFF_MAX_CONCURRENT, which a build
 * without that key ignores). Prints evaluation p99 (and p50, req/s) alone vs with the diffs, the
 * ratio against the alone figure of the same run, and how many diffs were answered (200 / 503).
 * Target: p99 with diffs ≤ 1.5× alone (the machine is shared: a ratio, not an absolute figure).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { changedState } from '../test/support/changed-state.js';
import { generateState } from '../test/support/generate-state.js';
import { createTestRepo } from '../test/support/git-repo.js';
import type { BenchBuild } from './build.js';
import { loadOnce, startVexil, stop } from './http-harness.js';
import { fmtInt, fmtMs, fmtRatio, median } from './stats.js';

export interface DiffLoadOptions {
  flags: number;
  /** Entities of each diff's impact preview. */
  entities: number;
  /** Diffs in flight during the loaded turns. */
  diffs: number;
  connections: number;
  /** Seconds per turn; `rounds` turns alone and as many with diffs, alternating. */
  turnSec: number;
  rounds: number;
}

export const DIFF_LOAD_DEFAULTS: DiffLoadOptions = { flags: 10_000, entities: 100_000, diffs: 4, connections: 4, turnSec: 4, rounds: 3 };
export const DIFF_LOAD_QUICK: DiffLoadOptions = { ...DIFF_LOAD_DEFAULTS, turnSec: 2, rounds: 2 };
export const TARGET_P99_RATIO = 1.5;

const EVAL_BODY = JSON.stringify({ namespaceKey: 'default', flagKey: 'flag_000001', entityId: 'user-42', context: { plan: 'pro', age: '30', country: 'fr' } });

interface DiffClients {
  stop(): Promise<{ ok: number; refused: number; other: number; msEach: number[] }>;
}

/** `n` clients, each sending the diff again as soon as it is answered, until stopped. */
function runDiffClients(url: string, n: number): DiffClients {
  let running = true;
  const counts = { ok: 0, refused: 0, other: 0, msEach: [] as number[] };
  const loops = Array.from({ length: n }, async () => {
    while (running) {
      const t0 = performance.now();
      const res = await fetch(url);
      await res.arrayBuffer();
      if (res.status === 200) {
        counts.ok++;
        counts.msEach.push(performance.now() - t0);
      } else if (res.status === 503) counts.refused++;
      else counts.other++;
    }
  });
  return {
    async stop() {
      running = false;
      await Promise.all(loops);
      return counts;
    },
  };
}

export async function runDiffLoadBench(build: BenchBuild, opts: DiffLoadOptions, log: (s: string) => void): Promise<{ markdown: string; verdicts: Array<{ target: string; ok: boolean }> }> {
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-diff-load-'));
  const teardowns: Array<() => void | Promise<void>> = [];
  try {
    const generated = generateState({ flags: opts.flags });
    const head = changedState(generated);
    const repo = await createTestRepo({ teardown: (fn) => teardowns.push(fn) });
    const files = (fs: ReadonlyArray<{ path: string; text: string }>) => Object.fromEntries(fs.map((f) => [f.path, f.text]));
    const baseCommit = await repo.commit('main', files(generated));
    await repo.commit('feature', files(head.files), { parent: baseCommit });
    const v = await startVexil(build, join(root, 'serve'), {
      storage: ['storage:', '  type: git', '  git:', `    repository: ${repo.gitdir}`, `    cache_dir: ${join(root, 'cache')}`, '    poll_interval: 1h'],
      // VEXIL_BENCH_DIFF_SLICE=<duration> sets diff.slice (to compare slice lengths); else the default.
      env: { VEXIL_DIFF_MAX_CONCURRENT: String(opts.diffs), ...(process.env.VEXIL_BENCH_DIFF_SLICE ? { VEXIL_DIFF_SLICE: process.env.VEXIL_BENCH_DIFF_SLICE } : {}) },
    });
    try {
      const endpoint = `${v.url}/evaluate/v1/variant`;
      const probe = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: EVAL_BODY });
      if (probe.status !== 200) throw new Error(`evaluation answered ${probe.status}: ${await probe.text()}`);
      const diffUrl = `${v.url}/api/v1/diff?base=main&head=feature&impact=${opts.entities}`;
      // Builds `feature` and runs the diff code once (not measured).
      for (const u of [`${v.url}/api/v1/diff?base=main&head=feature`, diffUrl]) {
        const r = await fetch(u);
        if (r.status !== 200) throw new Error(`diff answered ${r.status}: ${await r.text()}`);
        await r.arrayBuffer();
      }
      log(`diff under load: ${opts.flags} flags, ${head.changed} changed; ${opts.diffs} diffs of impact ${opts.entities} in flight vs none; ${opts.rounds} × ${opts.turnSec} s turns each, ${opts.connections} connections ...`);
      const target = { endpoint, request: { body: EVAL_BODY } };
      await loadOnce(build, target, opts.connections, 1); // warm-up
      // A turn in which no evaluation was answered (the event loop held by diffs the whole turn)
      // counts the turn's length as its p50 and p99: a lower bound of what a request waited.
      const figures = (run: { p50Ms: number; p99Ms: number; reqPerSec: number; totalRequests: number }) =>
        run.totalRequests > 0 ? { p50: run.p50Ms, p99: run.p99Ms, rps: run.reqPerSec } : { p50: opts.turnSec * 1000, p99: opts.turnSec * 1000, rps: 0 };
      let starvedTurns = 0;
      const alone: Array<{ p50: number; p99: number; rps: number }> = [];
      const withDiffs: Array<{ p50: number; p99: number; rps: number }> = [];
      const diffs = { ok: 0, refused: 0, other: 0, msEach: [] as number[] };
      for (let r = 0; r < opts.rounds; r++) {
        const a = await loadOnce(build, target, opts.connections, opts.turnSec);
        alone.push(figures(a));
        const clients = runDiffClients(diffUrl, opts.diffs);
        const w = await loadOnce(build, target, opts.connections, opts.turnSec);
        const c = await clients.stop();
        withDiffs.push(figures(w));
        if (w.totalRequests === 0) starvedTurns++;
        diffs.ok += c.ok;
        diffs.refused += c.refused;
        diffs.other += c.other;
        diffs.msEach.push(...c.msEach);
        for (const run of [a, w]) if (run.non2xx > 0 || run.errors > 0) throw new Error(`evaluation failed under load: ${JSON.stringify(run.statusCounts)}, ${run.errors} errors`);
        log(`  round ${r + 1}/${opts.rounds}: alone p99 ${fmtMs(alone.at(-1)!.p99)} ms (${fmtInt(a.reqPerSec)} req/s); with ${opts.diffs} diffs p99 ${fmtMs(withDiffs.at(-1)!.p99)} ms (${fmtInt(w.reqPerSec)} req/s), ${c.ok} diffs answered, ${c.refused} refused`);
      }
      const p99Alone = median(alone.map((x) => x.p99));
      const p99With = median(withDiffs.map((x) => x.p99));
      // autocannon reports whole milliseconds: an alone p99 of 0 ms counts as 1 ms in the ratio.
      const ratio = p99With / Math.max(1, p99Alone);
      const ok = ratio <= TARGET_P99_RATIO && diffs.ok > 0;
      const markdown = [
        `| evaluation | p50 | p99 (median of ${opts.rounds} turns) | worst turn's p99 | req/s |`,
        '|---|---:|---:|---:|---:|',
        `| alone | ${fmtMs(median(alone.map((x) => x.p50)))} ms | ${fmtMs(p99Alone)} ms | ${fmtMs(Math.max(...alone.map((x) => x.p99)))} ms | ${fmtInt(median(alone.map((x) => x.rps)))} |`,
        `| while ${opts.diffs} diffs run | ${fmtMs(median(withDiffs.map((x) => x.p50)))} ms | ${fmtMs(p99With)} ms | ${fmtMs(Math.max(...withDiffs.map((x) => x.p99)))} ms | ${fmtInt(median(withDiffs.map((x) => x.rps)))} |`,
        `| ratio (alone floored at 1 ms, autocannon's resolution) | | ${fmtRatio(ratio)} | | |`,
        '',
        ...(starvedTurns > 0 ? [`No evaluation was answered at all in ${starvedTurns} of the ${opts.rounds} turns with diffs (their p50 and p99 are counted as the turn's length, ${opts.turnSec * 1000} ms: a lower bound).`, ''] : []),
        `Diffs answered during the loaded turns: ${diffs.ok} (200), ${diffs.refused} refused (503), ${diffs.other} other; each took ${fmtMs(median(diffs.msEach))} ms (median) end to end under the evaluation load. One \`vexil serve\` on a local Git repository of two ${opts.flags}-flag branches (${head.changed} flags changed); autocannon with ${opts.connections} connections on POST /evaluate/v1/variant, in ${opts.turnSec} s turns alternating alone / with ${opts.diffs} clients each sending \`GET /api/v1/diff?base=main&head=feature&impact=${opts.entities}\` again as soon as answered.`,
      ].join('\n');
      return {
        markdown,
        verdicts: [{ target: `evaluation p99 while ${opts.diffs} diffs (impact ${opts.entities}) run ≤ ${TARGET_P99_RATIO}× alone (${fmtRatio(ratio)}: ${fmtMs(p99With)} vs ${fmtMs(p99Alone)} ms)`, ok }],
      };
    } finally {
      await stop(v.child);
    }
  } finally {
    for (const fn of teardowns.reverse()) await fn();
    rmSync(root, { recursive: true, force: true });
  }
}
