/**
 * `npm run bench -- streams`: 10,000 concurrent Server-Sent Events streams
 * (`GET /evaluate/v1/namespaces/default/stream`) on one `vexil serve` process (compiled build,
 * default config: `server.max_streams` 10,000, heartbeats every 15 s), local backend watching a
 * folder. Targets: after a state change, p99 time until a client has the event ≤ 1 s; memory per
 * idle connection reported (goal ≤ 20 KB).
 *
 * The clients run in their own process (bench/workers/sse-clients.ts: plain TCP sockets, no
 * EventSource), so the server's CPU and memory figures are its own. They open the streams in
 * batches; once all are open and idle, the server's memory is read after a full garbage
 * collection (bench/workers/memory-probe.ts, loaded with --expose-gc; vexil's code is unchanged)
 * and compared with the same reading before the first stream. Then the client process makes
 * `changes` state changes, one at a time: it rewrites a state file of the streamed namespace
 * (a flag's name, so the namespace's content and ETag change) and times every stream's next
 * state event from just before the write. The time therefore includes what a real change costs:
 * the file watcher, the store's 100 ms debounce, loading and swapping the snapshot, the hub
 * writing 10,000 events, and the client process reading them (on the same 2 CPUs).
 *
 * Each process needs a file descriptor per connection; when the soft `ulimit -n` is lower than
 * that, the server and the client process are started through `sh -c 'ulimit -n N && exec node …'`
 * (up to the hard limit), and the report says so. Bounded: at most `connectTimeoutMs` per batch,
 * `changeTimeoutMs` per change, the client process killed after 5 minutes.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { BenchBuild } from './build.js';
import { REPO } from './build.js';
import { cpuSecondsOfTree, fdLimits, spawnNode, startVexil, stop, waitFor } from './http-harness.js';
import { fmtInt, median, verdict } from './stats.js';
import type { ChangeMessage, ConnectedMessage, SseClientsArgs } from './workers/sse-clients.js';

export interface StreamsBenchOptions {
  connections: number;
  changes: number;
  /** Streams opened at once. */
  batch: number;
}

export const STREAMS_DEFAULTS: StreamsBenchOptions = { connections: 10_000, changes: 5, batch: 500 };
export const STREAMS_QUICK: StreamsBenchOptions = { connections: 2_000, changes: 3, batch: 500 };
export const TARGET_P99_MS = 1000;
export const GOAL_BYTES_PER_STREAM = 20 * 1024;

const STREAM_PATH = '/evaluate/v1/namespaces/default/stream';
const CHANGE_FILE = 'bench-change.features.yml';
/** A second file of the streamed namespace; `{k}` is the change number (0 at start). */
const CHANGE_TEXT = ['version: "1.4"', 'namespace: default', 'flags:', '  - key: bench_change', '    name: change {k}', '    type: BOOLEAN_FLAG_TYPE', '    enabled: true', ''].join('\n');

export interface StreamsReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

