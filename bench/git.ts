/**
 * `npm run bench -- git`: the git backend with many references (issue 4).
 *
 * A repository of 100 branches off `main`, each state of 1,000 flags (the state generator's
 * files), where every branch changes one of the 12 files and shares the other 11 with main:
 * the shape of a flags repository with many open pull requests. Served by the real
 * `git http-backend` on loopback (test/support/git-http-server.ts, in this process); every figure
 * comes from a fresh child process running the compiled store and git source:
 *
 * - RSS with only `main` built vs with all 101 references built (target: ≤ 2×), after a GC;
 * - time (wall and CPU) to build all references from an empty cache (one listing, one fetch of
 *   everything, 101 builds sharing parsed documents) and from the warm mirror left by that run;
 * - time to build them one request at a time from an empty cache (a fetch per branch);
 * - the cost of a poll when nothing changed: HTTP round trips and CPU ms per poll.
 *
 * This file is both the orchestrator (imported by bench/run.ts, runs under tsx) and the worker
 * (its compiled copy is run as `node --expose-gc <build>/bench/git.js worker '<json>'`).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generateState } from '../test/support/generate-state.js';
import type { BenchBuild } from './build.js';
import { fmtMs, fmtRatio, verdict } from './stats.js';
import { GIT_SOURCE_DEFAULTS, STORE_DEFAULTS } from '../test/support/config-defaults.js';

export interface GitBenchOptions {
  readonly branches: number;
  readonly flags: number;
  /** No-change polls measured per run. */
  readonly polls: number;
}

export const GIT_DEFAULTS: GitBenchOptions = { branches: 100, flags: 1000, polls: 30 };
export const TARGET_RSS_RATIO = 2;

type Mode = 'one' | 'all' | 'on-demand';

interface WorkerArgs {
  readonly mode: Mode;
  readonly url: string;
  readonly cacheDir: string;
  readonly branches: readonly string[];
  readonly polls: number;
}

export interface GitWorkerLine {
  mode: Mode;
  /** References with a snapshot at the end. */
  built: number;
  buildWallMs: number;
  buildCpuMs: number;
  /** RSS / heap after start and a full GC, before anything was built (MiB). */
  baseRssMiB: number;
  rssMiB: number;
  heapUsedMiB: number;
  /** Fetch exchanges and HTTP requests the build needed. */
  buildFetches: number;
  buildRequests: number;
  /** Per no-change poll. */
  pollRequests: number;
  pollCpuMs: number;
  pollWallMs: number;
  parseMisses: number;
  parseHits: number;
}

const MiB = 2 ** 20;

// ---------------------------------------------------------------- orchestrator

