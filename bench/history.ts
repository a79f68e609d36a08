/**
 * `npm run bench -- history`: `GET /meta/history` of the compiled `vexil serve` over a history of
 * 1,000 revisions (issue 23: query p99 <= 20 ms). The history is written first through the SQLite
 * history store itself (the recorder's path: every 10th revision rejected with problems, the rest
 * served, each closing the one before), into the data folder the server then opens; the server
 * records its own start on top. Then, one request at a time from this process (so the figure
 * includes the client's side), each of: the newest page (limit 100), a page deep in the history
 * through a page token, a since/until window, and `?at=` at random times; p50/p99 per query and
 * over all. Beside it, the same reads on the store alone in this process (no HTTP), the part the
 * history adds: on a loaded machine the HTTP tail is mostly the scheduler's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { instanceId } from '../src/store/history/from-config.js';
import { openSqliteHistoryStore } from '../src/store/history/sqlite.js';
import type { BenchBuild } from './build.js';
import { startVexil, stop } from './http-harness.js';
import { fmtMs, percentile, verdict } from './stats.js';

export interface HistoryBenchOptions {
  revisions: number;
  /** Requests per query kind. */
  requests: number;
}

export const HISTORY_DEFAULTS: HistoryBenchOptions = { revisions: 1000, requests: 500 };
export const HISTORY_QUICK: HistoryBenchOptions = { revisions: 1000, requests: 100 };
export const TARGET_P99_MS = 20;

export async function runHistoryBench(build: BenchBuild, opts: HistoryBenchOptions, log: (s: string) => void): Promise<{ markdown: string; verdicts: Array<{ target: string; ok: boolean }> }> {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-bench-history-'));
  try {
    const t0 = Date.now() - opts.revisions * 60_000;
    const store = openSqliteHistoryStore({ path: join(dir, 'data', 'auth.db') });
    const keep = { maxAgeMs: 90 * 86_400_000, maxEntries: 10_000 };
    for (let i = 0; i < opts.revisions; i++) {
      const revision = i.toString(16).padStart(40, '0');
      const at = t0 + i * 60_000;
      if (i % 10 === 9) {
        const problems = Array.from({ length: 20 }, (_, k) => ({ severity: 'error', rule: 'rule.segment.unknown', file: 'features.yml', line: k + 1, column: 3, message: 'segment "nobody" is not defined' }));
        await store.record(instanceId(), { kind: 'rejected', reference: 'local', revision, at, problems, problemCount: 35 }, keep);
      } else {
        await store.record(instanceId(), { kind: 'served', reference: 'local', revision, author: 'Bench <bench@example.com>', message: `change ${i}`, committedAt: new Date(at - 5000).toISOString(), at }, keep);
      }
    }
    await store.close();
    log(`history: ${opts.revisions} revisions written; starting vexil serve ...`);
    const server = await startVexil(build, dir, { config: ['data_dir: ./data'] });
    try {
      const span = Date.now() - t0;
      const first = (await (await fetch(`${server.url}/meta/history?limit=100`)).json()) as { entries: unknown[]; nextPageToken: string };
      let deepToken = first.nextPageToken;
      for (let i = 0; i < 5 && deepToken !== ''; i++) {
        deepToken = ((await (await fetch(`${server.url}/meta/history?limit=100&pageToken=${deepToken}`)).json()) as { nextPageToken: string }).nextPageToken;
      }
      let seed = 42;
      const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
      const kinds: Array<{ name: string; path: () => string }> = [
        { name: 'newest page (limit 100)', path: () => '/meta/history?limit=100' },
        { name: 'a page deep in the history (pageToken)', path: () => `/meta/history?limit=100&pageToken=${deepToken}` },
        { name: 'since/until window', path: () => { const s = t0 + Math.floor(random() * span); return `/meta/history?since=${new Date(s).toISOString()}&until=${new Date(s + 3_600_000).toISOString()}`; } },
        { name: '?at= a random time', path: () => `/meta/history?at=${new Date(t0 + Math.floor(random() * span)).toISOString()}` },
      ];
      const all: number[] = [];
      const rows: string[] = ['| query | requests | p50 ms | p99 ms |', '|---|---:|---:|---:|'];
      for (const k of kinds) {
        const times: number[] = [];
        for (let i = 0; i < opts.requests + 20; i++) {
          const started = performance.now();
          const res = await fetch(server.url + k.path());
          await res.arrayBuffer();
          const ms = performance.now() - started;
          if (res.status !== 200) throw new Error(`${k.name}: ${res.status}`);
          if (i >= 20) times.push(ms); // the first 20 warm the server up
        }
        all.push(...times);
        rows.push(`| ${k.name} | ${times.length} | ${fmtMs(percentile(times, 50))} | ${fmtMs(percentile(times, 99))} |`);
        log(`history: ${k.name}: p99 ${fmtMs(percentile(times, 99))} ms`);
      }
      const p99 = percentile(all, 99);
      rows.push(`| all | ${all.length} | ${fmtMs(percentile(all, 50))} | ${fmtMs(p99)} |`);
      // The store alone (the server keeps running: the file is shared, as between replicas).
      const alone = openSqliteHistoryStore({ path: join(dir, 'data', 'auth.db') });
      const storeTimes: number[] = [];
      for (let i = 0; i < opts.requests + 20; i++) {
        const started = performance.now();
        if (i % 2 === 0) await alone.list(instanceId(), { reference: 'local', limit: 100 });
        else await alone.servedAt(instanceId(), 'local', t0 + Math.floor(random() * span));
        if (i >= 20) storeTimes.push(performance.now() - started);
      }
      await alone.close();
      rows.push(`| store alone, no HTTP (newest page and ?at= in turns) | ${storeTimes.length} | ${fmtMs(percentile(storeTimes, 50))} | ${fmtMs(percentile(storeTimes, 99))} |`);
      const target = `history query p99 <= ${TARGET_P99_MS} ms over ${opts.revisions} revisions (${fmtMs(p99)} ms)`;
      return { markdown: [`${opts.revisions} revisions in the SQLite history (every 10th a rejection with 20 problems kept), one request at a time:`, '', ...rows, '', `${verdict(p99 <= TARGET_P99_MS)} ${target}`].join('\n'), verdicts: [{ target, ok: p99 <= TARGET_P99_MS }] };
    } finally {
      await stop(server.child);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
