/**
 * The served-revision history through the real CLI, a real `git http-backend` and real processes:
 * push valid, invalid, valid → two served entries and one rejection whose times are the ones
 * `/meta/snapshots` showed; `?at=` between them; evaluation and diff at a revision read from the
 * history; bad parameters → 400 naming them; paging; `kill -9` right after the swap's log line,
 * then a restart: the entry is there, once. Then two replicas coordinated through PostgreSQL and
 * sharing it as their data store: each swap recorded once for the cluster.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import tap from 'tap';
import { startServe, type ServeProcess } from '../auth/process.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { isCI, reportMissing } from '../support/requirements.js';
import { writeServeConfig } from '../support/serve-config.js';
import { postgresUnavailableReason, startPostgres } from '../support/throwaway-db.js';
import { roles, servedRevision, waitFor } from './replicas.js';

const hello = { 'features.yml': gitFixture('hello.yml') };
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };
const broken = { 'features.yml': gitFixture('broken.yml') };

interface Entry {
  reference: string;
  revision: string;
  status: 'served' | 'rejected';
  servedFrom: string | null;
  servedUntil: string | null;
  replacedBy: string | null;
  rejectedAt?: string;
  author: string;
  message: string;
  committedAt: string | null;
  problems?: Array<{ rule: string; file: string; line: number }>;
  problemCount?: number;
  replica?: string;
}

interface RefRow {
  reference: string;
  revision?: { id: string };
  loadedAt?: string;
  lastRejected?: { revision: { id: string }; at: string };
}

async function json<T>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const res = await fetch(url, init);
  return { status: res.status, body: (await res.json()) as T };
}

const history = (r: ServeProcess, query = 'reference=main') => json<{ entries: Entry[]; nextPageToken: string }>(`${r.url}/meta/history?${query}`);
const mainRow = async (r: ServeProcess) => (await json<{ references: RefRow[] }>(`${r.url}/meta/snapshots`)).body.references.find((x) => x.reference === 'main')!;

async function refresh(r: ServeProcess): Promise<void> {
  const res = await fetch(`${r.url}/meta/refresh`, { method: 'POST' });
  await res.arrayBuffer();
}

const gitReason = gitUnavailableReason();
tap.test('history of a git reference: push valid, invalid, valid; ?at=; evaluate at a past revision; kill -9', { skip: gitReason !== undefined && !isCI() ? gitReason : false }, async (t) => {
  if (gitReason !== undefined) reportMissing(t, 'git', gitReason);
  const git = await startGitFixture(t);
  const c1 = await git.repo.commit('main', hello);
  const { dir, config } = writeServeConfig(t, 'vexil-history-', () => [
    `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 1h, cache_dir: cache } }`,
    'data_dir: data',
  ]);
  let serve = await startServe(t, config, dir);

  let h = await history(serve);
  t.equal(h.status, 200);
  t.same(h.body.entries.map((e) => [e.status, e.revision]), [['served', c1]], 'the first build is recorded');
  const first = h.body.entries[0]!;
  t.equal(first.servedFrom, (await mainRow(serve)).loadedAt, 'servedFrom is the loadedAt of /meta/snapshots');
  t.equal(first.servedUntil, null, 'still served');
  t.match(first.author, /<.+@.+>/, 'the commit author');
  t.ok(first.message.length > 0, 'the commit message');
  t.match(first.committedAt, /^\d{4}-\d{2}-\d{2}T/, 'the commit time');
  t.match(first.replica, /.+/, 'replicas that do not coordinate say which replica recorded it');

  const c2 = await git.repo.commit('main', broken);
  await refresh(serve);
  const rejectedRow = await mainRow(serve);
  t.equal(rejectedRow.lastRejected?.revision.id, c2, 'the push is rejected');
  const c3 = await git.repo.commit('main', bonjour);
  await refresh(serve);
  const servedRow = await mainRow(serve);
  t.equal(servedRow.revision?.id, c3);

  h = await history(serve);
  t.same(h.body.entries.map((e) => [e.status, e.revision]), [['served', c3], ['rejected', c2], ['served', c1]], 'two served, one rejected, newest first');
  const [e3, e2, e1] = h.body.entries as [Entry, Entry, Entry];
  t.equal(e3.servedFrom, servedRow.loadedAt, 'c3 served from the loadedAt /meta/snapshots showed');
  t.equal(e2.rejectedAt, rejectedRow.lastRejected?.at, 'c2 rejected at the time /meta/snapshots showed');
  t.equal(e2.servedFrom, null, 'a rejected revision was never served');
  t.match(e2.problems?.[0], { file: 'features.yml', rule: /^[a-z]+\./, line: Number }, 'the rejection keeps its located problems');
  t.ok((e2.problemCount ?? 0) >= 1);
  t.equal(e1.servedUntil, e3.servedFrom, 'c1 served until c3 started');
  t.equal(e1.replacedBy, c3, 'c1 replaced by c3');

  // ?at= between the two served revisions (and the rejection changed nothing served).
  const from1 = Date.parse(e1.servedFrom!);
  const from3 = Date.parse(e3.servedFrom!);
  t.ok(from3 - from1 >= 2, 'the swaps are apart');
  const between = new Date(Math.floor((from1 + from3) / 2)).toISOString();
  const at = await json<{ entry: Entry }>(`${serve.url}/meta/history?reference=main&at=${between}`);
  t.equal(at.status, 200);
  t.equal(at.body.entry.revision, c1, `?at=${between}: c1`);
  const atNow = await json<{ entry: Entry }>(`${serve.url}/meta/history?reference=main&at=${encodeURIComponent(new Date().toISOString())}`);
  t.equal(atNow.body.entry.revision, c3, '?at=now: c3');
  const before = await json<{ code: number; message: string }>(`${serve.url}/meta/history?reference=main&at=2000-01-01T00:00:00Z`);
  t.equal(before.status, 404, 'nothing served in 2000');
  t.equal(before.body.code, 5);

  // "Evaluate as of then": the revision from the history is a reference like any commit id.
  const evalAt = async (reference?: string) =>
    json<{ variantKey: string }>(`${serve.url}/evaluate/v1/variant`, {
      method: 'POST',
      body: JSON.stringify({ flagKey: 'greeting', entityId: 'e1', ...(reference !== undefined ? { reference } : {}) }),
    });
  t.equal((await evalAt()).body.variantKey, 'bonjour', 'now: bonjour');
  const past = await evalAt(at.body.entry.revision);
  t.equal(past.status, 200);
  t.equal(past.body.variantKey, 'hello', 'at the revision served then: hello');
  t.same((await history(serve, `reference=${c1}`)).body.entries, [], 'a commit id named by a request is no tracked reference: not recorded');
  const diff = await json<{ namespaces?: unknown[] }>(`${serve.url}/api/v1/diff?base=${c1}&head=${c3}`);
  t.equal(diff.status, 200, 'the diff between what was live then and now');
  t.match(JSON.stringify(diff.body), /greeting/, 'it names the flag that changed');

  // Bad input: 400s naming the parameter.
  for (const [query, parameter] of [
    ['since=yesterday', 'since'],
    ['until=2026-13-40T99:00:00Z', 'until'],
    ['at=14:03', 'at'],
    ['limit=0', 'limit'],
    ['limit=100000', 'limit'],
    ['limit=ten', 'limit'],
    ['pageToken=not-a-token', 'pageToken'],
    [`pageToken=${'A'.repeat(5000)}`, 'pageToken'],
    ['since=2026-11-27T10:00:00Z&until=2026-11-26T10:00:00Z', 'until'],
    ['at=2026-11-27T10:00:00Z&limit=5', 'limit'],
  ] as const) {
    const res = await json<{ code: number; message: string; details: Array<{ parameter: string }> }>(`${serve.url}/meta/history?${query}`);
    t.equal(res.status, 400, `${query.slice(0, 40)}: 400`);
    t.equal(res.body.code, 3);
    t.match(res.body.message, new RegExp(`^${parameter} `), `names ${parameter}`);
    t.equal(res.body.details[0]?.parameter, parameter);
  }

  // Paging: one entry a page, every entry once.
  const paged: string[] = [];
  let token = '';
  for (let i = 0; i < 5; i++) {
    const page = await history(serve, `reference=main&limit=1${token !== '' ? `&pageToken=${token}` : ''}`);
    paged.push(...page.body.entries.map((e) => e.revision));
    token = page.body.nextPageToken;
    if (token === '') break;
  }
  t.same(paged, [c3, c2, c1], 'three pages of one');
  t.same((await history(serve, `reference=main&since=${encodeURIComponent(e3.servedFrom!)}`)).body.entries.map((e) => e.revision), [c3], 'since');

  // kill -9 right after the log line announcing the swap: the entry was written before it.
  const c4 = await git.repo.commit('main', hello);
  const loaded = serve.waitForLog((e) => e.msg === 'snapshot loaded' && e.revision === c4);
  void refresh(serve).catch(() => undefined);
  await loaded;
  await serve.stop('SIGKILL');
  serve = await startServe(t, config, dir);
  h = await history(serve);
  t.same(h.body.entries.map((e) => [e.status, e.revision]), [['served', c4], ['served', c3], ['rejected', c2], ['served', c1]], 'after kill -9 and a restart: all there, c4 once');
  t.equal(h.body.entries[1]!.replacedBy, c4);
  await serve.stop();
  t.ok(existsSync(join(dir, 'data', 'auth.db')), 'kept in the data folder (data_dir)');
});

const pgReason = postgresUnavailableReason() ?? gitReason;
tap.test('two replicas coordinated through PostgreSQL, sharing it as their data store: each swap recorded once', { skip: pgReason !== undefined && !isCI() ? pgReason : false }, async (t) => {
  if (pgReason !== undefined) reportMissing(t, 'postgres', pgReason);
  const pg = await startPostgres({ database: 'vexil_history_cluster' });
  t.teardown(() => pg.close());
  const git = await startGitFixture(t);
  const c1 = await git.repo.commit('main', hello);
  const replicas: ServeProcess[] = [];
  for (const name of ['a', 'b']) {
    const { dir, config } = writeServeConfig(t, `vexil-history-${name}-`, () => [
      `storage: { type: git, git: { repository: ${JSON.stringify(git.url)}, poll_interval: 2s, cache_dir: cache } }`,
      `cluster: { coordination: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
      `authentication: { storage: { type: postgres, postgres: { url: ${JSON.stringify(pg.url)} } } }`,
    ]);
    replicas.push(await startServe(t, config, dir));
  }
  await waitFor('one leader, one follower', async () => (await roles(replicas)).sort().join() === 'follower,leader');
  const c2 = await git.repo.commit('main', broken);
  const c3 = await git.repo.commit('main', bonjour);
  await refresh(replicas[0]!);
  await waitFor('both serve c3', async () => (await servedRevision(replicas[0]!)) === c3 && (await servedRevision(replicas[1]!)) === c3);
  const c4 = await git.repo.commit('main', hello);
  await refresh(replicas[1]!);
  await waitFor('both serve c4', async () => (await servedRevision(replicas[0]!)) === c4 && (await servedRevision(replicas[1]!)) === c4);

  const seen = await Promise.all(replicas.map((r) => history(r)));
  for (const h of seen) {
    const served = h.body.entries.filter((e) => e.status === 'served').map((e) => e.revision);
    t.same(served, [c4, c3, c1], 'c1, c3 and c4 served: each once for the cluster');
    t.notOk(h.body.entries.some((e) => e.replica !== undefined), 'cluster entries name no replica');
  }
  t.same(seen[0]!.body, seen[1]!.body, 'both replicas answer the same history');
  // The leader polled c3 directly (c2 was never the head when it looked) or saw c2 rejected: at most once.
  t.ok(seen[0]!.body.entries.filter((e) => e.revision === c2).length <= 1, 'a rejection at most once');
});
