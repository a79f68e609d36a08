/**
 * `npm run bench -- propagation`: how a change in Git reaches replicas and their stream clients,
 * and what replica coordination costs and saves (issue 20, "Benchmarks"). Every server is
 * `vexil serve` from the compiled build (bench/build.ts) on 127.0.0.1, following a bare repository
 * served by the real `git http-backend` (test/support/git-http-server.ts, in this process, which
 * logs every request it receives); coordination runs on PostgreSQL: a throwaway server started
 * like the tests start theirs (test/support/throwaway-db.ts), or the one named by
 * VEXIL_BENCH_POSTGRES_URL (its database must be this benchmark's alone).
 *
 * 1. Propagation: 3 replicas (coordination on), `connections` SSE streams spread over them by a
 *    client process (bench/workers/propagation-clients.ts). Each change is a commit pushed to the
 *    bare repository and, in the webhook rounds, a signed GitHub push delivery to a follower
 *    (poll interval 60 s, so the poll plays no part); in the poll rounds no delivery (poll
 *    interval 2 s). Timed from just before the commit: each replica answering an evaluation with
 *    the new X-Vexil-Revision (probed every 10 ms) and each stream's next state event.
 * 2. Upstream listings: N replicas × 2 workers, poll interval 2 s, nothing changing; the
 *    listings (requests) the Git server receives over a fixed window, coordination off vs on.
 * 3. Evaluation throughput: one replica without coordination, the leader and a follower of a
 *    coordinated pair, under autocannon in alternating turns (measureInterleaved, as bench/http.ts).
 *
 * Bounded: every wait has a deadline, the client process is killed after 5 minutes; every process
 * and temporary folder is removed at the end.
 */
import type { ChildProcess } from 'node:child_process';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BenchBuild } from './build.js';
import { REPO } from './build.js';
import { EVAL_BODY } from './http.js';
import { expectOnly, fdLimits, measureInterleaved, sleep, spawnNode, startVexil, stop, waitFor, type Target } from './http-harness.js';
import { fmtInt, fmtRatio, median, percentile, verdict } from './stats.js';
import type { PropagationArmed, PropagationChange, PropagationClientsArgs, PropagationConnected } from './workers/propagation-clients.js';

export interface PropagationOptions {
  /** SSE streams over the 3 replicas of part 1. */
  connections: number;
  /** Changes per mode (webhook, poll). */
  changes: number;
  /** Replica counts of part 2. */
  replicaCounts: number[];
  /** Poll intervals counted in part 2. */
  windowIntervals: number;
  /** Part 3: seconds of load per target (in turns) and warm-up. */
  durationSec: number;
  warmupSec: number;
}

export const PROPAGATION_DEFAULTS: PropagationOptions = { connections: 1000, changes: 5, replicaCounts: [1, 3, 10], windowIntervals: 10, durationSec: 10, warmupSec: 2 };
export const PROPAGATION_QUICK: PropagationOptions = { connections: 300, changes: 3, replicaCounts: [1, 3, 10], windowIntervals: 5, durationSec: 4, warmupSec: 1 };

const TARGET_WEBHOOK_P99_MS = 1000;
const POLL_MS = 2000;
const TARGET_POLL_P99_MS = POLL_MS + 1000;
const TARGET_LISTINGS = 1.2;
const TARGET_THROUGHPUT = 0.95;
const SECRET = 'bench webhook secret';
const STREAM_PATH = '/evaluate/v1/namespaces/default/stream';
const CHANGE_FILE = 'bench-change.features.yml';
const CHANGE_TEXT = (k: number) => ['version: "1.4"', 'namespace: default', 'flags:', '  - key: bench_change', `    name: change ${k}`, '    type: BOOLEAN_FLAG_TYPE', '    enabled: true', ''].join('\n');
const wallNow = () => performance.timeOrigin + performance.now();
const ms = (n: number) => (Number.isFinite(n) ? `${n.toFixed(0)} ms` : 'n/a');

export interface PropagationReport {
  markdown: string;
  verdicts: Array<{ target: string; ok: boolean }>;
}

interface Replica {
  child: ChildProcess;
  url: string;
}

