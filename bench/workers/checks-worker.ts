/**
 * One `vexil validate` core measurement in a fresh process: `load(files)` (parse, validate, build)
 * with or without the semantic checks (`checks: {today}`: run, locate and sort their reports).
 * Files are read before anything is timed; the first run is timed, then `runs - 1` more give the
 * median (wall and CPU). Prints one JSON line.
 *
 * argv[2] = JSON {mode, dir, files, runs, flags}
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from '../../src/state/load.js';

export type ChecksMode = 'without' | 'with';

export interface ChecksWorkerArgs {
  mode: ChecksMode;
  dir: string;
  files: string[];
  runs: number;
  flags: number;
}

export interface ChecksWorkerLine {
  mode: ChecksMode;
  flags: number;
  firstMs: number;
  medianMs: number;
  medianCpuMs: number;
  allMs: number[];
  /** Problems reported (all of them check reports with `with`, none without on the generated state). */
  problems: number;
}

const args = JSON.parse(process.argv[2]) as ChecksWorkerArgs;
const files = args.files.map((path) => ({ path, bytes: new Uint8Array(readFileSync(join(args.dir, path))) }));
const today = new Date('2026-11-27T00:00:00Z');
const options = args.mode === 'with' ? { reference: 'bench', revision: 'bench', checks: { today } } : { reference: 'bench', revision: 'bench' };

const wall: number[] = [];
const cpu: number[] = [];
let problems = 0;
for (let i = 0; i < args.runs; i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = load(files, options);
  wall.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
  if (r.snapshot === undefined) throw new Error(`the generated state is refused: ${JSON.stringify(r.problems.slice(0, 3))}`);
  problems = r.problems.length;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const rest = wall.slice(1);
const line: ChecksWorkerLine = {
  mode: args.mode,
  flags: args.flags,
  firstMs: wall[0]!,
  medianMs: median(rest.length > 0 ? rest : wall),
  medianCpuMs: median(cpu.length > 1 ? cpu.slice(1) : cpu),
  allMs: wall,
  problems,
};
process.stdout.write(`${JSON.stringify(line)}\n`);
