/**
 * What every HTTP benchmark shares (bench/http.ts, snapshot.ts, ofrep.ts): starting `vexil serve`
 * from the compiled build and a bare node:http ceiling, each in its own process; running
 * autocannon in its own process; measuring several servers in alternating turns; the CPU time a
 * serving process tree spent per request (from /proc).
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { BenchBuild } from './build.js';
import { REPO } from './build.js';
import { runWorker } from './spawn.js';
import { fmtInt, median } from './stats.js';
import type { AutocannonArgs, AutocannonLine } from './workers/autocannon-worker.js';
import type { CeilingArgs } from './workers/ceiling-server.js';

export interface TurnOptions {
  connections: number;
  /** Seconds of load each target gets in all (split into turns). */
  durationSec: number;
  /** Seconds of load each target gets once before the measured turns. */
  warmupSec: number;
}

/** What autocannon sends on every connection (default: POST with a JSON content type). */
export type LoadRequest = Pick<AutocannonArgs, 'method' | 'headers' | 'body'>;

/** A server under test: its process (tree), the URL the load goes to, and the request. */
export interface Target {
  label: string;
  child: ChildProcess;
  endpoint: string;
  request: LoadRequest;
}

export interface MeasuredRun extends AutocannonLine {
  /** CPU microseconds the serving process tree spent per request during the run (undefined without /proc). */
  serverCpuUsPerRequest?: number;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const fmtCpu = (r: MeasuredRun): string => (r.serverCpuUsPerRequest === undefined ? 'n/a' : `${r.serverCpuUsPerRequest.toFixed(1)} µs`);

export async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

export function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const t = setTimeout(() => child.kill('SIGKILL'), 5000);
    child.once('exit', () => {
      clearTimeout(t);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

export interface VexilServeOptions {
  /** `server.workers` (default 1). */
  workers?: number;
  /** `log.requests` (default: the config default, `errors`). */
  requests?: 'all';
  /** The state files (default: the (a)–(c) fixture, bench/fixtures/features.yml). */
  state?: ReadonlyArray<{ path: string; text: string }>;
  /** More top-level config lines (YAML). */
  config?: readonly string[];
  /** The `storage:` block's lines instead of the local folder `dir/state` (`state` is then not written). */
  storage?: readonly string[];
  /** Node flags before the script (e.g. --expose-gc). */
  nodeArgs?: readonly string[];
  /** More environment variables. */
  env?: Readonly<Record<string, string>>;
  /** Open files allowed (`ulimit -n`, set through sh before node starts); default: inherited. */
  fdLimit?: number;
}

/** This process's open-file limits (`ulimit -Sn`, `ulimit -Hn`); children inherit them. */
export function fdLimits(): { soft: number; hard: number } {
  const out = spawnSync('/bin/sh', ['-c', 'ulimit -Sn; ulimit -Hn'], { encoding: 'utf8' }).stdout.trim().split('\n');
  const n = (s: string | undefined) => (s === 'unlimited' ? Number.POSITIVE_INFINITY : Number(s));
  return { soft: n(out[0]), hard: n(out[1]) };
}

/**
 * Spawns node with `args`; with `fdLimit`, through `sh -c 'ulimit -n N && exec node ...'` (the
 * same process id: sh replaces itself with node, keeping the environment and open descriptors).
 */
export function spawnNode(args: readonly string[], opts: SpawnOptions, fdLimit?: number): ChildProcess {
  if (fdLimit === undefined) return spawn(process.execPath, args, opts);
  return spawn('/bin/sh', ['-c', `ulimit -n ${fdLimit} && exec "$0" "$@"`, process.execPath, ...args], opts);
}

/**
 * `vexil serve` from the compiled build in `dir` (local storage in `dir/state`, info logs as
 * JSON lines into `dir/vexil.log`), with no VEXIL_* variable of this environment; resolves once it
 * listens.
 */
export async function startVexil(build: BenchBuild, dir: string, opts: VexilServeOptions = {}): Promise<{ child: ChildProcess; url: string; logFile: string; stateDir: string }> {
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir, { recursive: true });
  for (const f of opts.storage !== undefined ? [] : opts.state ?? [{ path: 'features.yml', text: readFileSync(join(REPO, 'bench/fixtures/features.yml'), 'utf8') }]) {
    mkdirSync(dirname(join(stateDir, f.path)), { recursive: true });
    writeFileSync(join(stateDir, f.path), f.text);
  }
  const log = ['log:', '  level: info', '  encoding: json', ...(opts.requests !== undefined ? [`  requests: ${opts.requests}`] : [])];
  writeFileSync(
    join(dir, 'config.yml'),
    [
      'server:',
      '  host: 127.0.0.1',
      '  http_port: 0',
      `  workers: ${opts.workers ?? 1}`,
      ...log,
      ...(opts.storage ?? ['storage:', '  type: local', '  local:', '    path: ./state']),
      ...(opts.config ?? []),
      '',
    ].join('\n'),
  );
  const logFile = join(dir, 'vexil.log');
  const fd = openSync(logFile, 'w');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
  env.NODE_OPTIONS = '';
  Object.assign(env, opts.env ?? {});
  const child = spawnNode(
    [...(opts.nodeArgs ?? []), join(build.root, 'src/cli/main.js'), 'serve', '--config', join(dir, 'config.yml')],
    { cwd: dir, env, stdio: ['ignore', fd, 'pipe'] },
    opts.fdLimit,
  );
  closeSync(fd);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await waitFor('vexil to listen', () => {
    if (child.exitCode !== null) throw new Error(`vexil serve exited (${child.exitCode}): ${stderr}`);
    const m = /"url":"(http:\/\/[^"]+)"/.exec(readFileSync(logFile, 'utf8'));
    return m ? m[1] : undefined;
  });
  return { child, url, logFile, stateDir };
}

