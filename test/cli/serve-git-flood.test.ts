/**
 * `vexil serve` on a real git server under a flood of made-up references, as anyone who may
 * evaluate could send: 1,000 random 40-hex commit ids and 1,000 random branch names. What they
 * cost upstream is bounded (names not found are remembered until the next poll, the server is
 * listed on requests' behalf at most once a second, a commit id lookup fetches everything at most
 * once per listing), the poller keeps its pace (a push to the default branch during the flood is
 * served during the flood), /ready stays 200, memory stays bounded and /metrics gains no series.
 *
 * The request count is bounded by the flood's length in seconds (a rate, counted, not timed):
 * before the bounds, every commit id cost a listing, 1,000+ requests whatever the duration.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { mulberry32 } from '../support/prng.js';
import { tempState } from '../store/temp-state.js';
import { serveCli } from './run-cli.js';
import { testsNeeding } from '../support/requirements.js';

// Outside CI every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const FLOOD_EACH = 1000;
const WORKERS = 16;

/** Resident set size of a process, in MiB (Linux). */
function rssMiB(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kb) / 1024;
}

t.test('a flood of made-up references: bounded upstream requests, polls on time, ready, bounded memory and series', { skip: process.platform !== 'linux' ? 'reads /proc' : false }, async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', { 'features.yml': gitFixture('hello.yml') });
  const dir = tempState(t);
  const config = join(dir, 'vexil.yml');
  writeFileSync(
    config,
    [
      'server: { host: 127.0.0.1, http_port: 0 }',
      'log: { level: info, encoding: json, requests: none }',
      'storage:',
      '  type: git',
      '  git:',
      `    repository: ${g.url}`,
      '    cache_dir: cache',
      '    poll_interval: 1s',
      '    max_staleness: 30s',
      '',
    ].join('\n'),
  );
  const { child, listening } = await serveCli(t, ['serve', '--config', config]);
  const url = String(listening.url);
  const evaluate = async (reference?: string) => {
    const res = await fetch(`${url}/evaluate/v1/variant`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', ...(reference !== undefined ? { reference } : {}) }),
    });
    await res.arrayBuffer();
    return { status: res.status, revision: res.headers.get('x-vexil-revision') };
  };
  t.equal((await evaluate()).revision, c1);
  const rssBefore = rssMiB(child.pid as number);

  const random = mulberry32(2026);
  const hex = () => Array.from({ length: 40 }, () => Math.floor(random() * 16).toString(16)).join('');
  const names = Array.from({ length: 2 * FLOOD_EACH }, (_, i) => (i % 2 === 0 ? hex() : `feature/${hex().slice(0, 12)}`));
  const statuses = new Map<number, number>();
  let next = 0;
  let pushed: Promise<string> | undefined;
  let c2: string | undefined;
  let newCommitServedDuringFlood = false;

  const requestsBefore = g.server.requests.length;
  const started = performance.now();
  // Workers send the made-up names; one of them pushes to main halfway. The flood goes on (the
  // names again, from the start) until the default reference serves the pushed commit.
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i === FLOOD_EACH) pushed = g.repo.commit('main', { 'features.yml': gitFixture('bonjour.yml') });
      if (i >= names.length && newCommitServedDuringFlood) return;
      const { status } = await evaluate(names[i % names.length]);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  const watcher = async () => {
    while (!newCommitServedDuringFlood) {
      await new Promise((r) => setTimeout(r, 50));
      if (pushed === undefined) continue;
      c2 ??= await pushed;
      newCommitServedDuringFlood = (await evaluate()).revision === c2;
    }
  };
  await Promise.all([watcher(), ...Array.from({ length: WORKERS }, worker)]);
  const seconds = (performance.now() - started) / 1000;
  const upstream = g.server.requests.length - requestsBefore;
  const sent = [...statuses.values()].reduce((a, b) => a + b, 0);

  t.ok(newCommitServedDuringFlood, 'the push to main during the flood was polled and served while the flood went on');
  t.same([...statuses.keys()], [404], 'every made-up reference is 404');
  // Per second: a poll (1 request, 3 when main moved), one listing on requests' behalf; plus one
  // fetch of everything (2 requests) per listing that changed, for the commit id lookups.
  const bound = 10 + 4 * Math.ceil(seconds);
  t.ok(upstream <= bound, `${sent} requests in ${seconds.toFixed(1)} s: ${upstream} requests to the git server (bound ${bound})`);

  const ready = await fetch(`${url}/ready`);
  t.equal(ready.status, 200, '/ready');
  const rssAfter = rssMiB(child.pid as number);
  t.ok(rssAfter < rssBefore + 200, `RSS ${rssBefore.toFixed(0)} MiB before, ${rssAfter.toFixed(0)} MiB after`);
  const metrics = await (await fetch(`${url}/metrics`)).text();
  const series = metrics.split('\n').filter((l) => l.includes('reference="'));
  t.ok(series.length <= 4, `/metrics: ${series.length} series with a reference label (${series.map((l) => l.split(' ')[0]).join(', ')})`);
  t.ok(series.every((l) => l.includes('reference="main"')), 'only the default reference');
});
