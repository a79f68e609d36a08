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
 * `--against REV`: a third vexil, built from commit REV of this repository (bench/build.ts), takes
 * its turns in the single-process run too, so a change is judged against the code before it under
 * the same load at the same moments: its req/s and CPU per request are reported beside this
 * build's, with the ratio of the two.
 *
 * Next to req/s it reports the CPU time the serving processes (a cluster's primary and workers
 * together) spent per request during the measured run, from /proc (Linux; "n/a" elsewhere). On a
 * shared machine req/s moves with everything else running; CPU per request moves much less, so
 * it tells whether a change made the server cheaper when the throughput figures are too noisy.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import {
  fmtCpu,
  measureInterleaved,
  roundsFor,
  startCeiling,
  startVexil,
  stop,
  turnSecondsFor,
  type MeasuredRun,
  type Target,
  type TurnOptions,
} from './http-harness.js';
import { fmtInt, fmtRatio, verdict } from './stats.js';

export type HttpOptions = TurnOptions;

export const HTTP_DEFAULTS: HttpOptions = { connections: 50, durationSec: 10, warmupSec: 2 };
export const TARGET_CEILING = 0.7;

/** The request every connection sends (variant scenario (a) of the eval bench). */
export const EVAL_BODY = JSON.stringify({ namespaceKey: 'default', flagKey: 'flag1', entityId: 'user-42', context: { fizz: 'buzz' } });
const EVAL_REQUEST = { body: EVAL_BODY };

