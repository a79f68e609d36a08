/**
 * One load measurement in a fresh process, so peak RSS belongs to it alone:
 *   vexil       load(files) = parse + validate + build the snapshot (src/state/load.ts)
 *   js-yaml     the floor: UTF-8 decode + js-yaml loadAll of the same files, nothing else
 *   flagd-core  new FlagdCore().setConfigurations(<equivalent flagd JSON>)
 * Files are read before anything is timed. The first run is timed and then peak RSS is read
 * (process.resourceUsage().maxRSS: the high-water mark of the process, in KiB); then `runs - 1`
 * more runs give the median. Prints one JSON line.
 *
 * argv[2] = JSON {engine, dir, files, flagdFile, runs, flags}
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import jsYaml from 'js-yaml';
import { FlagdCore } from '@openfeature/flagd-core';
import { prepareMatcher } from '../../src/evaluation/codegen.js';
import { load } from '../../src/state/load.js';

export type LoadEngine = 'vexil' | 'js-yaml' | 'flagd-core';

export interface LoadWorkerArgs {
  engine: LoadEngine;
  dir: string;
  /** Relative paths of the Flipt-format state files. */
  files: string[];
  /** The equivalent flagd JSON (for flagd-core). */
  flagdFile: string;
  runs: number;
  /** For the report only. */
  flags: number;
}

export interface LoadWorkerLine {
  engine: LoadEngine;
  flags: number;
  bytes: number;
  firstMs: number;
  medianMs: number;
  allMs: number[];
  /** Median CPU time (user+system, all threads) of the same runs: steadier on a shared machine. */
  medianCpuMs: number;
  /** maxRSS after reading the inputs, before the first run (MiB). */
  baseRssMiB: number;
  /** maxRSS right after the first run (MiB). */
  peakRssMiB: number;
  /** Sanity: flags in the result (vexil: snapshot flags; js-yaml: flags in the documents; flagd: keys set). */
  resultFlags: number;
  /**
   * vexil only: generating the matchers of every flag of one more loaded snapshot, which the
   * server's store does in the background after each swap (store/matcher-warmup.ts), not in the load.
   * heapMiB: heap retained by the generated matchers (after garbage collection).
   */
  matchers?: { flags: number; generated: number; ms: number; cpuMs: number; heapMiB: number };
}

const args = JSON.parse(process.argv[2]) as LoadWorkerArgs;
const noop = { error() {}, warn() {}, info() {}, debug() {} };
const rssMiB = () => process.resourceUsage().maxRSS / 1024;

let op: () => number;
let bytes = 0;
if (args.engine === 'flagd-core') {
  const json = readFileSync(join(args.dir, args.flagdFile), 'utf8');
  bytes = Buffer.byteLength(json);
  op = () => new FlagdCore(undefined, noop).setConfigurations(json).length;
} else {
  const files = args.files.map((path) => ({ path, bytes: new Uint8Array(readFileSync(join(args.dir, path))) }));
  bytes = files.reduce((n, f) => n + f.bytes.length, 0);
  if (args.engine === 'vexil') {
    op = () => {
      const r = load(files, { reference: 'bench', revision: 'bench' });
      if (!r.snapshot) throw new Error(`vexil refused the generated state: ${JSON.stringify(r.problems.slice(0, 3))}`);
      let n = 0;
      for (const ns of r.snapshot.namespaces.values()) n += ns.flags.size;
      return n;
    };
  } else {
    // The same schema vexil parses with is irrelevant to the floor: js-yaml's CORE_SCHEMA is its
    // fastest correct configuration for these files, so the floor is as low as js-yaml goes.
    const decoder = new TextDecoder('utf-8', { fatal: true });
    op = () => {
      let n = 0;
      for (const f of files) {
        for (const doc of jsYaml.loadAll(decoder.decode(f.bytes), undefined, { schema: jsYaml.CORE_SCHEMA })) {
          n += ((doc as { flags?: unknown[] } | null)?.flags ?? []).length;
        }
      }
      return n;
    };
  }
}

const cpuMs = (since: NodeJS.CpuUsage) => {
  const u = process.cpuUsage(since);
  return (u.user + u.system) / 1000;
};
const baseRssMiB = rssMiB();
let u0 = process.cpuUsage();
let t0 = performance.now();
const resultFlags = op();
const firstMs = performance.now() - t0;
const allCpu = [cpuMs(u0)];
const peakRssMiB = rssMiB();
const allMs = [firstMs];
for (let i = 1; i < args.runs; i++) {
  u0 = process.cpuUsage();
  t0 = performance.now();
  op();
  allMs.push(performance.now() - t0);
  allCpu.push(cpuMs(u0));
}
let matchers: LoadWorkerLine['matchers'];
if (args.engine === 'vexil') {
  const files = args.files.map((path) => ({ path, bytes: new Uint8Array(readFileSync(join(args.dir, path))) }));
  const flags = [...load(files, { reference: 'bench', revision: 'bench' }).snapshot!.namespaces.values()].flatMap((ns) => [...ns.flags.values()]);
  // Retained heap, not heap growth: collect garbage before and after (a collection in between made
  // the figure negative). gc() is reachable without --expose-gc through a flag set at run time.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  const heap0 = process.memoryUsage().heapUsed;
  u0 = process.cpuUsage();
  t0 = performance.now();
  for (const f of flags) prepareMatcher(f.compiled);
  const ms = performance.now() - t0;
  const cpu = cpuMs(u0);
  const generated = flags.filter((f) => (f.compiled.variant ?? f.compiled.boolean!).matcher.fn !== null).length;
  gc();
  matchers = { flags: flags.length, generated, ms, cpuMs: cpu, heapMiB: (process.memoryUsage().heapUsed - heap0) / 1048576 };
}
const sorted = [...allMs].sort((a, b) => a - b);
const sortedCpu = [...allCpu].sort((a, b) => a - b);
const line: LoadWorkerLine = {
  engine: args.engine,
  flags: args.flags,
  bytes,
  firstMs,
  medianMs: sorted[sorted.length >> 1],
  allMs,
  medianCpuMs: sortedCpu[sortedCpu.length >> 1],
  baseRssMiB,
  peakRssMiB,
  resultFlags,
  ...(matchers !== undefined ? { matchers } : {}),
};
process.stdout.write(`${JSON.stringify(line)}\n`);