export async function runPropagationBench(build: BenchBuild, opts: PropagationOptions, log: (s: string) => void): Promise<PropagationReport> {
  const { startGitHttpServer } = await import('../test/support/git-http-server.js');
  const { git } = await import('../test/support/git-repo.js');
  const root = mkdtempSync(join(tmpdir(), 'vexil-bench-propagation-'));
  const running: ChildProcess[] = [];
  let pg: { url: string; close(): Promise<void> } | undefined;
  let gitServer: Awaited<ReturnType<typeof startGitHttpServer>> | undefined;
  let serial = 0;
  try {
    const external = process.env.VEXIL_BENCH_POSTGRES_URL;
    if (external) {
      pg = { url: external, close: async () => {} };
      log('  PostgreSQL: VEXIL_BENCH_POSTGRES_URL');
    } else {
      const { startPostgres, postgresUnavailableReason } = await import('../test/support/throwaway-db.js');
      const why = postgresUnavailableReason();
      if (why) throw new Error(`propagation needs PostgreSQL (or VEXIL_BENCH_POSTGRES_URL): ${why}`);
      pg = await startPostgres();
      log(`  PostgreSQL: throwaway server on ${new URL(pg.url).host}`);
    }
    const pgNote = external ? 'PostgreSQL from VEXIL_BENCH_POSTGRES_URL' : 'a throwaway PostgreSQL (test/support/throwaway-db.ts, fsync off)';

    // The repository: a work tree pushing into the bare repository the Git server serves.
    const work = join(root, 'work');
    mkdirSync(work);
    await git(['init', '-q', '--initial-branch=main', work]);
    writeFileSync(join(work, 'features.yml'), readFileSync(join(REPO, 'bench/fixtures/features.yml'), 'utf8'));
    writeFileSync(join(work, CHANGE_FILE), CHANGE_TEXT(0));
    await git(['add', '.'], { cwd: work });
    await git(['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-m', 'state'], { cwd: work });
    await git(['init', '-q', '--bare', '--initial-branch=main', join(root, 'flags.git')]);
    await git(['remote', 'add', 'origin', join(root, 'flags.git')], { cwd: work });
    await git(['push', '-q', 'origin', 'main'], { cwd: work });
    gitServer = await startGitHttpServer({ root });
    const repoUrl = `${gitServer.url}/flags.git`;
    let changeNo = 0;
    /** A commit changing a flag's name, pushed to the served repository; its id. */
    const pushChange = async () => {
      writeFileSync(join(work, CHANGE_FILE), CHANGE_TEXT(++changeNo));
      await git(['-c', 'user.name=Bench', '-c', 'user.email=bench@example.com', 'commit', '-q', '-am', `change ${changeNo}`], { cwd: work });
      await git(['push', '-q', 'origin', 'main'], { cwd: work });
      return git(['rev-parse', 'HEAD'], { cwd: work });
    };

    const startReplica = async (o: { coordination: boolean; pollInterval: string; workers?: number; fdLimit?: number }): Promise<Replica> => {
      const dir = join(root, `replica-${++serial}`);
      const r = await startVexil(build, dir, {
        workers: o.workers ?? 1,
        storage: ['storage:', '  type: git', '  git:', `    repository: ${repoUrl}`, '    cache_dir: cache', `    poll_interval: ${o.pollInterval}`],
        config: [
          'data_dir: data',
          ...(o.coordination ? ['cluster:', '  coordination:', '    type: postgres', '    postgres:', `      url: ${pg!.url}`] : []),
          'webhooks:',
          `  github: { secret: "${SECRET}" }`,
        ],
        ...(o.fdLimit !== undefined ? { fdLimit: o.fdLimit } : {}),
      });
      running.push(r.child);
      return { child: r.child, url: r.url };
    };
    const stopAll = async (rs: Replica[]) => {
      for (const r of rs) {
        await stop(r.child);
        running.splice(running.indexOf(r.child), 1);
      }
    };
    const revisionOf = async (r: Replica): Promise<string | null> => {
      try {
        const res = await fetch(`${r.url}/evaluate/v1/variant`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: EVAL_BODY });
        await res.arrayBuffer();
        return res.headers.get('x-vexil-revision');
      } catch {
        return null;
      }
    };
    const roleOf = async (r: Replica): Promise<string | undefined> => {
      const res = await fetch(`${r.url}/meta/snapshots`);
      const body = (await res.json()) as { coordination?: { role?: string } };
      return body.coordination?.role;
    };

    const md: string[] = [];
    const verdicts: PropagationReport['verdicts'] = [];

    // ------------------------------------------------------------ 1. propagation
    const needed = opts.connections + 1024;
    const limits = fdLimits();
    const fdLimit = limits.soft < needed && limits.hard >= needed ? needed : undefined;
    const propagation = async (mode: 'webhook' | 'poll') => {
      const replicas: Replica[] = [];
      let clients: ChildProcess | undefined;
      try {
        for (let i = 0; i < 3; i++) replicas.push(await startReplica({ coordination: true, pollInterval: mode === 'webhook' ? '60s' : '2s', ...(fdLimit !== undefined ? { fdLimit } : {}) }));
        const head = await git(['rev-parse', 'HEAD'], { cwd: work });
        await waitFor('every replica to serve the current commit', async () => ((await Promise.all(replicas.map(revisionOf))).every((v) => v === head) ? true : undefined), 60_000);
        const roles = await waitFor(
          'one leader and two followers',
          async () => {
            const rs = await Promise.all(replicas.map(roleOf));
            return rs.filter((x) => x === 'leader').length === 1 && rs.filter((x) => x === 'follower').length === 2 ? rs : undefined;
          },
          60_000,
        );
        const follower = replicas[roles.indexOf('follower')]!;
        const args: PropagationClientsArgs = {
          targets: replicas.map((r) => ({ host: '127.0.0.1', port: Number(new URL(r.url).port) })),
          path: STREAM_PATH,
          connections: opts.connections,
          batch: 250,
          connectTimeoutMs: 30_000,
          changeTimeoutMs: mode === 'webhook' ? 10_000 : 15_000,
        };
        clients = spawnNode([join(build.root, 'bench/workers/propagation-clients.js'), JSON.stringify(args)], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: { ...process.env, NODE_OPTIONS: '' } }, fdLimit);
        running.push(clients);
        const proc = clients;
        const killer = setTimeout(() => proc.kill('SIGKILL'), 300_000);
        const messages: Array<PropagationConnected | PropagationArmed | PropagationChange> = [];
        let wake: (() => void) | undefined;
        proc.on('message', (m) => {
          messages.push(m as (typeof messages)[number]);
          wake?.();
        });
        proc.on('exit', () => wake?.());
        const next = async <P extends string>(phase: P) => {
          for (;;) {
            const i = messages.findIndex((m) => m.phase === phase);
            if (i !== -1) return messages.splice(i, 1)[0] as Extract<(typeof messages)[number], { phase: P }>;
            if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`the client process ended before '${phase}'`);
            await new Promise<void>((r) => (wake = r));
          }
        };
        const connected = await next('connected');
        log(`  ${mode}: ${connected.open} of ${opts.connections} streams open over 3 replicas (${connected.failed} failed) in ${(connected.ms / 1000).toFixed(1)} s`);
        const rows: Array<{ clientMs: number[]; replicaMs: number[]; missed: number; hookStatus?: number }> = [];
        for (let k = 0; k < opts.changes; k++) {
          proc.send({ cmd: 'arm' });
          await next('armed');
          const t0 = wallNow();
          const commit = await pushChange();
          let hookStatus: number | undefined;
          if (mode === 'webhook') {
            const body = JSON.stringify({ ref: 'refs/heads/main', after: commit, repository: { full_name: 'bench/flags' }, commits: [] });
            const res = await fetch(`${follower.url}/hooks/github`, {
              method: 'POST',
              headers: {
                'content-type': 'application/json',
                'x-github-event': 'push',
                'x-github-delivery': randomUUID(),
                'x-hub-signature-256': `sha256=${createHmac('sha256', SECRET).update(body).digest('hex')}`,
              },
              body,
            });
            await res.arrayBuffer();
            hookStatus = res.status;
          }
          const replicaMs = await Promise.all(
            replicas.map(async (r) => {
              const end = t0 + args.changeTimeoutMs;
              while (wallNow() < end) {
                if ((await revisionOf(r)) === commit) return wallNow() - t0;
                await sleep(10);
              }
              return Number.NaN;
            }),
          );
          const c = await next('change');
          const clientMs = c.arrivals.map((a) => a.at - t0);
          rows.push({ clientMs, replicaMs, missed: c.missed, ...(hookStatus !== undefined ? { hookStatus } : {}) });
          log(
            `  ${mode} change ${k + 1}: replicas at ${replicaMs.map(ms).join(', ')}; streams p50 ${ms(percentile(clientMs, 50))} p99 ${ms(percentile(clientMs, 99))} last ${ms(Math.max(...clientMs))}, ${c.missed} missed${hookStatus !== undefined ? `; webhook ${hookStatus}` : ''}`,
          );
          await sleep(1000);
        }
        proc.send({ cmd: 'done' });
        clearTimeout(killer);
        return { connected, rows };
      } finally {
        if (clients) {
          await stop(clients);
          running.splice(running.indexOf(clients), 1);
        }
        await stopAll(replicas);
      }
    };
    const p1: string[] = [];
    for (const mode of ['webhook', 'poll'] as const) {
      log(`propagation: 3 coordinated replicas, ${fmtInt(opts.connections)} streams, ${opts.changes} changes by ${mode === 'webhook' ? 'push + GitHub webhook to a follower' : 'push only (poll interval 2 s)'} ...`);
      const r = await propagation(mode);
      const clients = r.rows.flatMap((x) => x.clientMs);
      const replicasMs = r.rows.flatMap((x) => x.replicaMs);
      const everyone = r.rows.map((x) => Math.max(...x.clientMs, ...x.replicaMs));
      const missed = r.rows.reduce((n, x) => n + x.missed, 0) + replicasMs.filter((x) => !Number.isFinite(x)).length;
      const p99 = percentile(clients, 99);
      const target = mode === 'webhook' ? TARGET_WEBHOOK_P99_MS : TARGET_POLL_P99_MS;
      const ok = missed === 0 && r.connected.open === opts.connections && p99 <= target && Math.max(...replicasMs) <= target;
      p1.push(
        `| ${mode === 'webhook' ? 'push + signed GitHub webhook to a follower (poll 60 s)' : 'push only, poll interval 2 s'} | ${fmtInt(r.connected.open)} / ${fmtInt(opts.connections)} | ${r.rows.length} | ` +
          `${ms(median(replicasMs))} / ${ms(Math.max(...replicasMs))} | ${ms(percentile(clients, 50))} | **${ms(p99)}** | ${ms(Math.max(...clients))} | ${ms(median(everyone))} | ${missed} | ${verdict(ok)} |`,
      );
      verdicts.push({ target: `propagation (${mode}): p99 push → each of ${fmtInt(opts.connections)} streams on 3 replicas notified ≤ ${ms(target)}, every replica serving it within that`, ok });
    }
    md.push(
      `**1. Push → every replica and stream.** 3 \`vexil serve\` replicas (1 worker each) coordinated through ${pgNote}, git storage on a real \`git http-backend\`; ${fmtInt(opts.connections)} SSE streams (${STREAM_PATH}) spread round-robin over them by a separate client process. Each change: a commit pushed to the served bare repository (and, with a webhook, a signed \`X-GitHub-Event: push\` delivery to a follower, which asks the leader); timed from just before the commit to each replica answering with the new X-Vexil-Revision (probed every 10 ms) and to each stream's next state event; 1 s between changes.`,
      '',
      '| trigger | streams open | changes | replica serving it: median / last | streams p50 | streams p99 | last stream | median until everyone had it | missed | |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      ...p1,
      '',
    );

    // ------------------------------------------------------------ 2. upstream listings
    const listingRows: string[] = [];
    const windowMs = opts.windowIntervals * POLL_MS;
    let okListings = true;
    for (const n of opts.replicaCounts) {
      for (const coordination of [false, true]) {
        log(`listings: ${n} replica(s) × 2 workers, coordination ${coordination ? 'on' : 'off'} ...`);
        const replicas: Replica[] = [];
        try {
          for (let i = 0; i < n; i++) replicas.push(await startReplica({ coordination, pollInterval: '2s', workers: 2 }));
          // Settle: workers up, first build done, leadership decided.
          await sleep(3 * POLL_MS);
          // Nothing changes, so every request is a listing: the ref advertisement (GET info/refs,
          // a process's first look) or a protocol v2 ls-refs command (POST git-upload-pack).
          const kinds = () => {
            const q = gitServer!.requests;
            return { all: q.length, advert: q.filter((r) => r.path.endsWith('/info/refs')).length };
          };
          const k0 = kinds();
          await sleep(windowMs);
          const k1 = kinds();
          const count = k1.all - k0.all;
          const adverts = k1.advert - k0.advert;
          const per = count / opts.windowIntervals;
          log(`  ${count} listings (${adverts} of them GET info/refs) in ${windowMs / 1000} s: ${per.toFixed(2)} per interval`);
          if (coordination && per > TARGET_LISTINGS) okListings = false;
          listingRows.push(`| ${n} | ${n * 2} | ${coordination ? 'on (PostgreSQL)' : 'off'} | ${count} | ${adverts} | **${per.toFixed(2)}** | ${coordination ? verdict(per <= TARGET_LISTINGS) : `(${n * 2} expected)`} |`);
        } finally {
          await stopAll(replicas);
        }
      }
    }
    verdicts.push({ target: `listings: ≤ ${TARGET_LISTINGS} upstream listings per poll interval with coordination, for ${opts.replicaCounts.join(', ')} replicas × 2 workers`, ok: okListings });
    md.push(
      `**2. Upstream listings, nothing changing.** N replicas × \`server.workers: 2\`, poll interval 2 s; requests received by the Git server over ${windowMs / 1000} s (${opts.windowIntervals} intervals) after ${(3 * POLL_MS) / 1000} s of settling. Nothing changes, so each is a listing: a protocol v2 \`ls-refs\` (POST git-upload-pack) or, for a process's first look, the ref advertisement (GET info/refs, counted apart).`,
      '',
      '| replicas | workers in all | coordination | listings | of them GET info/refs | per interval | |',
      '|---:|---:|---|---:|---:|---:|---|',
      ...listingRows,
      '',
    );

    // ------------------------------------------------------------ 3. throughput
    log('throughput: one replica without coordination, a coordinated leader and follower, in turns ...');
    const off = await startReplica({ coordination: false, pollInterval: '30s' });
    const a = await startReplica({ coordination: true, pollInterval: '30s' });
    const b = await startReplica({ coordination: true, pollInterval: '30s' });
    try {
      const roles = await waitFor(
        'a leader and a follower',
        async () => {
          const rs = await Promise.all([a, b].map(roleOf));
          return rs.includes('leader') && rs.includes('follower') ? rs : undefined;
        },
        60_000,
      );
      const leader = roles[0] === 'leader' ? a : b;
      const follower = leader === a ? b : a;
      const target = (label: string, r: Replica): Target => ({ label, child: r.child, endpoint: `${r.url}/evaluate/v1/variant`, request: { body: EVAL_BODY } });
      const targets = [target('coordination off', off), target('coordinated leader', leader), target('coordinated follower', follower)];
      const runs = await measureInterleaved(build, targets, { connections: 50, durationSec: opts.durationSec, warmupSec: opts.warmupSec }, log);
      runs.forEach((r, i) => expectOnly(targets[i]!.label, r, 200));
      const base = runs[0]!;
      const rows = runs.map((r, i) => {
        const ratio = r.reqPerSec / base.reqPerSec;
        const cpu = r.serverCpuUsPerRequest !== undefined && base.serverCpuUsPerRequest !== undefined ? fmtRatio(base.serverCpuUsPerRequest / r.serverCpuUsPerRequest) : 'n/a';
        return `| ${targets[i]!.label} | ${fmtInt(r.reqPerSec)} | ${r.p50Ms} ms | ${r.p99Ms} ms | ${r.serverCpuUsPerRequest?.toFixed(1) ?? 'n/a'} µs | ${i === 0 ? '—' : `**${fmtRatio(ratio)}**`} | ${i === 0 ? '—' : cpu} |`;
      });
      const worst = Math.min(runs[1]!.reqPerSec, runs[2]!.reqPerSec) / base.reqPerSec;
      verdicts.push({ target: `throughput: coordination on / off ≥ ${TARGET_THROUGHPUT}× (leader and follower)`, ok: worst >= TARGET_THROUGHPUT });
      md.push(
        `**3. Evaluation throughput.** POST /evaluate/v1/variant (variant scenario (a)), autocannon with 50 connections in its own process; each server ${opts.warmupSec} s warm-up, then ${opts.durationSec} s in alternating turns (measureInterleaved). One server without coordination, the leader and the follower of a coordinated pair; git storage, poll interval 30 s, 1 worker each.`,
        '',
        '| server | req/s | p50 | p99 | server CPU per request | req/s vs off | CPU ratio (off / this) |',
        '|---|---:|---:|---:|---:|---:|---:|',
        ...rows,
        '',
        `Worst coordinated / off: **${fmtRatio(worst)}** (target ≥ ${TARGET_THROUGHPUT}×): ${verdict(worst >= TARGET_THROUGHPUT)}.`,
      );
    } finally {
      await stopAll([off, a, b]);
    }
    return { markdown: md.join('\n'), verdicts };
  } finally {
    for (const c of running.reverse()) await stop(c);
    await gitServer?.close();
    await pg?.close();
    rmSync(root, { recursive: true, force: true });
  }
}
