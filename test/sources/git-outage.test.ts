/**
 * A git server that goes away, seen through vexil's HTTP API (the evaluation fast path and the Koa
 * routes, over one store): a backend outage is a 503 with Retry-After and a generic message, never
 * a client error and never the backend's error text (host, port); the detail is in
 * /meta/snapshots. A reference whose state is invalid stays a 400.
 */
import { pino } from 'pino';
import tap from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { startHttpServer } from '../../src/server/listen.js';
import { gitFixture, gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

// Outside CI every test here skips with the reason when git is missing; under CI it fails.
const t = testsNeeding(tap, 'git', gitUnavailableReason());

const hello = () => ({ 'features.yml': gitFixture('hello.yml') });
const bonjour = { 'features.yml': gitFixture('bonjour.yml') };

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
  body: { code?: number; message?: string; variantKey?: string };
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  return { status: res.status, retryAfter: res.headers.get('retry-after'), text, body: JSON.parse(text) as Answer['body'] };
}

const evaluate = (url: string, reference?: string) =>
  fetch(`${url}/evaluate/v1/variant`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: 'e1', context: {}, ...(reference ? { reference } : {}) }),
  }).then(answer);

const listFlags = (url: string, reference: string) => fetch(`${url}/api/v1/namespaces/default/flags?reference=${encodeURIComponent(reference)}`).then(answer);

t.test('git server stopped: 503 with Retry-After and no backend detail, on the fast path and the Koa path; /ready says why without it', async (t) => {
  const g = await startGitFixture(t);
  const c1 = await g.repo.commit('main', hello());
  for (const b of ['feature', 'other']) await g.repo.commit(b, bonjour, { parent: c1 });
  await g.repo.commit('bad', { 'features.yml': gitFixture('broken.yml') }, { parent: c1 });
  let clock = Date.parse('2026-01-01T00:00:00Z');
  const store = g.store({ now: () => new Date(clock), maxStalenessMs: 5 * 60_000, pollIntervalMs: 30_000, random: () => 0.5 });
  await store.start();
  const config = loadConfig({ env: { VEXIL_STORAGE_TYPE: 'git', VEXIL_STORAGE_GIT_REPOSITORY: g.url } });
  const common = { store, config, logger: pino({ level: 'silent' }), storageType: 'git', version: 'test', host: '127.0.0.1', port: 0 };
  const fast = await startHttpServer(common);
  t.teardown(() => fast.close());
  const koa = await startHttpServer({ ...common, fastPath: false });
  t.teardown(() => koa.close());
  t.ok(fast.fastPath);
  t.notOk(koa.fastPath);

  const invalid = await evaluate(fast.url, 'bad');
  t.equal(invalid.status, 400, 'invalid state: still a client-visible precondition');
  t.match(invalid.body.message, /reference "bad" has no valid state: features\.yml:\d+:\d+: error/);

  await g.server.close();
  const port = String(g.server.port);
  const leaks = (a: Answer) => a.text.includes('127.0.0.1') || a.text.includes(port) || /ECONNREFUSED|connect/i.test(a.text);

  // A reference built on demand while the server is down.
  for (const [path, a] of [
    ['fast path', await evaluate(fast.url, 'feature')],
    ['fast path, again', await evaluate(fast.url, 'feature')],
    ['Koa evaluation', await evaluate(koa.url, 'other')],
    ['Koa management', await listFlags(koa.url, 'other')],
  ] as const) {
    t.equal(a.status, 503, `${path}: 503`);
    t.equal(a.body.code, 14, `${path}: Unavailable`);
    t.equal(a.retryAfter, '30', `${path}: Retry-After: the next poll (30 s, no jitter here)`);
    t.match(a.body.message, /^reference "(feature|other)" cannot be read now: the state backend is unavailable; try again later$/);
    t.notOk(leaks(a), `${path}: no host, port or socket error in the body (${a.text})`);
  }

  // The default reference: served from the last good snapshot; /ready turns 503 once stale, without the detail.
  clock += 3 * 60_000;
  await store.refresh();
  const served = await evaluate(fast.url);
  t.equal(served.status, 200, 'the default reference is served from the last good snapshot');
  t.equal(served.body.variantKey, 'hello');
  t.equal((await evaluate(koa.url)).status, 200);
  t.equal((await fetch(`${fast.url}/ready`)).status, 200, 'younger than max_staleness');
  clock += 3 * 60_000;
  const ready = await fetch(`${fast.url}/ready`).then(answer);
  t.equal(ready.status, 503);
  t.equal(
    ready.body.message,
    'reference "main" has not been confirmed by the source for 6m0s (limit 5m0s): the state backend could not be read (lastError in /meta/snapshots)',
  );
  t.notOk(leaks(ready), `/ready: no host or port (${ready.text})`);

  // The detail is where operators look (and where authentication applies when required).
  const snapshots = (await fetch(`${fast.url}/meta/snapshots`).then((r) => r.json())) as {
    references: Array<{ reference: string; lastError?: { message: string } }>;
  };
  const byName = new Map(snapshots.references.map((r) => [r.reference, r]));
  t.match(byName.get('main')?.lastError?.message, new RegExp(`127\\.0\\.0\\.1:${port}`), 'main: the backend error, with host and port');
  t.match(byName.get('feature')?.lastError?.message, new RegExp(`127\\.0\\.0\\.1:${port}`), 'feature: the same');
});