/** The bare node:http server of bench/workers/ceiling-server.ts, in its own process. */
export async function startCeiling(build: BenchBuild, args: CeilingArgs): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(build.root, 'bench/workers/ceiling-server.js'), JSON.stringify(args)], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const port = await waitFor('the ceiling server to listen', () => {
    const m = /"port":(\d+)/.exec(out);
    return m ? Number(m[1]) : undefined;
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ; 100 on Linux). */
const USER_HZ = 100;

/** CPU seconds (user + system) of a process and all its descendants; undefined without /proc. */
export function cpuSecondsOfTree(root: number): number | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    return undefined;
  }
  const parent = new Map<number, number>();
  const ticks = new Map<number, number>();
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
      // Fields after the command name (which may hold spaces), from field 3 (state) on.
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(e), Number(f[1]));
      ticks.set(Number(e), Number(f[11]) + Number(f[12]));
    } catch {
      // The process ended meanwhile.
    }
  }
  if (!ticks.has(root)) return undefined;
  let total = 0;
  for (const [pid, t] of ticks) {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        total += t;
        break;
      }
    }
  }
  return total / USER_HZ;
}

/** One autocannon run in its own process. */
export async function loadOnce(build: BenchBuild, t: Pick<Target, 'endpoint' | 'request'>, connections: number, durationSec: number): Promise<AutocannonLine> {
  const args: AutocannonArgs = { url: t.endpoint, connections, durationSec, ...t.request };
  const [line] = await runWorker<AutocannonLine>(build.root, 'autocannon-worker', args);
  return line;
}

/**
 * Rounds the measured time is split into: turns of 2 s, or of 1 s when the time is an odd number
 * of seconds (autocannon ends a run on a whole second).
 */
export function roundsFor(durationSec: number): number {
  const seconds = Math.max(1, Math.round(durationSec));
  return seconds % 2 === 0 ? seconds / 2 : seconds;
}

/** The length of one turn, in seconds. */
export function turnSecondsFor(durationSec: number): number {
  return Math.max(1, Math.round(durationSec)) / roundsFor(durationSec);
}

/**
 * Measures the targets against each other: after a warm-up of each, the measured time is split
 * into rounds and every target gets its share of each round in turn (vexil, ceiling, vexil, ...).
 * The machine is shared, and its speed drifts over seconds; measured back to back in short
 * turns, every target sees the same drift, so their ratio is not decided by which one ran during
 * a slow spell. Each target still gets `durationSec` of load in all, from `connections` connections.
 * req/s = all requests / all measured seconds; p50 = median of the rounds' p50, p99 = the worst
 * round's; CPU per request from /proc over the measured turns only (targets sharing a process
 * are each charged only for their own turns).
 */
