/**
 * `npm run bench -- ofrep`: OFREP single-flag evaluation (`POST /ofrep/v1/evaluate/flags/{key}`)
 * of a real `vexil serve` (compiled build, default config, the (a)–(c) fixture) against the bare
 * node:http ceiling of bench/http.ts (reads the body, answers a fixed JSON body of the size of
 * vexil's answer). Target: OFREP ≥ 0.6× the ceiling.
 *
 * The request is variant scenario (a) of the eval bench in OFREP's form: flag1 with targetingKey
 * user-42 and fizz=buzz. `POST /evaluate/v1/variant` with the same request takes its turns too,
 * reported and not judged, so the cost of the OFREP shape shows next to the evaluation API's.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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

export type OfrepBenchOptions = TurnOptions;

export const OFREP_DEFAULTS: OfrepBenchOptions = { connections: 50, durationSec: 10, warmupSec: 2 };
export const TARGET_OFREP = 0.6;

const OFREP_PATH = '/ofrep/v1/evaluate/flags/flag1';
const OFREP_BODY = JSON.stringify({ context: { targetingKey: 'user-42', fizz: 'buzz' } });

export interface OfrepReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runOfrepBench(build: BenchBuild, opts: OfrepBenchOptions, log: (s: string) => void): Promise<OfrepReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-ofrep-'));
  const started: ChildProcess[] = [];
  try {
    const vexil = await startVexil(build, join(dir, 'vexil'));
    started.push(vexil.child);
    const probe = await fetch(`${vexil.url}${OFREP_PATH}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: OFREP_BODY });
    const sample = await probe.text();
    if (probe.status !== 200) throw new Error(`vexil answered ${probe.status}: ${sample}`);
    const responseBytes = Buffer.byteLength(sample);
    log(`  vexil at ${vexil.url}; an OFREP answer is ${responseBytes} bytes: ${sample}`);
    const ceiling = await startCeiling(build, { bodyBytes: responseBytes });
    started.push(ceiling.child);

    const ofrep = { body: OFREP_BODY };
    const targets: Target[] = [
      { label: 'vexil OFREP', child: vexil.child, endpoint: `${vexil.url}${OFREP_PATH}`, request: ofrep },
      { label: 'ceiling', child: ceiling.child, endpoint: `${ceiling.url}${OFREP_PATH}`, request: ofrep },
      { label: 'vexil /evaluate/v1/variant', child: vexil.child, endpoint: `${vexil.url}/evaluate/v1/variant`, request: { body: EVAL_BODY } },
    ];
    const [v, c, e] = (await measureInterleaved(build, targets, opts, log)) as [MeasuredRun, MeasuredRun, MeasuredRun];
    for (const [i, run] of [v, c, e].entries()) {
      expectOnly(targets[i]!.label, run, 200);
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, server CPU ${fmtCpu(run)} per request`);
    }
    const ratio = v.reqPerSec / c.reqPerSec;
    const ok = ratio >= TARGET_OFREP;
    const row = (name: string, l: MeasuredRun) => `| ${name} | ${fmtInt(l.reqPerSec)} | ${l.p50Ms} ms | ${l.p99Ms} ms | ${fmtInt(l.totalRequests)} | ${fmtCpu(l)} |`;
    const markdown = [
      `autocannon, ${opts.connections} connections, POST ${OFREP_PATH} with \`${OFREP_BODY}\`, ${opts.durationSec} s per target (after a ${opts.warmupSec} s warm-up) in ${roundsFor(opts.durationSec)} alternating turns of ${turnSecondsFor(opts.durationSec)} s; the ceiling reads the body and answers a fixed ${responseBytes}-byte JSON body (the size of vexil's answer).`,
      '',
      '| server | req/s | p50 | p99 | requests | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|',
      row('vexil, OFREP single flag', v),
      row('bare node:http, fixed body (ceiling)', c),
      row('vexil, POST /evaluate/v1/variant, same request (reported)', e),
      '',
      `OFREP / ceiling = **${fmtRatio(ratio)}** (target ≥ ${TARGET_OFREP}×): ${verdict(ok)}. /evaluate/v1/variant / ceiling = ${fmtRatio(e.reqPerSec / c.reqPerSec)} (not judged here; bench/http.ts judges it against a ceiling of its own answer's size).`,
    ].join('\n');
    return { markdown, verdicts: [{ target: `ofrep: single-flag evaluation ≥ ${TARGET_OFREP}× bare node:http`, ok }] };
  } finally {
    for (const child of started) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}
