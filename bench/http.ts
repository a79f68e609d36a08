/**
 * `npm run bench -- http`: autocannon on loopback, 50 connections, against `POST /evaluate/v1/variant`
 * of a real `vexil serve` (compiled build, default config: info logs as JSON lines, here into a
 * file; `log.requests: errors`, so answered evaluations write no line) and, in the same run,
 * against a bare node:http server answering a fixed body of the same size (the ceiling). Each
 * server and the load generator are separate processes; each server gets a short warm-up run
 * first, then each gets its 10 s of load in turns of about 2 s, alternating (measureInterleaved),
 * so a slow spell of the shared machine hits both alike. Target: vexil >= 0.7x the ceiling's
 * req/s. A second vexil with `log.requests: all` (a log line per request) takes its turns too and
 * shows what access logging costs; it is reported, not judged.
 *
 * Cluster mode: the same pair again with `server.workers: 0` (one worker per core) against a
 * clustered ceiling (node:cluster, as many workers). On 2 cores the load generator takes one, so
 * that ratio, not the scaling, is the figure to judge.
 *
 * Next to req/s it reports the CPU time the serving processes (a cluster's primary and workers
 * together) spent per request during the measured run, from /proc (Linux; "n/a" elsewhere). On a
 * shared machine req/s moves with everything else running; CPU per request moves much less, so
 * it tells whether a change made the server cheaper when the throughput figures are too noisy.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, closeSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { REPO } from './build.js';
import { runWorker } from './spawn.js';
import { fmtInt, fmtRatio, verdict } from './stats.js';
import type { AutocannonLine } from './workers/autocannon-worker.js';

export interface HttpOptions {
  connections: number;
  durationSec: number;
  warmupSec: number;
}

export const HTTP_DEFAULTS: HttpOptions = { connections: 50, durationSec: 10, warmupSec: 2 };
export const TARGET_CEILING = 0.7;

/** The request every connection sends (variant scenario (a) of the eval bench). */
export const EVAL_BODY = JSON.stringify({ namespaceKey: 'default', flagKey: 'flag1', entityId: 'user-42', context: { fizz: 'buzz' } });

const fmtCpu = (r: MeasuredRun): string => (r.serverCpuUsPerRequest === undefined ? 'n/a' : `${r.serverCpuUsPerRequest.toFixed(1)} µs`);

export interface HttpReport {
  vexil: MeasuredRun;
  ceiling: MeasuredRun;
  responseBytes: number;
  /** The same pair with one serving process per core. */
  clustered: HttpPair;
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitFor<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

function stop(child: ChildProcess): Promise<void> {
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

async function startVexil(build: BenchBuild, dir: string, workers = 1, requests?: 'all'): Promise<{ child: ChildProcess; url: string; logFile: string }> {
  mkdirSync(join(dir, 'state'), { recursive: true });
  writeFileSync(join(dir, 'state/features.yml'), readFileSync(join(REPO, 'bench/fixtures/features.yml')));
  const log = ['log:', '  level: info', '  encoding: json', ...(requests !== undefined ? [`  requests: ${requests}`] : [])];
  writeFileSync(
    join(dir, 'config.yml'),
    ['server:', '  host: 127.0.0.1', '  http_port: 0', `  workers: ${workers}`, ...log, 'storage:', '  type: local', '  local:', '    path: ./state', ''].join('\n'),
  );
  const logFile = join(dir, 'vexil.log');
  const fd = openSync(logFile, 'w');
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VEXIL_')) env[k] = v;
  env.NODE_OPTIONS = '';
  const child = spawn(process.execPath, [join(build.root, 'src/cli/main.js'), 'serve', '--config', join(dir, 'config.yml')], {
    cwd: dir,
    env,
    stdio: ['ignore', fd, 'pipe'],
  });
  closeSync(fd);
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await waitFor('vexil to listen', () => {
    if (child.exitCode !== null) throw new Error(`vexil serve exited (${child.exitCode}): ${stderr}`);
    const m = /"url":"(http:\/\/[^"]+)"/.exec(readFileSync(logFile, 'utf8'));
    return m ? m[1] : undefined;
  });
  return { child, url, logFile };
}