export async function measureInterleaved(build: BenchBuild, targets: readonly Target[], opts: TurnOptions, log: (s: string) => void): Promise<MeasuredRun[]> {
  for (const t of targets) if (opts.warmupSec > 0) await loadOnce(build, t, opts.connections, opts.warmupSec);
  const rounds = roundsFor(opts.durationSec);
  const turnSec = turnSecondsFor(opts.durationSec);
  const lines = targets.map(() => [] as AutocannonLine[]);
  const cpu = targets.map(() => 0 as number | undefined);
  for (let r = 0; r < rounds; r++) {
    // Each round starts one target later, so no target always runs right after the same other one
    // (a server that leaves the machine busier, e.g. one writing a log line per request, would
    // otherwise always slow the same neighbour).
    for (let k = 0; k < targets.length; k++) {
      const i = (r + k) % targets.length;
      const t = targets[i]!;
      const before = t.child.pid !== undefined ? cpuSecondsOfTree(t.child.pid) : undefined;
      const line = await loadOnce(build, t, opts.connections, turnSec);
      const after = t.child.pid !== undefined ? cpuSecondsOfTree(t.child.pid) : undefined;
      lines[i]!.push(line);
      cpu[i] = before === undefined || after === undefined || cpu[i] === undefined ? undefined : cpu[i]! + (after - before);
    }
    log(`  round ${r + 1}/${rounds}: ${targets.map((t, i) => `${t.label} ${fmtInt(lines[i]![r]!.reqPerSec)} req/s`).join(', ')}`);
  }
  return targets.map((_, i) => combine(lines[i]!, cpu[i]));
}

/** One run's figures from the rounds of one target. */
function combine(lines: AutocannonLine[], cpuSeconds: number | undefined): MeasuredRun {
  const total = lines.reduce((n, l) => n + l.totalRequests, 0);
  const seconds = lines.reduce((n, l) => n + l.durationSec, 0);
  const statusCounts: Record<string, number> = {};
  for (const l of lines) for (const [s, n] of Object.entries(l.statusCounts)) statusCounts[s] = (statusCounts[s] ?? 0) + n;
  const run: MeasuredRun = {
    url: lines[0]!.url,
    reqPerSec: seconds > 0 ? total / seconds : 0,
    totalRequests: total,
    p50Ms: median(lines.map((l) => l.p50Ms)),
    p99Ms: Math.max(...lines.map((l) => l.p99Ms)),
    avgLatencyMs: total > 0 ? lines.reduce((n, l) => n + l.avgLatencyMs * l.totalRequests, 0) / total : 0,
    non2xx: lines.reduce((n, l) => n + l.non2xx, 0),
    errors: lines.reduce((n, l) => n + l.errors, 0),
    timeouts: lines.reduce((n, l) => n + l.timeouts, 0),
    durationSec: seconds,
    statusCounts,
  };
  if (cpuSeconds !== undefined && total > 0) run.serverCpuUsPerRequest = (cpuSeconds * 1e6) / total;
  return run;
}

/** Throws unless every answer of `run` had status `status` (and none failed). */
export function expectOnly(label: string, run: MeasuredRun, status: number): void {
  const others = Object.entries(run.statusCounts).filter(([s, n]) => Number(s) !== status && n > 0);
  if (others.length > 0 || run.errors > 0 || run.timeouts > 0) {
    throw new Error(`${label}: expected only ${status} answers, got ${JSON.stringify(run.statusCounts)}, ${run.errors} errors, ${run.timeouts} timeouts`);
  }
}

/**
 * The headers of an answer as a flat list for the ceiling to replay, without the ones Node's
 * server writes itself (Date, Connection, Keep-Alive, Transfer-Encoding).
 */
export function replayableHeaders(headers: Headers): string[] {
  const own = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);
  const out: string[] = [];
  headers.forEach((value, name) => {
    if (!own.has(name)) out.push(name, value);
  });
  return out;
}
