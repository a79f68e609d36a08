/**
 * `npm run bench -- load`: load + validate + build of generated states of 1k and 10k flags with 2k
 * segments, against the floor of parsing the same files with js-yaml, and against flagd-core's
 * `setConfigurations` on the equivalent flagd JSON. Each figure comes from a fresh process (peak
 * RSS). Targets: vexil <= 2x the js-yaml floor and below flagd-core's load time.
 *
 * The states come from the state helper's generator (test/support/generate-state.ts), so the
 * benchmark loads the same shapes the load tests do: 70% variant flags (3 variants, 2 rules, one of
 * them an AND of two segments), 30% boolean flags (2 segment rollouts and a threshold), segments
 * with 2 constraints of every comparison type, over 2 namespaces of 5 flag files + 1 segment file.
 *
 * Then, per size, a real `vexil serve` on the same folder: process start to the first 200 of
 * /ready, and CPU time and peak RSS at ready and once settled (bench/serve-ready.ts), the figure an
 * operator sees.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import jsYaml from 'js-yaml';
import { generateState } from '../test/support/generate-state.js';
import type { BenchBuild } from './build.js';
import { toFlagdJson } from './flagd-state.js';
import { measureServeReady, type ServeReadyLine } from './serve-ready.js';
import { runWorker } from './spawn.js';
import { fmtMs, fmtRatio, verdict } from './stats.js';
import type { LoadEngine, LoadWorkerArgs, LoadWorkerLine } from './workers/load-worker.js';

export interface LoadOptions {
  sizes: number[];
  /** Segments in total (split over the generator's 2 namespaces). */
  segments: number;
  runs: number;
}

export const LOAD_DEFAULTS: LoadOptions = { sizes: [1000, 10_000], segments: 2000, runs: 5 };
export const TARGET_FLOOR = 2;

const ENGINES: LoadEngine[] = ['js-yaml', 'vexil', 'flagd-core'];