export interface HttpReport {
  vexil: MeasuredRun;
  ceiling: MeasuredRun;
  responseBytes: number;
  /** The same pair with one serving process per core. */
  clustered: HttpPair;
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export interface HttpPair {
  workers: number;
  vexil: MeasuredRun;
  ceiling: MeasuredRun;
  ratio: number;
  /** vexil again with `log.requests: all`, when measured (reported, not judged). */
  everyRequestLogged?: MeasuredRun;
  /** vexil built from the `--against` commit, when measured. */
  against?: MeasuredRun;
}

/** Starts vexil and checks its answer; returns the target and the size of a response. */
async function startCheckedVexil(build: BenchBuild, dir: string, workers: number, label: string, log: (s: string) => void, requests?: 'all') {
  const v = await startVexil(build, dir, { workers: workers === 1 ? 1 : 0, ...(requests !== undefined ? { requests } : {}) });
  const endpoint = `${v.url}/evaluate/v1/variant`;
  const probe = await fetch(endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: EVAL_BODY });
  const sample = await probe.text();
  if (probe.status !== 200) {
    await stop(v.child);
    throw new Error(`vexil answered ${probe.status}: ${sample}`);
  }
  log(`  ${label} at ${v.url}; a response is ${Buffer.byteLength(sample)} bytes: ${sample}`);
  const target: Target = { label, child: v.child, endpoint, request: EVAL_REQUEST };
  return { target, responseBytes: Buffer.byteLength(sample) };
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
  against?: { build: BenchBuild; rev: string },
): Promise<HttpPair & { responseBytes: number }> {
  const label = workers === 1 ? 'single process' : `${workers} workers`;
  const started: ChildProcess[] = [];
  try {
    const vexil = await startCheckedVexil(build, join(dir, `w${workers}`), workers, `vexil (${label})`, log);
    started.push(vexil.target.child);
    const c = await startCeiling(build, { bodyBytes: vexil.responseBytes, workers });
    started.push(c.child);
    const targets: Target[] = [vexil.target, { label: `ceiling (${label})`, child: c.child, endpoint: `${c.url}/evaluate/v1/variant`, request: EVAL_REQUEST }];
    if (everyRequestLogged) {
      const all = await startCheckedVexil(build, join(dir, `w${workers}-all`), workers, `vexil (${label}, log.requests: all)`, log, 'all');
      started.push(all.target.child);
      targets.push(all.target);
    }
    const againstAt = targets.length;
    if (against !== undefined) {
      const old = await startCheckedVexil(against.build, join(dir, `w${workers}-against`), workers, `vexil at ${against.rev} (${label})`, log);
      started.push(old.target.child);
      targets.push(old.target);
    }
    const runs = await measureInterleaved(build, targets, opts, log);
    for (const [i, run] of runs.entries()) {
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, non-2xx ${run.non2xx}, errors ${run.errors}, server CPU ${fmtCpu(run)} per request`);
    }
    for (const [i, run] of runs.entries()) {
      if (i !== 1 && (run.non2xx > 0 || run.errors > 0)) throw new Error(`${targets[i]!.label} answered ${run.non2xx} non-2xx and ${run.errors} errors under load`);
    }
    const [v, ceiling] = runs as [MeasuredRun, MeasuredRun];
    const logged = everyRequestLogged ? runs[2] : undefined;
    const old = against !== undefined ? runs[againstAt] : undefined;
    return {
      workers,
      vexil: v,
      ceiling,
      ratio: v.reqPerSec / ceiling.reqPerSec,
      responseBytes: vexil.responseBytes,
      ...(logged !== undefined ? { everyRequestLogged: logged } : {}),
      ...(old !== undefined ? { against: old } : {}),
    };
  } finally {
    for (const child of started) await stop(child);
  }
}

/** This build against the `--against` build, measured in the same alternating turns. */
function againstLine(old: MeasuredRun, single: HttpPair, rev: string): string {
  const cpu =
    old.serverCpuUsPerRequest !== undefined && single.vexil.serverCpuUsPerRequest !== undefined
      ? ` Server CPU per request: ${fmtCpu(single.vexil)} here, ${fmtCpu(old)} at ${rev} (${(single.vexil.serverCpuUsPerRequest / old.serverCpuUsPerRequest).toFixed(2)}×).`
      : '';
  return `This build / the build at ${rev} = **${fmtRatio(single.vexil.reqPerSec / old.reqPerSec)}** req/s (${fmtRatio(single.ratio)} and ${fmtRatio(old.reqPerSec / single.ceiling.reqPerSec)} the ceiling).${cpu}`;
}

export async function runHttpBench(
  build: BenchBuild,
  opts: HttpOptions,
  log: (s: string) => void,
  against?: { build: BenchBuild; rev: string },
): Promise<HttpReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-http-'));
  try {
    const single = await measurePair(build, dir, opts, 1, log, true, against);
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
      `autocannon, ${opts.connections} connections, ${opts.durationSec} s (after a ${opts.warmupSec} s warm-up), POST /evaluate/v1/variant with a ${Buffer.byteLength(EVAL_BODY)}-byte body; the ceiling answers a fixed ${responseBytes}-byte body. Each server's ${opts.durationSec} s are taken in ${roundsFor(opts.durationSec)} alternating turns of ${turnSecondsFor(opts.durationSec)} s (vexil, ceiling, vexil with \`log.requests: all\`, again ...), so the machine's drift hits all alike. First one process each, then \`server.workers: 0\` (${cores} workers) against a node:cluster ceiling of ${cores} workers; the load generator shares the same ${cores} cores.`,
      '',
      '| server | req/s | p50 | p99 | requests | non-2xx / errors | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|---:|',
      row('vexil serve (default config: info logs to a file, log.requests: errors)', vexil),
      row('bare node:http, fixed body (ceiling)', ceiling),
      ...(single.everyRequestLogged !== undefined ? [row('vexil serve, log.requests: all (a log line per request)', single.everyRequestLogged)] : []),
      ...(single.against !== undefined ? [row(`vexil serve at ${against!.rev} (--against; default config)`, single.against)] : []),
      row(`vexil serve, server.workers: 0 (${cores} workers)`, clustered.vexil),
      row(`bare node:http, node:cluster ${cores} workers (clustered ceiling)`, clustered.ceiling),
      '',
      `vexil / ceiling = **${fmtRatio(single.ratio)}** (target ≥ ${TARGET_CEILING}×): ${verdict(ok)}.${cpuRatio(single)}`,
      ...(single.everyRequestLogged !== undefined
        ? ['', `With a log line per request (\`log.requests: all\`, not the default): ${fmtRatio(single.everyRequestLogged.reqPerSec / ceiling.reqPerSec)} the ceiling, server CPU ${fmtCpu(single.everyRequestLogged)} per request (reported, not judged).`]
        : []),
      ...(single.against !== undefined ? ['', againstLine(single.against, single, against!.rev)] : []),
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
