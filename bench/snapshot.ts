/**
 * `npm run bench -- snapshot`: the client-side evaluation snapshot
 * (`GET /internal/v1/evaluation/snapshot/namespace/{key}`) of a 1,000-flag namespace, from a real
 * `vexil serve` (compiled build, default config), against bare node:http servers answering exactly
 * what vexil answered:
 *
 * - 304: every request sends `If-None-Match` with the namespace's ETag (what Flipt's client SDKs
 *   do on each poll once they hold the snapshot). The ceiling answers a 304 with the same headers
 *   (ETag, X-Request-Id, X-Vexil-Revision, ...: the list vexil sent, replayed). Target ≥ 0.7×.
 * - 200: no If-None-Match; the ceiling writes the same headers and the same body bytes. Target ≥ 0.5×.
 *
 * The state is the load bench's generator (test/support/generate-state.ts) with all 1,000 flags in
 * the `default` namespace. The four servers-with-requests (vexil 304, ceiling 304, vexil 200,
 * ceiling 200) take their turns alternately, as in bench/http.ts, so the machine's drift hits all
 * alike; the two vexil targets are one process.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateState } from '../test/support/generate-state.js';
import type { BenchBuild } from './build.js';
import {
  expectOnly,
  fmtCpu,
  measureInterleaved,
  replayableHeaders,
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

export interface SnapshotBenchOptions extends TurnOptions {
  flags: number;
}

export const SNAPSHOT_DEFAULTS: SnapshotBenchOptions = { connections: 50, durationSec: 10, warmupSec: 2, flags: 1000 };
export const TARGET_304 = 0.7;
export const TARGET_200 = 0.5;

export const SNAPSHOT_PATH = '/internal/v1/evaluation/snapshot/namespace/default';

export interface SnapshotReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

export async function runSnapshotBench(build: BenchBuild, opts: SnapshotBenchOptions, log: (s: string) => void): Promise<SnapshotReport> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-snapshot-'));
  const started: ChildProcess[] = [];
  try {
    const state = generateState({ flags: opts.flags, namespaces: 1 });
    const vexil = await startVexil(build, join(dir, 'vexil'), { state });
    started.push(vexil.child);
    const endpoint = `${vexil.url}${SNAPSHOT_PATH}`;

    const full = await fetch(endpoint);
    const body = Buffer.from(await full.arrayBuffer());
    const etag = full.headers.get('etag');
    if (full.status !== 200 || etag === null) throw new Error(`vexil answered ${full.status} (ETag ${etag}): ${body.toString('utf8', 0, 300)}`);
    const flagCount = (JSON.parse(body.toString('utf8')) as { flags: unknown[] }).flags.length;
    if (flagCount !== opts.flags) throw new Error(`the snapshot holds ${flagCount} flags, expected ${opts.flags}`);
    const conditional = await fetch(endpoint, { headers: { 'if-none-match': etag } });
    if (conditional.status !== 304) throw new Error(`If-None-Match ${etag}: vexil answered ${conditional.status}`);
    log(`  vexil at ${vexil.url}: 200 with ${fmtInt(body.length)} bytes (${flagCount} flags), ETag ${etag}; 304 with If-None-Match`);

    const bodyFile = join(dir, 'snapshot.json');
    writeFileSync(bodyFile, body);
    const c304 = await startCeiling(build, { replay: { status: 304, headers: replayableHeaders(conditional.headers) } });
    started.push(c304.child);
    const c200 = await startCeiling(build, { replay: { status: 200, headers: replayableHeaders(full.headers), bodyFile } });
    started.push(c200.child);

    const notModified = { method: 'GET', headers: { 'if-none-match': etag } };
    const plain = { method: 'GET', headers: {} };
    const targets: Target[] = [
      { label: 'vexil 304', child: vexil.child, endpoint, request: notModified },
      { label: 'ceiling 304', child: c304.child, endpoint: `${c304.url}${SNAPSHOT_PATH}`, request: notModified },
      { label: 'vexil 200', child: vexil.child, endpoint, request: plain },
      { label: 'ceiling 200', child: c200.child, endpoint: `${c200.url}${SNAPSHOT_PATH}`, request: plain },
    ];
    const [v304, ceil304, v200, ceil200] = (await measureInterleaved(build, targets, opts, log)) as [MeasuredRun, MeasuredRun, MeasuredRun, MeasuredRun];
    for (const [i, run] of [v304, ceil304, v200, ceil200].entries()) {
      expectOnly(targets[i]!.label, run, i < 2 ? 304 : 200);
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, server CPU ${fmtCpu(run)} per request`);
    }

    const r304 = v304.reqPerSec / ceil304.reqPerSec;
    const r200 = v200.reqPerSec / ceil200.reqPerSec;
    const ok304 = r304 >= TARGET_304;
    const ok200 = r200 >= TARGET_200;
    const row = (name: string, l: MeasuredRun) => `| ${name} | ${fmtInt(l.reqPerSec)} | ${l.p50Ms} ms | ${l.p99Ms} ms | ${fmtInt(l.totalRequests)} | ${fmtCpu(l)} |`;
    const cpu = (v: MeasuredRun, c: MeasuredRun) =>
      v.serverCpuUsPerRequest !== undefined && c.serverCpuUsPerRequest !== undefined ? ` (server CPU per request ${fmtCpu(v)} vs ${fmtCpu(c)})` : '';
    const markdown = [
      `autocannon, ${opts.connections} connections, GET ${SNAPSHOT_PATH} of a ${opts.flags.toLocaleString('en-US')}-flag namespace (a ${fmtInt(body.length)}-byte document), ${opts.durationSec} s per target (after a ${opts.warmupSec} s warm-up) in ${roundsFor(opts.durationSec)} alternating turns of ${turnSecondsFor(opts.durationSec)} s. The ceilings are bare node:http servers replaying vexil's answer: its status, its headers, its body bytes.`,
      '',
      '| server | req/s | p50 | p99 | requests | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|',
      row('vexil, If-None-Match → 304', v304),
      row('bare node:http, the same 304 (ceiling)', ceil304),
      row('vexil, 200 with the document', v200),
      row('bare node:http, the same 200 bytes (ceiling)', ceil200),
      '',
      `304: vexil / ceiling = **${fmtRatio(r304)}** (target ≥ ${TARGET_304}×): ${verdict(ok304)}${cpu(v304, ceil304)}.`,
      '',
      `200: vexil / ceiling = **${fmtRatio(r200)}** (target ≥ ${TARGET_200}×): ${verdict(ok200)}${cpu(v200, ceil200)}.`,
    ].join('\n');
    return {
      markdown,
      verdicts: [
        { target: `snapshot ${opts.flags} flags: 304 ≥ ${TARGET_304}× bare node:http 304`, ok: ok304 },
        { target: `snapshot ${opts.flags} flags: 200 ≥ ${TARGET_200}× bare node:http writing the same bytes`, ok: ok200 },
      ],
    };
  } finally {
    for (const child of started) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}
