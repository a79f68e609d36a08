/**
 * `npm run bench -- tracing`: evaluation throughput (`POST /evaluate/v1/variant`, the fast path)
 * of `vexil serve` with OpenTelemetry tracing at `sampling_ratio: 0.01` against the same server
 * with tracing off, in the same run. Target: 1 % sampling ≥ 0.9× off. A third server samples
 * every request (`sampling_ratio: 1`), measured for information: the cost of a recorded span, its
 * evaluation event and its export.
 *
 * The collector is the ceiling server of bench/http.ts replaying an empty OTLP success answer
 * (`200 {}`), in its own process, so exports really leave the process and succeed. Every server is
 * the compiled build in its own process (bench/http-harness.ts), measured in alternating turns, and
 * the spans the 1 % server dropped are read from its /metrics afterwards (0 expected).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { EVAL_BODY } from './http.js';
import {
  expectOnly,
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

export type TracingBenchOptions = TurnOptions;

export const TRACING_DEFAULTS: TracingBenchOptions = { connections: 50, durationSec: 10, warmupSec: 2 };
export const TARGET_TRACING = 0.9;

export interface TracingReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

const tracingConfig = (endpoint: string, ratio: number) => ['tracing:', '  enabled: true', `  sampling_ratio: ${ratio}`, '  otlp:', `    endpoint: ${endpoint}`];

async function dropped(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^vexil_tracing_spans_dropped_total\{reason="(\w+)"\} (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`).join(', ');
}

export async function runTracingBench(build: BenchBuild, opts: TracingBenchOptions, log: (s: string) => void): Promise<TracingReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-tracing-'));
  const started: ChildProcess[] = [];
  try {
    const okBody = join(dir, 'otlp-ok.json');
    writeFileSync(okBody, '{}');
    const collector = await startCeiling(build, { replay: { status: 200, headers: ['Content-Type', 'application/json', 'Content-Length', '2'], bodyFile: okBody } });
    started.push(collector.child);
    const off = await startVexil(build, join(dir, 'off'));
    started.push(off.child);
    const sampled = await startVexil(build, join(dir, 'one-percent'), { config: tracingConfig(collector.url, 0.01) });
    started.push(sampled.child);
    const all = await startVexil(build, join(dir, 'all'), { config: tracingConfig(collector.url, 1) });
    started.push(all.child);
    log(`  collector ${collector.url}; vexil off ${off.url}, 1 % ${sampled.url}, 100 % ${all.url}`);

    const request = { body: EVAL_BODY };
    const path = '/evaluate/v1/variant';
    const targets: Target[] = [
      { label: 'tracing off', child: off.child, endpoint: `${off.url}${path}`, request },
      { label: 'tracing on, 1 % sampled', child: sampled.child, endpoint: `${sampled.url}${path}`, request },
      { label: 'tracing on, every request sampled', child: all.child, endpoint: `${all.url}${path}`, request },
    ];
    const runs = (await measureInterleaved(build, targets, opts, log)) as [MeasuredRun, MeasuredRun, MeasuredRun];
    for (const [i, run] of runs.entries()) {
      expectOnly(targets[i]!.label, run, 200);
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, server CPU ${fmtCpu(run)} per request`);
    }
    const [o, s, a] = runs;
    const drops = { sampled: await dropped(sampled.url), all: await dropped(all.url) };
    const ratio = s.reqPerSec / o.reqPerSec;
    const ok = ratio >= TARGET_TRACING;
    const row = (name: string, l: MeasuredRun) => `| ${name} | ${fmtInt(l.reqPerSec)} | ${l.p50Ms} ms | ${l.p99Ms} ms | ${fmtInt(l.totalRequests)} | ${fmtCpu(l)} |`;
    const markdown = [
      `autocannon, ${opts.connections} connections, POST ${path} with \`${EVAL_BODY}\` (the fast path), ${opts.durationSec} s per server (after a ${opts.warmupSec} s warm-up) in ${roundsFor(opts.durationSec)} alternating turns of ${turnSecondsFor(opts.durationSec)} s; spans exported over OTLP/HTTP (JSON) to a loopback collector answering \`200 {}\`.`,
      '',
      '| server | req/s | p50 | p99 | requests | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|',
      row('tracing off (default)', o),
      row('tracing on, sampling_ratio 0.01', s),
      row('tracing on, sampling_ratio 1 (reported)', a),
      '',
      `1 % sampled / off = **${fmtRatio(ratio)}** (target ≥ ${TARGET_TRACING}×): ${verdict(ok)}. Every request sampled / off = ${fmtRatio(a.reqPerSec / o.reqPerSec)} (not judged). Spans dropped: 1 % server ${drops.sampled}; 100 % server ${drops.all}.`,
    ].join('\n');
    return { markdown, verdicts: [{ target: `tracing: evaluation throughput at 1 % sampling ≥ ${TARGET_TRACING}× tracing off`, ok }] };
  } finally {
    for (const child of started) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}
