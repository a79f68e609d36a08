/**
 * `npm run bench -- checks`: the semantic checks of `vexil validate` on a generated state of
 * 10,000 flags (test/support/generate-state.ts, the load benchmark's shapes: 2,000 segments),
 * timed as `load` with and without them (the part of `vexil validate` the checks change: reading
 * the files is the same either way). Each repetition runs both modes in fresh processes, in
 * alternating order; the ratio is of the medians over all repetitions. Target: with checks
 * <= 1.5x without (issue 21).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { generateState } from '../test/support/generate-state.js';
import type { BenchBuild } from './build.js';
import { runWorker } from './spawn.js';
import { fmtMs, fmtRatio, median, verdict } from './stats.js';
import type { ChecksMode, ChecksWorkerArgs, ChecksWorkerLine } from './workers/checks-worker.js';

export interface ChecksOptions {
  flags: number;
  segments: number;
  /** Processes per mode. */
  reps: number;
  /** Loads per process (the first is reported apart). */
  runs: number;
}

export const CHECKS_DEFAULTS: ChecksOptions = { flags: 10_000, segments: 2000, reps: 3, runs: 5 };
export const CHECKS_QUICK: ChecksOptions = { flags: 10_000, segments: 2000, reps: 1, runs: 3 };
export const TARGET_RATIO = 1.5;

export async function runChecksBench(build: BenchBuild, opts: ChecksOptions, log: (s: string) => void): Promise<{ markdown: string; verdicts: Array<{ target: string; ok: boolean }> }> {
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-checks-'));
  try {
    const generated = generateState({ flags: opts.flags, segmentsPerNamespace: Math.ceil(opts.segments / 2) });
    for (const f of generated) {
      mkdirSync(dirname(join(root, f.path)), { recursive: true });
      writeFileSync(join(root, f.path), f.text);
    }
    const lines: Record<ChecksMode, ChecksWorkerLine[]> = { without: [], with: [] };
    for (let rep = 0; rep < opts.reps; rep++) {
      const order: ChecksMode[] = rep % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      for (const mode of order) {
        const args: ChecksWorkerArgs = { mode, dir: root, files: generated.map((f) => f.path), runs: opts.runs, flags: opts.flags };
        const [line] = await runWorker<ChecksWorkerLine>(build.root, 'checks-worker', args);
        log(`checks: ${mode} checks, repetition ${rep + 1}: median ${fmtMs(line!.medianMs)} ms (first ${fmtMs(line!.firstMs)} ms), ${line!.problems} problems`);
        lines[mode].push(line!);
      }
    }
    const med = (mode: ChecksMode, f: (l: ChecksWorkerLine) => number) => median(lines[mode].map(f));
    const wallWithout = med('without', (l) => l.medianMs);
    const wallWith = med('with', (l) => l.medianMs);
    const ratio = wallWith / wallWithout;
    const firstRatio = med('with', (l) => l.firstMs) / med('without', (l) => l.firstMs);
    const cpuRatio = med('with', (l) => l.medianCpuMs) / med('without', (l) => l.medianCpuMs);
    const problems = lines.with[0]?.problems ?? 0;
    const markdown = [
      `${opts.flags.toLocaleString('en')} flags, ${opts.segments.toLocaleString('en')} segments; ${opts.reps} processes per mode, ${opts.runs} loads each. With checks: ${problems} reports.`,
      '',
      '| `load` (vexil validate\'s core) | median (ms) | first load (ms) | CPU, median (ms) |',
      '| --- | ---: | ---: | ---: |',
      `| without checks | ${fmtMs(wallWithout)} | ${fmtMs(med('without', (l) => l.firstMs))} | ${fmtMs(med('without', (l) => l.medianCpuMs))} |`,
      `| with checks | ${fmtMs(wallWith)} | ${fmtMs(med('with', (l) => l.firstMs))} | ${fmtMs(med('with', (l) => l.medianCpuMs))} |`,
      `| ratio | ${fmtRatio(ratio)} | ${fmtRatio(firstRatio)} | ${fmtRatio(cpuRatio)} |`,
      '',
      `${verdict(ratio <= TARGET_RATIO)} checks on ${opts.flags.toLocaleString('en')} flags: ${fmtRatio(ratio)} the time of validate without them (target <= ${TARGET_RATIO}x)`,
    ].join('\n');
    return { markdown, verdicts: [{ target: `checks: ${fmtRatio(ratio)} the time of validate without them (<= ${TARGET_RATIO}x)`, ok: ratio <= TARGET_RATIO }] };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
