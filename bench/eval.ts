/**
 * `npm run bench -- eval`: evaluations per second of vexil, flagd-core and flipt-client-js on four
 * scenarios. Each scenario runs in its own process (all three engines, same flags, same ids), the
 * process is repeated `reps` times with the engine order rotated, and the figure is the median of
 * the per-process medians. Targets: vexil >= 1.5x flagd-core and >= 20x flipt-client-js everywhere.
 */
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { REPO } from './build.js';
import { runWorker } from './spawn.js';
import { fmtInt, fmtRatio, median, verdict } from './stats.js';
import type { EngineName, EvalWorkerArgs, EvalWorkerLine, ScenarioName } from './workers/eval-worker.js';

export interface EvalOptions {
  n: number;
  rounds: number;
  fliptRounds: number;
  reps: number;
  scenarios: ScenarioName[];
}

export const EVAL_DEFAULTS: EvalOptions = { n: 100_000, rounds: 9, fliptRounds: 5, reps: 3, scenarios: ['variant', 'boolean', 'static', 'complex'] };

const ENGINES: EngineName[] = ['vexil', 'flagd-core', 'flipt-client-js'];
const LABEL: Record<ScenarioName, string> = {
  variant: '(a) variant: segment match → 50/50',
  boolean: '(b) boolean: segment miss → 50% threshold',
  static: '(c) static boolean',
  complex: '(d) 5 rules × 3 segments × 4 constraints',
};
export const TARGET_FLAGD = 1.5;
export const TARGET_FLIPT = 20;

export interface EvalRow {
  scenario: ScenarioName;
  /** Median of per-process medians, evaluations per second (wall clock). */
  wall: Record<EngineName, number>;
  /** The same from CPU time (user+system): steadier on a shared machine. */
  cpu: Record<EngineName, number>;
  /** Per-process medians, for the spread. */
  runs: Record<EngineName, number[]>;
}

export interface EvalReport {
  rows: EvalRow[];
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runEvalBench(build: BenchBuild, opts: EvalOptions, log: (s: string) => void): Promise<EvalReport> {
  const rows: EvalRow[] = [];
  for (const scenario of opts.scenarios) {
    const runs = { vexil: [], 'flagd-core': [], 'flipt-client-js': [] } as Record<EngineName, number[]>;
    const cpuRuns = { vexil: [], 'flagd-core': [], 'flipt-client-js': [] } as Record<EngineName, number[]>;
    for (let rep = 0; rep < opts.reps; rep++) {
      const order = ENGINES.map((_, i) => ENGINES[(i + rep) % ENGINES.length]);
      const args: EvalWorkerArgs = { scenario, fixtures: join(REPO, 'bench/fixtures'), n: opts.n, rounds: opts.rounds, fliptRounds: opts.fliptRounds, order };
      const lines = await runWorker<EvalWorkerLine>(build.root, 'eval-worker', args);
      for (const l of lines) {
        runs[l.engine].push(l.medianPerSec);
        cpuRuns[l.engine].push(l.cpuMedianPerSec);
      }
      log(`  ${scenario} run ${rep + 1}/${opts.reps}: ${lines.map((l) => `${l.engine} ${fmtInt(l.medianPerSec)}/s`).join(', ')}`);
    }
    const pick = (r: Record<EngineName, number[]>) => Object.fromEntries(ENGINES.map((e) => [e, median(r[e])])) as Record<EngineName, number>;
    rows.push({ scenario, wall: pick(runs), cpu: pick(cpuRuns), runs });
  }
  return { rows, ...evalMarkdown(rows, opts) };
}

function evalMarkdown(rows: EvalRow[], opts: EvalOptions): { markdown: string; verdicts: Array<{ target: string; ok: boolean }> } {
  const verdicts: Array<{ target: string; ok: boolean }> = [];
  const out: string[] = [];
  out.push(
    `Evaluations per second, median of ${opts.reps} process medians (each: ${opts.rounds} rounds × ${fmtInt(opts.n)} ids for vexil and flagd-core, ${opts.fliptRounds} for flipt-client-js, after a 20k warm-up).`,
    '',
    '| scenario | vexil | flagd-core | flipt-client-js | vexil / flagd-core (≥ 1.5×) | vexil / flipt-client-js (≥ 20×) | same ratios from CPU time |',
    '|---|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of rows) {
    const rf = r.wall.vexil / r.wall['flagd-core'];
    const rp = r.wall.vexil / r.wall['flipt-client-js'];
    const okF = rf >= TARGET_FLAGD;
    const okP = rp >= TARGET_FLIPT;
    verdicts.push({ target: `eval ${r.scenario}: vexil ≥ ${TARGET_FLAGD}× flagd-core`, ok: okF });
    verdicts.push({ target: `eval ${r.scenario}: vexil ≥ ${TARGET_FLIPT}× flipt-client-js`, ok: okP });
    const cf = r.cpu.vexil / r.cpu['flagd-core'];
    const cp = r.cpu.vexil / r.cpu['flipt-client-js'];
    out.push(
      `| ${LABEL[r.scenario]} | ${fmtInt(r.wall.vexil)} | ${fmtInt(r.wall['flagd-core'])} | ${fmtInt(r.wall['flipt-client-js'])} | ${fmtRatio(rf)} ${verdict(okF)} | ${fmtRatio(rp)} ${verdict(okP)} | ${fmtRatio(cf)} / ${fmtRatio(cp)} |`,
    );
  }
  out.push('', 'Per-process medians (evaluations/s), to judge the noise:', '');
  out.push('| scenario | vexil | flagd-core | flipt-client-js |', '|---|---|---|---|');
  for (const r of rows) {
    out.push(`| ${r.scenario} | ${ENGINES.map((e) => r.runs[e].map(fmtInt).join(' / ')).join(' | ')} |`);
  }
  return { markdown: out.join('\n'), verdicts };
}
