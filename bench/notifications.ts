/**
 * `npm run bench -- notifications`: evaluation throughput (`POST /evaluate/v1/variant`, the fast
 * path) of `vexil serve` with change notifications on (a webhook sink and a Slack sink, both to a
 * loopback receiver answering 200 in its own process) against the same server with none, in the
 * same run (issue 23: ≥ 0.98×: nothing on the request path). The history is on in both (it always
 * is). During the measured turns both servers' state changes every second (a flag's name, written
 * alternately into their local folders), so the "on" server records, diffs, queues and delivers a
 * served revision every second while it is measured; the "off" server only records and swaps.
 * Measured in alternating turns (bench/http-harness.ts); deliveries read from /meta/notifications
 * afterwards.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { EVAL_BODY } from './http.js';
import { expectOnly, fmtCpu, measureInterleaved, roundsFor, startCeiling, startVexil, stop, turnSecondsFor, type MeasuredRun, type Target, type TurnOptions } from './http-harness.js';
import { fmtInt, fmtRatio, verdict } from './stats.js';

export const NOTIFICATIONS_DEFAULTS: TurnOptions = { connections: 50, durationSec: 10, warmupSec: 2 };
export const TARGET_NOTIFICATIONS = 0.98;

export async function runNotificationsBench(build: BenchBuild, opts: TurnOptions, log: (s: string) => void): Promise<{ markdown: string; verdicts: Array<{ target: string; ok: boolean }> }> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-notifications-'));
  const started: ChildProcess[] = [];
  let churn: NodeJS.Timeout | undefined;
  try {
    const okBody = join(dir, 'ok.txt');
    writeFileSync(okBody, 'ok');
    const receiver = await startCeiling(build, { replay: { status: 200, headers: ['Content-Type', 'text/plain', 'Content-Length', '2'], bodyFile: okBody } });
    started.push(receiver.child);
    const off = await startVexil(build, join(dir, 'off'), { config: ['data_dir: ./data'] });
    started.push(off.child);
    const on = await startVexil(build, join(dir, 'on'), {
      config: [
        'data_dir: ./data',
        'notifications:',
        '  sinks:',
        `    - { type: webhook, url: "${receiver.url}/hook", secret: bench-secret-0123456789 }`,
        `    - { type: slack, url: "${receiver.url}/slack" }`,
      ],
    });
    started.push(on.child);
    log(`  receiver ${receiver.url}; vexil without notifications ${off.url}, with ${on.url}`);
    const original = readFileSync(join(off.stateDir, 'features.yml'), 'utf8');
    let n = 0;
    churn = setInterval(() => {
      n++;
      const text = original.replace('name: flag1', `name: flag1 change ${n}`);
      for (const s of [off.stateDir, on.stateDir]) writeFileSync(join(s, 'features.yml'), text);
    }, 1000);
    const request = { body: EVAL_BODY };
    const path = '/evaluate/v1/variant';
    const targets: Target[] = [
      { label: 'notifications off', child: off.child, endpoint: `${off.url}${path}`, request },
      { label: 'notifications on (webhook + slack)', child: on.child, endpoint: `${on.url}${path}`, request },
    ];
    const runs = (await measureInterleaved(build, targets, opts, log)) as [MeasuredRun, MeasuredRun];
    clearInterval(churn);
    churn = undefined;
    for (const [i, run] of runs.entries()) {
      expectOnly(targets[i]!.label, run, 200);
      log(`  ${targets[i]!.label}: ${fmtInt(run.reqPerSec)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms, server CPU ${fmtCpu(run)} per request`);
    }
    const status = (await (await fetch(`${on.url}/meta/notifications`)).json()) as { sinks: Array<{ type: string; delivered: number; queued: number; failed: number }> };
    const delivered = status.sinks.map((s) => `${s.type} ${s.delivered} delivered, ${s.queued} queued, ${s.failed} failed`).join('; ');
    const [o, w] = runs;
    const ratio = w.reqPerSec / o.reqPerSec;
    const ok = ratio >= TARGET_NOTIFICATIONS;
    const row = (name: string, l: MeasuredRun) => `| ${name} | ${fmtInt(l.reqPerSec)} | ${l.p50Ms} ms | ${l.p99Ms} ms | ${fmtInt(l.totalRequests)} | ${fmtCpu(l)} |`;
    const markdown = [
      `autocannon, ${opts.connections} connections, POST ${path} with \`${EVAL_BODY}\` (the fast path), ${opts.durationSec} s per server (after a ${opts.warmupSec} s warm-up) in ${roundsFor(opts.durationSec)} alternating turns of ${turnSecondsFor(opts.durationSec)} s; the state of both changes every second (history on in both).`,
      '',
      '| server | req/s | p50 | p99 | requests | server CPU / request |',
      '|---|---:|---:|---:|---:|---:|',
      row('notifications off', o),
      row('notifications on: webhook + slack', w),
      '',
      `on / off = **${fmtRatio(ratio)}** (target ≥ ${TARGET_NOTIFICATIONS}×): ${verdict(ok)}. Deliveries: ${delivered}.`,
    ].join('\n');
    return { markdown, verdicts: [{ target: `notifications: evaluation throughput with notifications on ≥ ${TARGET_NOTIFICATIONS}× off`, ok }] };
  } finally {
    if (churn !== undefined) clearInterval(churn);
    for (const child of started) await stop(child);
    rmSync(dir, { recursive: true, force: true });
  }
}