export interface LoadReport {
  lines: LoadWorkerLine[];
  /** `vexil serve` on the same folder: process start to /ready, then settled (bench/serve-ready.ts). */
  serve: ServeReadyLine[];
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runLoadBench(build: BenchBuild, opts: LoadOptions, log: (s: string) => void): Promise<LoadReport> {
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-state-'));
  const lines: LoadWorkerLine[] = [];
  const serve: ServeReadyLine[] = [];
  try {
    for (const flags of opts.sizes) {
      // The state files in their own folder (what `vexil serve` reads), the flagd JSON beside it.
      const dir = join(root, `flags-${flags}`, 'state');
      const generated = generateState({ flags, segmentsPerNamespace: Math.ceil(opts.segments / 2) });
      for (const f of generated) {
        mkdirSync(dirname(join(dir, f.path)), { recursive: true });
        writeFileSync(join(dir, f.path), f.text);
      }
      const docs = generated.flatMap((f) => jsYaml.loadAll(f.text)) as Parameters<typeof toFlagdJson>[0];
      writeFileSync(join(dir, '..', 'flagd.json'), toFlagdJson(docs));
      for (const engine of ENGINES) {
        const args: LoadWorkerArgs = { engine, dir, files: generated.map((f) => f.path), flagdFile: '../flagd.json', runs: opts.runs, flags };
        const [line] = await runWorker<LoadWorkerLine>(build.root, 'load-worker', args);
        if (line.resultFlags !== flags) throw new Error(`${engine} saw ${line.resultFlags} flags, expected ${flags}`);
        lines.push(line);
        log(`  ${flags} flags, ${engine}: median ${fmtMs(line.medianMs)} ms (first ${fmtMs(line.firstMs)} ms, CPU ${fmtMs(line.medianCpuMs)} ms), peak RSS ${line.peakRssMiB.toFixed(0)} MiB`);
      }
      const ready = await measureServeReady(build, dir, flags);
      serve.push(ready);
      log(`  ${flags} flags, vexil serve: ${serveFigures(ready)}`);
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return { lines, serve, ...loadMarkdown(lines, serve, opts) };
}

const mib = (n: number | undefined) => (n === undefined ? 'n/a' : `${n.toFixed(0)} MiB`);
const cpuMs = (n: number | undefined) => (n === undefined ? 'n/a' : `${fmtMs(n)} ms`);

function serveFigures(r: ServeReadyLine): string {
  return `ready ${fmtMs(r.readyMs)} ms after spawn (CPU ${cpuMs(r.readyCpuMs)}, peak RSS ${mib(r.readyRssMiB)}); settled CPU ${cpuMs(r.settledCpuMs)}, peak RSS ${mib(r.settledRssMiB)}`;
}

function loadMarkdown(
  lines: LoadWorkerLine[],
  serve: ServeReadyLine[],
  opts: LoadOptions,
): { markdown: string; verdicts: Array<{ target: string; ok: boolean }> } {
  const verdicts: Array<{ target: string; ok: boolean }> = [];
  const out: string[] = [
    `Median of ${opts.runs} loads in one fresh process per cell (first, cold load in parentheses); peak RSS = maxRSS after the first load (RSS before it in parentheses). ${opts.segments} segments.`,
    '',
    '| flags | state size | js-yaml floor | vexil load+validate+build | flagd-core setConfigurations (JSON size) | vexil / floor (≤ 2×) | vexil / flagd-core (< 1×) | same ratios from CPU time | peak RSS js-yaml / vexil / flagd-core |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const flags of opts.sizes) {
    const get = (e: LoadEngine) => lines.find((l) => l.flags === flags && l.engine === e)!;
    const y = get('js-yaml');
    const v = get('vexil');
    const f = get('flagd-core');
    const rFloor = v.medianMs / y.medianMs;
    const rFlagd = v.medianMs / f.medianMs;
    const okFloor = rFloor <= TARGET_FLOOR;
    const okFlagd = rFlagd < 1;
    verdicts.push({ target: `load ${flags} flags: vexil ≤ ${TARGET_FLOOR}× js-yaml floor`, ok: okFloor });
    verdicts.push({ target: `load ${flags} flags: vexil < flagd-core`, ok: okFlagd });
    const ms = (l: LoadWorkerLine) => `${fmtMs(l.medianMs)} ms (${fmtMs(l.firstMs)})`;
    const cpu = `${fmtRatio(v.medianCpuMs / y.medianCpuMs)} / ${fmtRatio(v.medianCpuMs / f.medianCpuMs)}`;
    const rss = (l: LoadWorkerLine) => `${l.peakRssMiB.toFixed(0)} (${l.baseRssMiB.toFixed(0)})`;
    out.push(
      `| ${flags.toLocaleString('en-US')} | ${(v.bytes / 1e6).toFixed(1)} MB | ${ms(y)} | ${ms(v)} | ${ms(f)} (${(f.bytes / 1e6).toFixed(1)} MB) | ${fmtRatio(rFloor)} ${verdict(okFloor)} | ${fmtRatio(rFlagd)} ${verdict(okFlagd)} | ${cpu} | ${rss(y)} / ${rss(v)} / ${rss(f)} MiB |`,
    );
  }
  // Not part of the load: the store generates matchers in the background after each swap.
  out.push('', 'Generated matchers of every flag of one snapshot (done in the background after a swap, store/matcher-warmup.ts; not in the load times above):', '');
  for (const flags of opts.sizes) {
    const m = lines.find((l) => l.flags === flags && l.engine === 'vexil')?.matchers;
    if (m !== undefined) {
      out.push(`- ${flags.toLocaleString('en-US')} flags: ${m.generated.toLocaleString('en-US')} generated in ${fmtMs(m.ms)} ms (CPU ${fmtMs(m.cpuMs)} ms), heap retained +${m.heapMiB.toFixed(1)} MiB`);
    }
  }
  out.push(
    '',
    '`vexil serve` on the same folder (local storage), spawn to the first 200 of `/ready`, then once the process is quiet (matchers generated); CPU time and peak RSS of the server process (bench/serve-ready.ts):',
    '',
    '| flags | ready (wall) | CPU at ready | peak RSS at ready | CPU settled | peak RSS settled |',
    '|---:|---:|---:|---:|---:|---:|',
  );
  for (const r of serve) {
    out.push(`| ${r.flags.toLocaleString('en-US')} | ${fmtMs(r.readyMs)} ms | ${cpuMs(r.readyCpuMs)} | ${mib(r.readyRssMiB)} | ${cpuMs(r.settledCpuMs)} | ${mib(r.settledRssMiB)} |`);
  }
  return { markdown: out.join('\n'), verdicts };
}