export interface GitBenchReport {
  lines: GitWorkerLine[];
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runGitBench(build: BenchBuild, opts: GitBenchOptions, log: (s: string) => void): Promise<GitBenchReport> {
  const { startGitHttpServer } = await import('../test/support/git-http-server.js');
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-git-'));
  try {
    log(`git: writing a repository of ${opts.branches} branches x ${opts.flags} flags with git fast-import ...`);
    const t0 = performance.now();
    const branches = await makeRepository(join(root, 'flags.git'), opts);
    log(`  made in ${fmtMs(performance.now() - t0)} ms`);
    const server = await startGitHttpServer({ root });
    const url = `${server.url}/flags.git`;
    const lines: GitWorkerLine[] = [];
    try {
      const run = async (mode: Mode, cacheDir: string, label: string) => {
        const line = await runGitWorker(build.root, { mode, url, cacheDir, branches, polls: opts.polls });
        lines.push(line);
        log(
          `  ${label}: ${line.built} built in ${fmtMs(line.buildWallMs)} ms (CPU ${fmtMs(line.buildCpuMs)} ms, ${line.buildFetches} fetches, ${line.buildRequests} requests), ` +
            `RSS ${line.rssMiB.toFixed(0)} MiB (base ${line.baseRssMiB.toFixed(0)}), no-change poll ${line.pollRequests} request(s) ${fmtMs(line.pollCpuMs)} ms CPU`,
        );
        return line;
      };
      const cold = join(root, 'cache-all');
      await run('one', join(root, 'cache-one'), 'main only');
      await run('all', cold, 'all, empty cache');
      await run('all', cold, 'all, warm mirror');
      await run('on-demand', join(root, 'cache-demand'), 'all on demand, empty cache');
    } finally {
      await server.close();
    }
    return { lines, ...gitMarkdown(lines, opts) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

function gitMarkdown(lines: GitWorkerLine[], opts: GitBenchOptions): { markdown: string; verdicts: Array<{ target: string; ok: boolean }> } {
  const [one, allCold, allWarm, demand] = lines as [GitWorkerLine, GitWorkerLine, GitWorkerLine, GitWorkerLine];
  const ratio = allCold.rssMiB / one.rssMiB;
  const ok = ratio <= TARGET_RSS_RATIO;
  const row = (label: string, l: GitWorkerLine) =>
    `| ${label} | ${l.built} | ${fmtMs(l.buildWallMs)} ms | ${fmtMs(l.buildCpuMs)} ms | ${l.buildFetches} / ${l.buildRequests} | ${l.parseMisses} / ${l.parseHits} | ${l.rssMiB.toFixed(0)} MiB | ${l.heapUsedMiB.toFixed(0)} MiB |`;
  const md = [
    `${opts.branches} branches off main, ${opts.flags.toLocaleString('en-US')} flags per reference in 12 files; each branch changes one file. ` +
      'Real `git http-backend` on loopback; one fresh process per row; RSS and heap after a full GC.',
    '',
    '| run | references built | wall | CPU | fetches / HTTP requests | files parsed / parse-cache hits | RSS | heap used |',
    '|---|---:|---:|---:|---:|---:|---:|---:|',
    row('main only (empty cache)', one),
    row('all, prebuild `*` (empty cache)', allCold),
    row('all, prebuild `*` (warm mirror)', allWarm),
    row('all, one request each (empty cache)', demand),
    '',
    `- RSS all built / main only: **${fmtRatio(ratio)}** (target ≤ ${TARGET_RSS_RATIO}×) ${verdict(ok)}`,
    `- No-change poll (${opts.polls} polls, ${allCold.built} references tracked): ${allCold.pollRequests} HTTP round trip(s), ` +
      `${fmtMs(allCold.pollCpuMs)} ms CPU, ${fmtMs(allCold.pollWallMs)} ms wall per poll ` +
      `(main only: ${one.pollRequests} round trip(s), ${fmtMs(one.pollCpuMs)} ms CPU)`,
    `- Time to build all ${allCold.built}: ${fmtMs(allCold.buildWallMs)} ms from an empty cache, ${fmtMs(allWarm.buildWallMs)} ms from the warm mirror, ` +
      `${fmtMs(demand.buildWallMs)} ms one request at a time (${demand.buildFetches} fetches)`,
  ];
  return { markdown: md.join('\n'), verdicts: [{ target: `git: RSS with ${allCold.built} references built ≤ ${TARGET_RSS_RATIO}× RSS with one`, ok }] };
}

function runGitWorker(buildRoot: string, args: WorkerArgs): Promise<GitWorkerLine> {
  const file = join(buildRoot, 'bench/git.js');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', file, 'worker', JSON.stringify(args)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 600_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`git worker failed (${signal ?? `exit ${code}`}):\n${err || out}`));
      else resolve(JSON.parse(line) as GitWorkerLine);
    });
  });
}

/** main + `branches` branches, written by one `git fast-import`; returns the branch names. */
export async function makeRepository(gitdir: string, opts: GitBenchOptions): Promise<string[]> {
  await exec('git', ['init', '-q', '--bare', '--initial-branch=main', gitdir]);
  const files = generateState({ flags: opts.flags, segmentsPerNamespace: 50 });
  const chunks: Buffer[] = [];
  const data = (s: string | Buffer) => {
    const b = Buffer.isBuffer(s) ? s : Buffer.from(s, 'utf8');
    chunks.push(Buffer.from(`data ${b.length}\n`), b, Buffer.from('\n'));
  };
  const who = 'Bench <bench@example.com> 1700000000 +0000';
  chunks.push(Buffer.from(`commit refs/heads/main\nmark :1\ncommitter ${who}\n`));
  data('generated state');
  for (const f of files) {
    chunks.push(Buffer.from(`M 100644 inline ${f.path}\n`));
    data(f.text);
  }
  const names: string[] = [];
  for (let i = 0; i < opts.branches; i++) {
    const name = `preview/pr-${String(i).padStart(3, '0')}`;
    names.push(name);
    // One file per branch changes (a different one of the 10 flag files in turn).
    const flagFiles = files.filter((f) => !f.path.includes('segments'));
    const f = flagFiles[i % flagFiles.length]!;
    const changed = f.text.replace(/description: Generated (variant|boolean) flag (\d+) for load tests/, `description: changed on ${name}`);
    if (changed === f.text) throw new Error(`could not change ${f.path}`);
    chunks.push(Buffer.from(`commit refs/heads/${name}\ncommitter ${who}\n`));
    data(`change on ${name}`);
    chunks.push(Buffer.from(`from :1\nM 100644 inline ${f.path}\n`));
    data(changed);
  }
  await exec('git', ['--git-dir', gitdir, 'fast-import', '--quiet'], Buffer.concat(chunks));
  await exec('git', ['--git-dir', gitdir, 'gc', '-q']);
  return names;
}