/** The server's memory after a full GC (memory-probe.ts answers SIGUSR2 with a line in `file`). */
async function memoryOf(child: ChildProcess, file: string): Promise<MemorySample> {
  const lines = () => readFileSync(file, { encoding: 'utf8', flag: 'a+' }).split('\n').filter((l) => l.startsWith('{'));
  const before = lines().length;
  child.kill('SIGUSR2');
  return waitFor('a memory sample', () => {
    const all = lines();
    return all.length > before ? (JSON.parse(all[all.length - 1]!) as MemorySample) : undefined;
  });
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} ms` : 'n/a');
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;

export async function runStreamsBench(build: BenchBuild, opts: StreamsBenchOptions, log: (s: string) => void): Promise<StreamsReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-streams-'));
  const started: ChildProcess[] = [];
  try {
    // A descriptor per connection, plus the process's own (files, the watcher, the listener).
    const needed = opts.connections + 1024;
    const limits = fdLimits();
    if (limits.hard < needed) throw new Error(`${opts.connections} streams need ${needed} open files per process; the hard limit (ulimit -Hn) is ${limits.hard}`);
    const fdLimit = limits.soft < needed ? needed : undefined;
    const fdNote =
      fdLimit === undefined
        ? `open files: the inherited limit (ulimit -n ${limits.soft}, hard ${limits.hard}) suffices`
        : `open files: raised from ${limits.soft} to ${fdLimit} (ulimit -n in the server's and the clients' shell; hard limit ${limits.hard})`;
    log(`  ${fdNote}`);

    const memFile = join(dir, 'memory.jsonl');
    const vexil = await startVexil(build, join(dir, 'vexil'), {
      state: [
        { path: 'features.yml', text: readFileSync(join(REPO, 'bench/fixtures/features.yml'), 'utf8') },
        { path: CHANGE_FILE, text: CHANGE_TEXT.replaceAll('{k}', '0') },
      ],
      nodeArgs: ['--expose-gc', '--import', pathToFileURL(join(build.root, 'bench/workers/memory-probe.js')).href],
      env: { BENCH_MEMORY_FILE: memFile },
      ...(fdLimit !== undefined ? { fdLimit } : {}),
    });
    started.push(vexil.child);
    const url = new URL(vexil.url);
    const idle = await memoryOf(vexil.child, memFile);
    log(`  vexil at ${vexil.url}: RSS ${fmtInt(idle.rss / 1024)} KB, heap ${fmtInt(idle.heapUsed / 1024)} KB before any stream`);

    const args: SseClientsArgs = {
      host: url.hostname,
      port: Number(url.port),
      path: STREAM_PATH,
      connections: opts.connections,
      batch: opts.batch,
      changeFile: join(vexil.stateDir, CHANGE_FILE),
      changeText: CHANGE_TEXT,
      changes: opts.changes,
      changeTimeoutMs: 10_000,
      connectTimeoutMs: 30_000,
    };
    const clients = spawnNode(
      [join(build.root, 'bench/workers/sse-clients.js'), JSON.stringify(args)],
      { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } },
      fdLimit,
    );
    started.push(clients);
    const killer = setTimeout(() => clients.kill('SIGKILL'), 300_000);
    const messages: Array<ConnectedMessage | ChangeMessage | { phase: 'done' }> = [];
    let wake: (() => void) | undefined;
    clients.on('message', (m) => {
      messages.push(m as (typeof messages)[number]);
      wake?.();
    });
    clients.on('exit', () => wake?.());
    const next = async <P extends string>(phase: P) => {
      for (;;) {
        const i = messages.findIndex((m) => m.phase === phase);
        if (i !== -1) return messages.splice(i, 1)[0] as Extract<(typeof messages)[number], { phase: P }>;
        if (clients.exitCode !== null || clients.signalCode !== null) throw new Error(`the client process ended (${clients.exitCode ?? clients.signalCode}) before '${phase}'`);
        await new Promise<void>((r) => (wake = r));
      }
    };

    log(`  opening ${fmtInt(opts.connections)} streams in batches of ${opts.batch} ...`);
    const cpuBeforeConnect = cpuSecondsOfTree(vexil.child.pid!);
    const connected = await next('connected');
    const cpuConnect = (cpuSecondsOfTree(vexil.child.pid!) ?? Number.NaN) - (cpuBeforeConnect ?? Number.NaN);
    log(`  ${fmtInt(connected.open)} open (${connected.refused} refused, ${connected.failed} failed) in ${(connected.ms / 1000).toFixed(1)} s`);
    // Idle: the first heartbeats are 15 s away; give the last batch's writes time to drain.
    await new Promise((r) => setTimeout(r, 2000));
    const loaded = await memoryOf(vexil.child, memFile);
    const perStream = (k: keyof MemorySample) => (loaded[k] - idle[k]) / Math.max(1, connected.open);
    log(`  with ${fmtInt(connected.open)} idle streams: RSS +${kb(loaded.rss - idle.rss)} (${kb(perStream('rss'))} each), heap +${kb(loaded.heapUsed - idle.heapUsed)} (${kb(perStream('heapUsed'))} each)`);

    clients.send('go');
    const changes: Array<ChangeMessage & { cpuMs: number }> = [];
    for (let k = 1; k <= opts.changes; k++) {
      const before = cpuSecondsOfTree(vexil.child.pid!) ?? Number.NaN;
      const c = await next('change');
      const cpuMs = ((cpuSecondsOfTree(vexil.child.pid!) ?? Number.NaN) - before) * 1000;
      changes.push({ ...c, cpuMs });
      const sorted = [...c.latenciesMs].sort((a, b) => a - b);
      log(`  change ${k}: ${fmtInt(sorted.length)} got it, ${c.missed} missed; p50 ${ms(percentile(sorted, 50))}, p99 ${ms(percentile(sorted, 99))}, last ${ms(sorted[sorted.length - 1] ?? Number.NaN)}; server CPU ${cpuMs.toFixed(0)} ms`);
    }
    await next('done');
    clearTimeout(killer);

    const pooled = changes.flatMap((c) => c.latenciesMs).sort((a, b) => a - b);
    const missed = changes.reduce((n, c) => n + c.missed, 0);
    const p99 = percentile(pooled, 99);
    const allOpen = connected.open === opts.connections;
    const okLatency = allOpen && missed === 0 && p99 <= TARGET_P99_MS;
    const okMemory = perStream('rss') <= GOAL_BYTES_PER_STREAM;
    const rows = changes.map((c) => {
      const s = [...c.latenciesMs].sort((a, b) => a - b);
      return `| ${c.change} | ${fmtInt(s.length)} / ${fmtInt(s.length + c.missed)} | ${ms(percentile(s, 50))} | ${ms(percentile(s, 99))} | ${ms(s[s.length - 1] ?? Number.NaN)} | ${c.cpuMs.toFixed(0)} ms |`;
    });
    const markdown = [
      `${fmtInt(opts.connections)} Server-Sent Events streams (GET ${STREAM_PATH}) on one \`vexil serve\` process (default config), opened in batches of ${opts.batch} by a separate client process over plain TCP; then ${opts.changes} state changes (a flag's name in a second file of the namespace), 1 s apart, each timed from just before the file write to each stream's next state event. ${fdNote}.`,
      '',
      `Streams open: ${fmtInt(connected.open)} of ${fmtInt(opts.connections)} (${connected.refused} refused, ${connected.failed} failed) in ${(connected.ms / 1000).toFixed(1)} s; server CPU to open them ${Number.isFinite(cpuConnect) ? `${((cpuConnect * 1e6) / Math.max(1, connected.open)).toFixed(0)} µs per stream` : 'n/a'}.`,
      '',
      '| change | streams with the event | p50 | p99 | last | server CPU (the change and the idle second before it) |',
      '|---:|---:|---:|---:|---:|---:|',
      ...rows,
      '',
      `All changes pooled: p50 ${ms(percentile(pooled, 50))}, p99 **${ms(p99)}** (target ≤ ${TARGET_P99_MS} ms), last ${ms(pooled[pooled.length - 1] ?? Number.NaN)}, median time until every stream had it ${ms(median(changes.map((c) => Math.max(...c.latenciesMs))))}; ${missed} missed: ${verdict(okLatency)}.`,
      '',
      `Memory of the server after a full GC, idle, before any stream → with ${fmtInt(connected.open)} idle streams: RSS ${fmtInt(idle.rss / 1024)} → ${fmtInt(loaded.rss / 1024)} KB, **${kb(perStream('rss'))} per stream** (goal ≤ ${GOAL_BYTES_PER_STREAM / 1024} KB): ${verdict(okMemory)}; JS heap ${kb(perStream('heapUsed'))}, external ${kb(perStream('external'))} per stream.`,
    ].join('\n');
    return {
      markdown,
      verdicts: [
        { target: `streams: ${fmtInt(opts.connections)} SSE streams, p99 time to a change's event ≤ ${TARGET_P99_MS} ms`, ok: okLatency },
        { target: `streams: memory per idle stream ≤ ${GOAL_BYTES_PER_STREAM / 1024} KB (RSS after GC)`, ok: okMemory },
      ],
    };
  } finally {
    for (const child of started.reverse()) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}

