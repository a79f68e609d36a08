/**
 * One diff measurement in a fresh process. Not timed: loading the base and head states, and
 * generating every flag's matcher (what the server's store does in the background after building a
 * snapshot, store/matcher-warmup.ts), so the process is where a server is when it answers its first
 * `GET /api/v1/diff` after loading both references. Timed: diffReport (src/diff/report.ts), the
 * semantic diff of the two snapshots plus the impact preview over the given sample. The first run is
 * the cold one (no diff or impact code has run in this process yet); the median of the `runs - 1`
 * after it is the warm figure. Prints one JSON line.
 *
 * argv[2] = JSON {baseDir, headDir, files, entities, runs}
 */
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { diffReport } from '../../src/diff/report.js';
import { prepareMatcher } from '../../src/evaluation/codegen.js';
import type { SampleContext } from '../../src/diff/types.js';
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';

export interface DiffWorkerArgs {
  baseDir: string;
  headDir: string;
  files: string[];
  entities: number;
  runs: number;
}

export interface DiffWorkerLine {
  flags: number;
  changedFlags: number;
  evaluatedFlags: number;
  entities: number;
  entitiesMoved: number;
  /** The first (cold) run. */
  firstMs: number;
  /** The median of the runs after the first (warm). */
  medianMs: number;
  allMs: number[];
  /** CPU time (user+system, all threads: JIT compilation included) of the first run and the warm median. */
  firstCpuMs: number;
  medianCpuMs: number;
  /** 1-minute load average when the runs started (the machine may be shared). */
  loadAverage: number;
}

function loadDir(dir: string, files: string[], reference: string): Snapshot {
  const r = load(
    files.map((path) => ({ path, bytes: readFileSync(join(dir, path)) })),
    { reference, revision: reference },
  );
  if (r.snapshot === undefined) throw new Error(`${dir}: ${JSON.stringify(r.problems.slice(0, 3))}`);
  return r.snapshot;
}

/** Entities with contexts the generated segments read (plan, age, signup, beta, country, build). */
function sample(n: number): SampleContext[] {
  const plans = ['pro', 'free', 'team'];
  const countries = ['fr', 'de', 'us', 'it'];
  const out: SampleContext[] = [];
  for (let i = 0; i < n; i++) {
    out.push({
      entityId: i % 2 === 0 ? `user-${i}` : `acct-${i}`,
      context: { plan: plans[i % 3]!, age: String(16 + (i % 40)), signup: i % 5 === 0 ? '2024-06-01T00:00:00Z' : '2025-06-01T00:00:00Z', beta: i % 4 === 0 ? 'true' : 'false', country: countries[i % 4]!, build: String(i % 4) },
    });
  }
  return out;
}

const args = JSON.parse(process.argv[2]!) as DiffWorkerArgs;
const base = loadDir(args.baseDir, args.files, 'main');
const head = loadDir(args.headDir, args.files, 'feature');
for (const snapshot of [base, head]) for (const ns of snapshot.namespaces.values()) for (const flag of ns.flags.values()) prepareMatcher(flag.compiled);
const entities = sample(args.entities);
const allMs: number[] = [];
const cpuMs: number[] = [];
const loadAverage = loadavg()[0]!;
let last;
for (let r = 0; r < args.runs; r++) {
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  last = diffReport(base, head, { impact: { sample: entities, source: 'contexts-file', contexts: entities.length } });
  const c = process.cpuUsage(c0);
  allMs.push(performance.now() - t0);
  cpuMs.push((c.user + c.system) / 1000);
}
const sorted = allMs.slice(1).sort((a, b) => a - b);
const sortedCpu = cpuMs.slice(1).sort((a, b) => a - b);
const line: DiffWorkerLine = {
  flags: [...base.namespaces.values()].reduce((n, ns) => n + ns.flags.size, 0),
  changedFlags: last!.summary.flagsChanged,
  evaluatedFlags: last!.impact!.flags.length,
  entities: args.entities,
  entitiesMoved: last!.impact!.flags.reduce((n, f) => n + f.changed, 0),
  firstMs: allMs[0]!,
  medianMs: sorted[Math.floor(sorted.length / 2)]!,
  allMs,
  firstCpuMs: cpuMs[0]!,
  medianCpuMs: sortedCpu[Math.floor(sortedCpu.length / 2)]!,
  loadAverage,
};
process.stdout.write(`${JSON.stringify(line)}\n`);