async function startCeiling(build: BenchBuild, bodyBytes: number, workers = 1): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(build.root, 'bench/workers/ceiling-server.js'), JSON.stringify({ bodyBytes, workers })], {
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
function cpuSecondsOfTree(root: number): number | undefined {
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

export interface MeasuredRun extends AutocannonLine {
  /** CPU microseconds the serving process tree spent per request during the run (undefined without /proc). */
  serverCpuUsPerRequest?: number;
}

async function load(build: BenchBuild, url: string, opts: HttpOptions, durationSec: number): Promise<AutocannonLine> {
  const [line] = await runWorker<AutocannonLine>(build.root, 'autocannon-worker', { url, connections: opts.connections, durationSec, body: EVAL_BODY });
  return line;
}

/** A server under test: its process (tree) and the URL the load goes to. */
interface Target {
  label: string;
  child: ChildProcess;
  endpoint: string;
}

/**
 * Rounds the measured time is split into: turns of 2 s, or of 1 s when the time is an odd number
 * of seconds (autocannon ends a run on a whole second).
 */
function roundsFor(durationSec: number): number {
  const seconds = Math.max(1, Math.round(durationSec));
  return seconds % 2 === 0 ? seconds / 2 : seconds;
}

/**
 * Measures the targets against each other: after a warm-up of each, the measured time is split
 * into rounds and every target gets its share of each round in turn (vexil, ceiling, vexil, ...).
 * The machine is shared, and its speed drifts over seconds; measured back to back in short
 * turns, every target sees the same drift, so their ratio is not decided by which one ran during
 * a slow spell. Each target still gets `durationSec` of load in all, from 50 connections.
 * req/s = all requests / all measured seconds; p50 = median of the rounds' p50, p99 = the worst
 * round's; CPU per request from /proc over the measured turns only.
 */
async function measureInterleaved(build: BenchBuild, targets: readonly Target[], opts: HttpOptions, log: (s: string) => void): Promise<MeasuredRun[]> {
  for (const t of targets) if (opts.warmupSec > 0) await load(build, t.endpoint, opts, opts.warmupSec);
  const rounds = roundsFor(opts.durationSec);
  const turnSec = Math.max(1, Math.round(opts.durationSec)) / rounds;
  const lines = targets.map(() => [] as AutocannonLine[]);
  const cpu = targets.map(() => 0 as number | undefined);
  for (let r = 0; r < rounds; r++) {
    for (const [i, t] of targets.entries()) {
      const before = t.child.pid !== undefined ? cpuSecondsOfTree(t.child.pid) : undefined;
      const line = await load(build, t.endpoint, opts, turnSec);
      const after = t.child.pid !== undefined ? cpuSecondsOfTree(t.child.pid) : undefined;
      lines[i]!.push(line);
      cpu[i] = before === undefined || after === undefined || cpu[i] === undefined ? undefined : cpu[i]! + (after - before);
    }
    log(`  round ${r + 1}/${rounds}: ${targets.map((t, i) => `${t.label} ${fmtInt(lines[i]![r]!.reqPerSec)} req/s`).join(', ')}`);
  }
  return targets.map((_, i) => combine(lines[i]!, cpu[i]));
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One run's figures from the rounds of one target. */
function combine(lines: AutocannonLine[], cpuSeconds: number | undefined): MeasuredRun {
  const total = lines.reduce((n, l) => n + l.totalRequests, 0);
  const seconds = lines.reduce((n, l) => n + l.durationSec, 0);
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
  };
  if (cpuSeconds !== undefined && total > 0) run.serverCpuUsPerRequest = (cpuSeconds * 1e6) / total;
  return run;
}

export interface HttpPair {
  workers: number;
  vexil: MeasuredRun;
  ceiling: MeasuredRun;
  ratio: number;
  /** vexil again with `log.requests: all`, when measured (reported, not judged). */
  everyRequestLogged?: MeasuredRun;
}

/** Starts vexil and checks its answer; returns the target and the size of a response. */
async function startCheckedVexil(build: BenchBuild, dir: string, workers: number, label: string, log: (s: string) => void, requests?: 'all') {
  const v = await startVexil(build, dir, workers === 1 ? 1 : 0, requests);
  const endpoint = `${v.url}/evaluate/v1/variant`;
  const probe = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: EVAL_BODY });
  const sample = await probe.text();
  if (probe.status !== 200) {
    await stop(v.child);
    throw new Error(`vexil answered ${probe.status}: ${sample}`);
  }
  log(`  ${label} at ${v.url}; a response is ${Buffer.byteLength(sample)} bytes: ${sample}`);
  return { target: { label, child: v.child, endpoint }, responseBytes: Buffer.byteLength(sample) };
}

/**
 * vexil and the ceiling with the same number of serving processes, measured in alternating turns
 * (measureInterleaved). With `everyRequestLogged`, a second vexil with `log.requests: all` takes
 * its turns too.
 */
