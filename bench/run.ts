/**
 * `npm run bench -- eval|load|http|snapshot|ofrep|streams|auth|git|diff|checks|propagation|tracing|ui|history|all [options]`: the benchmarks of issue 3 §2,
 * issue 12 §7, issue 14 §5, issue 18 §9, issue 21 (`checks`), issue 20 (`propagation`: replicas, webhooks, coordination; needs PostgreSQL) issue 23 (`history`, `notifications`) and issue 24 (`tracing`) (`all`, the default, runs eval, load, http, snapshot, ofrep and streams; `ui` needs
 * Debian's chromium and runs alone). This file only
 * orchestrates (it runs under tsx); everything measured runs as compiled JavaScript in fresh child
 * processes (see build.ts, spawn.ts). Prints Markdown tables with the ratios and PASS/MISS per target.
 *
 * Options:
 *   --quick            shorter run for a smoke check (1 repetition, fewer rounds, 3 s HTTP, 2,000 streams,
 *                      propagation: 300 streams, 3 changes, 5 poll intervals counted, 4 s of load,
 *                      ui: 3 cold loads per page instead of 15, 2 loads of the 10k-flag page instead of 7)
 *   --reps N           eval: processes per scenario (default 3)
 *   --rounds N         eval: rounds per engine (default 9; flipt-client-js 5)
 *   --scenario S       eval: only this scenario (variant|boolean|static|complex), repeatable
 *   --duration S       http, snapshot, ofrep, auth, propagation, tracing: seconds of load per server (default 10)
 *   --out FILE         also write the report to FILE (Markdown)
 *   --against REV      http: also measure vexil built from commit REV, in the same alternating turns
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { AUTH_DEFAULTS, AUTH_QUICK, runAuthBench } from './auth.js';
import { buildForBench, buildRevisionForBench } from './build.js';
import { CHECKS_DEFAULTS, CHECKS_QUICK, runChecksBench } from './checks.js';
import { DIFF_DEFAULTS, runDiffBench } from './diff.js';
import { DIFF_LOAD_DEFAULTS, DIFF_LOAD_QUICK, runDiffLoadBench } from './diff-load.js';
import { EVAL_DEFAULTS, runEvalBench, type EvalOptions } from './eval.js';
import { GIT_DEFAULTS, runGitBench, type GitBenchOptions } from './git.js';
import { HISTORY_DEFAULTS, HISTORY_QUICK, runHistoryBench } from './history.js';
import { HTTP_DEFAULTS, runHttpBench, type HttpOptions } from './http.js';
import { LOAD_DEFAULTS, runLoadBench, type LoadOptions } from './load.js';
import { machineInfo, machineMarkdown } from './machine.js';
import { OFREP_DEFAULTS, runOfrepBench } from './ofrep.js';
import { PROPAGATION_DEFAULTS, PROPAGATION_QUICK, runPropagationBench } from './propagation.js';
import { SNAPSHOT_DEFAULTS, runSnapshotBench } from './snapshot.js';
import { STREAMS_DEFAULTS, STREAMS_QUICK, runStreamsBench } from './streams.js';
import { TRACING_DEFAULTS, runTracingBench } from './tracing.js';
import { NOTIFICATIONS_DEFAULTS, runNotificationsBench } from './notifications.js';
import { UI_DEFAULTS, UI_QUICK, runUiBench } from './ui.js';
import { verdict } from './stats.js';
import type { ScenarioName } from './workers/eval-worker.js';

const KINDS = ['eval', 'load', 'http', 'snapshot', 'ofrep', 'streams', 'auth', 'git', 'diff', 'checks', 'propagation', 'tracing', 'ui', 'history', 'notifications', 'all'] as const;
type Kind = (typeof KINDS)[number];

const { values, positionals } = parseArgs({
  args: process.argv.slice(2),
  allowPositionals: true,
  options: {
    quick: { type: 'boolean', default: false },
    reps: { type: 'string' },
    rounds: { type: 'string' },
    scenario: { type: 'string', multiple: true },
    duration: { type: 'string' },
    out: { type: 'string' },
    against: { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});

const kind = (positionals[0] ?? 'all') as Kind;
if (values.help || !KINDS.includes(kind) || positionals.length > 1) {
  process.stdout.write('usage: npm run bench -- eval|load|http|snapshot|ofrep|streams|auth|git|diff|checks|propagation|tracing|ui|history|notifications|all [--quick] [--reps N] [--rounds N] [--scenario S]... [--duration S] [--out FILE] [--against REV]\n');
  process.exit(values.help ? 0 : 2);
}

const int = (s: string | undefined, fallback: number) => {
  if (s === undefined) return fallback;
  const n = Number(s);
  if (!Number.isInteger(n) || n < 1) throw new Error(`not a positive integer: ${s}`);
  return n;
};

const evalOpts: EvalOptions = {
  ...EVAL_DEFAULTS,
  reps: int(values.reps, values.quick ? 1 : EVAL_DEFAULTS.reps),
  rounds: int(values.rounds, values.quick ? 5 : EVAL_DEFAULTS.rounds),
  fliptRounds: values.quick ? 2 : EVAL_DEFAULTS.fliptRounds,
  scenarios: (values.scenario as ScenarioName[] | undefined) ?? EVAL_DEFAULTS.scenarios,
};
const loadOpts: LoadOptions = { ...LOAD_DEFAULTS, runs: values.quick ? 3 : LOAD_DEFAULTS.runs };
const httpOpts: HttpOptions = {
  ...HTTP_DEFAULTS,
  durationSec: int(values.duration, values.quick ? 3 : HTTP_DEFAULTS.durationSec),
  warmupSec: values.quick ? 1 : HTTP_DEFAULTS.warmupSec,
};

const snapshotOpts = { ...SNAPSHOT_DEFAULTS, durationSec: httpOpts.durationSec, warmupSec: httpOpts.warmupSec };
const ofrepOpts = { ...OFREP_DEFAULTS, durationSec: httpOpts.durationSec, warmupSec: httpOpts.warmupSec };

const log = (s: string) => process.stderr.write(`${s}\n`);
const machine = machineInfo();
const report: string[] = [`## ${kind === 'all' ? 'eval, load, http, snapshot, ofrep, streams' : kind}`, '', `\`npm run bench -- ${process.argv.slice(2).join(' ')}\``, '', machineMarkdown(machine), ''];
const verdicts: Array<{ target: string; ok: boolean }> = [];

const build = buildForBench(log);
const against = values.against !== undefined ? { build: buildRevisionForBench(values.against, log), rev: values.against } : undefined;
try {
  const started = performance.now();
  if (kind === 'eval' || kind === 'all') {
    log('eval: one process per scenario and repetition ...');
    const r = await runEvalBench(build, evalOpts, log);
    report.push('### Evaluation', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'load' || kind === 'all') {
    log('load: one process per size and engine ...');
    const r = await runLoadBench(build, loadOpts, log);
    report.push('### Load', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'http' || kind === 'all') {
    log('http: vexil serve, then the bare node:http ceiling ...');
    const r = await runHttpBench(build, httpOpts, log, against);
    report.push('### HTTP', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'snapshot' || kind === 'all') {
    log('snapshot: client snapshot 304 and 200 against bare node:http replaying them ...');
    const r = await runSnapshotBench(build, snapshotOpts, log);
    report.push('### Client snapshot', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'ofrep' || kind === 'all') {
    log('ofrep: OFREP single-flag evaluation against the bare node:http ceiling ...');
    const r = await runOfrepBench(build, ofrepOpts, log);
    report.push('### OFREP', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'streams' || kind === 'all') {
    log(`streams: ${values.quick ? STREAMS_QUICK.connections : STREAMS_DEFAULTS.connections} SSE streams on one vexil serve, clients in another process ...`);
    const r = await runStreamsBench(build, values.quick ? STREAMS_QUICK : STREAMS_DEFAULTS, log);
    report.push('### Live-update streams', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'auth') {
    log('auth: vexil serve with and without authentication, in turns ...');
    const r = await runAuthBench(build, values.quick ? AUTH_QUICK : { ...AUTH_DEFAULTS, durationSec: int(values.duration, AUTH_DEFAULTS.durationSec) }, log);
    report.push('### Authentication', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'git') {
    const gitOpts: GitBenchOptions = values.quick ? { branches: 20, flags: 200, polls: 5 } : GIT_DEFAULTS;
    const r = await runGitBench(build, gitOpts, log);
    report.push('### Git', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'diff') {
    const r = await runDiffBench(build, values.quick ? { ...DIFF_DEFAULTS, runs: 2 } : DIFF_DEFAULTS, log);
    report.push('### Diff', '', r.markdown, '');
    verdicts.push(...r.verdicts);
    const l = await runDiffLoadBench(build, values.quick ? DIFF_LOAD_QUICK : DIFF_LOAD_DEFAULTS, log);
    report.push('### Evaluation while diffs run', '', l.markdown, '');
    verdicts.push(...l.verdicts);
  }
  if (kind === 'checks') {
    log('checks: load of 10,000 flags with and without the semantic checks, fresh processes in turns ...');
    const r = await runChecksBench(build, values.quick ? CHECKS_QUICK : CHECKS_DEFAULTS, log);
    report.push('### Semantic checks', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'propagation') {
    log('propagation: replicas on git + PostgreSQL coordination: push to streams, upstream listings, throughput ...');
    const r = await runPropagationBench(build, values.quick ? PROPAGATION_QUICK : { ...PROPAGATION_DEFAULTS, durationSec: int(values.duration, PROPAGATION_DEFAULTS.durationSec) }, log);
    report.push('### Propagation and replica coordination', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'history') {
    log('history: GET /meta/history over 1,000 revisions ...');
    const r = await runHistoryBench(build, values.quick ? HISTORY_QUICK : HISTORY_DEFAULTS, log);
    report.push('### Served-revision history', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'notifications') {
    log('notifications: evaluation with change notifications on and off, the state changing every second, in turns ...');
    const r = await runNotificationsBench(build, { ...NOTIFICATIONS_DEFAULTS, durationSec: httpOpts.durationSec, warmupSec: httpOpts.warmupSec }, log);
    report.push('### Change notifications', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'tracing') {
    log('tracing: vexil serve with tracing off, at 1 % sampling and at 100 %, in turns ...');
    const r = await runTracingBench(build, { ...TRACING_DEFAULTS, durationSec: httpOpts.durationSec, warmupSec: httpOpts.warmupSec }, log);
    report.push('### Tracing', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  if (kind === 'ui') {
    const r = await runUiBench(build, values.quick ? UI_QUICK : UI_DEFAULTS, log);
    report.push('### Web UI', '', r.markdown, '');
    verdicts.push(...r.verdicts);
  }
  report.push('### Targets', '');
  for (const v of verdicts) report.push(`- ${verdict(v.ok)} ${v.target}`);
  report.push('', `(${verdicts.filter((v) => v.ok).length}/${verdicts.length} met; benchmark took ${((performance.now() - started) / 1000).toFixed(0)} s after a ${(build.buildMs / 1000).toFixed(1)} s build)`, '');
  const text = report.join('\n');
  process.stdout.write(`${text}\n`);
  if (values.out) writeFileSync(values.out, text);
} finally {
  build.dispose();
  against?.build.dispose();
}
