/**
 * `npm run bench -- checks`: the semantic checks of `vexil validate` on a generated state of
 * 10,000 flags (test/support/generate-state.ts, the load benchmark's shapes: 2,000 segments),
 * measured two ways, each mode in fresh processes in alternating order, ratios of medians:
 * - the command itself, as the target is worded (issue 21: "<= 1.5x the time of `vexil validate`
 *   without them"): the compiled `vexil validate DIR --format json`, with and without
 *   `--no-checks`, wall time from spawn to exit;
 * - `load` alone (parse, validate, build, and the checks with their positions), the part the
 *   checks change, with CPU time beside wall time (steadier on a shared machine).
 */
import { spawnSync } from 'node:child_process';
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
    // The command: `vexil validate` as a user runs it (compiled; JSON output, discarded).
    const command: Record<ChecksMode, number[]> = { without: [], with: [] };
    for (let rep = 0; rep < opts.reps * 2; rep++) {
      const order: ChecksMode[] = rep % 2 === 0 ? ['without', 'with'] : ['with', 'without'];
      for (const mode of order) {
        const t0 = performance.now();
        const r = spawnSync(process.execPath, [join(build.root, 'src/cli/main.js'), 'validate', root, '--format', 'json', ...(mode === 'without' ? ['--no-checks'] : [])], {
          encoding: 'utf8',
          maxBuffer: 256 * 1024 * 1024,
          env: { ...process.env, NODE_OPTIONS: '' },
        });
        const ms = performance.now() - t0;
        if (r.status !== 0) throw new Error(`vexil validate failed (${r.status}): ${r.stderr.slice(0, 500)}`);
        command[mode].push(ms);
        log(`checks: vexil validate ${mode === 'without' ? '--no-checks ' : ''}in ${fmtMs(ms)} ms`);
      }
    }
    const commandWithout = median(command.without);
    const commandWith = median(command.with);
    const commandRatio = commandWith / commandWithout;

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
      '| `vexil validate DIR --format json` (the command) | median wall (ms) |',
      '| --- | ---: |',
      `| with \`--no-checks\` | ${fmtMs(commandWithout)} |`,
      `| with the checks | ${fmtMs(commandWith)} |`,
      `| ratio | ${fmtRatio(commandRatio)} |`,
      '',
      '| `load` (vexil validate\'s core) | median (ms) | first load (ms) | CPU, median (ms) |',
      '| --- | ---: | ---: | ---: |',
      `| without checks | ${fmtMs(wallWithout)} | ${fmtMs(med('without', (l) => l.firstMs))} | ${fmtMs(med('without', (l) => l.medianCpuMs))} |`,
      `| with checks | ${fmtMs(wallWith)} | ${fmtMs(med('with', (l) => l.firstMs))} | ${fmtMs(med('with', (l) => l.medianCpuMs))} |`,
      `| ratio | ${fmtRatio(ratio)} | ${fmtRatio(firstRatio)} | ${fmtRatio(cpuRatio)} |`,
      '',
      `${verdict(commandRatio <= TARGET_RATIO)} checks on ${opts.flags.toLocaleString('en')} flags: \`vexil validate\` takes ${fmtRatio(commandRatio)} the time it takes without them (target <= ${TARGET_RATIO}x; \`load\` alone: ${fmtRatio(ratio)} wall, ${fmtRatio(cpuRatio)} CPU)`,
    ].join('\n');
    return { markdown, verdicts: [{ target: `checks: vexil validate ${fmtRatio(commandRatio)} the time without them (<= ${TARGET_RATIO}x); load alone ${fmtRatio(ratio)}`, ok: commandRatio <= TARGET_RATIO }] };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