async function measurePair(
  build: BenchBuild,
  dir: string,
  opts: HttpOptions,
  workers: number,
  log: (s: string) => void,
  everyRequestLogged = false,
): Promise<HttpPair & { responseBytes: number }> {
  const label = workers === 1 ? 'single process' : `${workers} workers`;
  const started: ChildProcess[] = [];
  try {
    const vexil = await startCheckedVexil(build, join(dir, `w${workers}`), workers, `vexil (${label})`, log);
    started.push(vexil.target.child);
    const c = await startCeiling(build, vexil.responseBytes, workers);
    started.push(c.child);
    const targets: Target[] = [vexil.target, { label: `ceiling (${label})`, child: c.child, endpoint: `${c.url}/evaluate/v1/variant` }];
    if (everyRequestLogged) {
      const all = await startCheckedVexil(build, join(dir, `w${workers}-all`), workers, `vexil (${label}, log.requests: all)`, log, 'all');
      started.push(all.target.child);
      targets.push(all.target);
    }
    const runs = await measureInterleaved(build, targets, opts, log);
    for (const [i, run] of runs.entries()) {
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, non-2xx ${run.non2xx}, errors ${run.errors}, server CPU ${fmtCpu(run)} per request`);
    }
    for (const [i, run] of runs.entries()) {
      if (i !== 1 && (run.non2xx > 0 || run.errors > 0)) throw new Error(`${targets[i]!.label} answered ${run.non2xx} non-2xx and ${run.errors} errors under load`);
    }
    const [v, ceiling, logged] = runs as [MeasuredRun, MeasuredRun, MeasuredRun | undefined];
    return {
      workers,
      vexil: v,
      ceiling,
      ratio: v.reqPerSec / ceiling.reqPerSec,
      responseBytes: vexil.responseBytes,
      ...(logged !== undefined ? { everyRequestLogged: logged } : {}),
    };
  } finally {
    for (const child of started) await stop(child);
  }
}

export async function runHttpBench(build: BenchBuild, opts: HttpOptions, log: (s: string) => void): Promise<HttpReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-http-'));
  try {
    const single = await measurePair(build, dir, opts, 1, log, true);
    const cores = availableParallelism();
    log(`http: again with server.workers: 0 (${cores} workers) against a clustered ceiling ...`);
    const clustered = await measurePair(build, dir, opts, cores, log);
    const { vexil, ceiling, responseBytes } = single;
    const ok = single.ratio >= TARGET_CEILING;
    const okCluster = clustered.ratio >= TARGET_CEILING;
    const row = (name: string, l: MeasuredRun) =>
      `| ${name} | ${fmtInt(l.reqPerSec)} | ${l.p50Ms} ms | ${l.p99Ms} ms | ${fmtInt(l.totalRequests)} | ${l.non2xx} / ${l.errors} | ${fmtCpu(l)} |`;
    const cpuRatio = (p: HttpPair) =>
      p.vexil.serverCpuUsPerRequest !== undefined && p.ceiling.serverCpuUsPerRequest !== undefined
        ? ` Server CPU per request: vexil ${fmtCpu(p.vexil)}, ceiling ${fmtCpu(p.ceiling)} (${(p.vexil.serverCpuUsPerRequest / p.ceiling.serverCpuUsPerRequest).toFixed(2)}× the ceiling's).`
        : '';
    const markdown = [
      `autocannon, ${opts.connections} connections, ${opts.durationSec} s (after a ${opts.warmupSec} s warm-up), POST /evaluate/v1/variant with a ${Buffer.byteLength(EVAL_BODY)}-byte body; the ceiling answers a fixed ${responseBytes}-byte body. Each server's ${opts.durationSec} s are taken in ${roundsFor(opts.durationSec)} alternating turns of ${Math.max(1, Math.round(opts.durationSec)) / roundsFor(opts.durationSec)} s (vexil, ceiling, vexil with \`log.requests: all\`, again ...), so the machine's drift hits all alike. First one process each, then \`server.workers: 0\` (${cores} workers) against a node:cluster ceiling of ${cores} workers; the load generator shares the same ${cores} cores.`,
      '',
      '| server | req/s | p50 | p99 | requests | non-2xx / errors | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|---:|',
      row('vexil serve (default config: info logs to a file, log.requests: errors)', vexil),
      row('bare node:http, fixed body (ceiling)', ceiling),
      ...(single.everyRequestLogged !== undefined ? [row('vexil serve, log.requests: all (a log line per request)', single.everyRequestLogged)] : []),
      row(`vexil serve, server.workers: 0 (${cores} workers)`, clustered.vexil),
      row(`bare node:http, node:cluster ${cores} workers (clustered ceiling)`, clustered.ceiling),
      '',
      `vexil / ceiling = **${fmtRatio(single.ratio)}** (target ≥ ${TARGET_CEILING}×): ${verdict(ok)}.${cpuRatio(single)}`,
      ...(single.everyRequestLogged !== undefined
        ? ['', `With a log line per request (\`log.requests: all\`, not the default): ${fmtRatio(single.everyRequestLogged.reqPerSec / ceiling.reqPerSec)} the ceiling, server CPU ${fmtCpu(single.everyRequestLogged)} per request (reported, not judged).`]
        : []),
      '',
      `clustered vexil / clustered ceiling = **${fmtRatio(clustered.ratio)}** (target ≥ ${TARGET_CEILING}×): ${verdict(okCluster)}.${cpuRatio(clustered)}`,
    ].join('\n');
    return {
      vexil,
      ceiling,
      responseBytes,
      clustered,
      markdown,
      verdicts: [
        { target: `http: vexil ≥ ${TARGET_CEILING}× bare node:http`, ok },
        { target: `http, all cores: vexil (server.workers: 0) ≥ ${TARGET_CEILING}× clustered bare node:http`, ok: okCluster },
      ],
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