function exec(cmd: string, args: string[], input?: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${cmd} ${args.join(' ')}: exit ${code}: ${err}`))));
    child.stdin.on('error', () => {});
    child.stdin.end(input);
  });
}

// ---------------------------------------------------------------- worker

async function worker(args: WorkerArgs): Promise<GitWorkerLine> {
  const { createGitSource } = await import('../src/sources/git/source.js');
  const { createSnapshotStore } = await import('../src/store/snapshot-store.js');
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});
  const source = createGitSource({ ...GIT_SOURCE_DEFAULTS, repository: args.url, cacheDir: args.cacheDir, ref: 'main' });
  const store = createSnapshotStore({
    ...STORE_DEFAULTS,
    source,
    defaultReference: 'main',
    pollIntervalMs: 3_600_000,
    prebuild: args.mode === 'all' ? ['*'] : ['main'],
    idleTtlMs: 3_600_000,
  });
  gc();
  const base = process.memoryUsage().rss;
  const s0 = source.stats();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await store.start();
  await store.settled();
  if (args.mode === 'on-demand') for (const b of args.branches) await store.resolve(b);
  const buildWallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const s1 = source.stats();
  const built = store.status().filter((s) => s.revision !== undefined).length;
  gc();
  await new Promise((r) => setTimeout(r, 50));
  gc();
  const mem = process.memoryUsage();

  // No-change polls: nothing moved on the server.
  const before = source.stats().requests;
  const pc0 = process.cpuUsage();
  const pt0 = performance.now();
  for (let i = 0; i < args.polls; i++) await store.refresh();
  const pollWallMs = (performance.now() - pt0) / args.polls;
  const pc = process.cpuUsage(pc0);
  const pollRequests = (source.stats().requests - before) / args.polls;
  const parse = store.parseCacheStats();
  await store.close();
  return {
    mode: args.mode,
    built,
    buildWallMs,
    buildCpuMs: (cpu.user + cpu.system) / 1000,
    baseRssMiB: base / MiB,
    rssMiB: mem.rss / MiB,
    heapUsedMiB: mem.heapUsed / MiB,
    buildFetches: s1.fetches - s0.fetches,
    buildRequests: s1.requests - s0.requests,
    pollRequests,
    pollCpuMs: (pc.user + pc.system) / 1000 / args.polls,
    pollWallMs,
    parseMisses: parse.misses,
    parseHits: parse.hits,
  };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain && process.argv[2] === 'worker') {
  worker(JSON.parse(process.argv[3] ?? '{}') as WorkerArgs).then(
    (line) => {
      process.stdout.write(`${JSON.stringify(line)}\n`);
      process.exit(0);
    },
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
} else if (isMain) {
  // Standalone: `node --import tsx bench/git.ts [--quick]` (bench/run.ts is the usual entry).
  const { buildForBench } = await import('./build.js');
  const quick = process.argv.includes('--quick');
  const log = (s: string) => process.stderr.write(`${s}\n`);
  const build = buildForBench(log);
  try {
    const opts = quick ? { branches: 20, flags: 200, polls: 5 } : GIT_DEFAULTS;
    const r = await runGitBench(build, opts, log);
    process.stdout.write(`### git\n\n${r.markdown}\n`);
  } finally {
    build.dispose();
  }
}
