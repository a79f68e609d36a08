/**
 * Through the real HTTP server on a loopback port: evaluations keep arriving while the state
 * folder is switched 20 times between two valid states. No response may be a 5xx, and every
 * response must come from one snapshot: the variant it reports must be the one of the revision
 * its X-Vexil-Revision header names.
 */
import { Writable } from 'node:stream';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/logger.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createLocalSource } from '../../src/sources/local.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { nextEvent, tempState, useFixture } from './temp-state.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

const greeting = (s: Snapshot) => s.namespaces.get('default')?.flags.get('greeting')?.defaultVariant?.key;

const RELOADS = 20;
const MIN_EVALUATIONS = 200;
const WAVE = 40;

t.test('200+ concurrent evaluations during 20 reloads: no 5xx, no mixed snapshot', async (t) => {
  const dir = tempState(t, 'hello');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }), debounceMs: 10 });
  t.teardown(() => store.close());
  await store.start();

  /** revision → the variant every response of that revision must carry (read from the snapshot model). */
  const expected = new Map<string, string | undefined>();
  const first = store.get()!;
  expected.set(first.revision, greeting(first));
  store.subscribe((e) => {
    if (e.type === 'swap') expected.set(e.snapshot.revision, greeting(e.snapshot));
  });

  const config = loadConfig({ env: { VEXIL_SERVER_HTTP_PORT: '0', VEXIL_STORAGE_LOCAL_PATH: dir } });
  const sink = new Writable({ write: (_c, _e, cb) => cb() });
  const logger = createLogger({ level: 'warn', encoding: 'json', destination: sink });
  const server = await startHttpServer({ store, config, logger, storageType: 'local', version: 'test' });
  t.teardown(() => server.close());

  let reloadsDone = false;
  const reloads = (async () => {
    for (let i = 0; i < RELOADS; i++) {
      const before = store.get()!.revision;
      const swapped = nextEvent(store, 'swap', (e) => e.snapshot.revision !== before);
      useFixture(dir, i % 2 === 0 ? 'bonjour' : 'hello');
      await swapped;
    }
    reloadsDone = true;
  })();

  interface Seen {
    status: number;
    revision: string | null;
    variants: string[];
  }
  const seen: Seen[] = [];
  const variant = async (): Promise<Seen> => {
    const res = await fetch(`${server.url}/evaluate/v1/variant`, {
      method: 'POST',
      body: JSON.stringify({ namespaceKey: 'default', flagKey: 'greeting', entityId: `e${seen.length}`, context: {} }),
    });
    const body = (await res.json()) as { variantKey?: string };
    return { status: res.status, revision: res.headers.get('x-vexil-revision'), variants: [String(body.variantKey)] };
  };
  const batch = async (): Promise<Seen> => {
    const req = { namespaceKey: 'default', flagKey: 'greeting', entityId: 'b', context: {} };
    const res = await fetch(`${server.url}/evaluate/v1/batch`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ requests: [req, { ...req, flagKey: 'beta' }, req] }),
    });
    const body = (await res.json()) as { responses?: Array<{ variantResponse?: { variantKey: string } }> };
    const variants = (body.responses ?? []).flatMap((r) => (r.variantResponse ? [r.variantResponse.variantKey] : []));
    return { status: res.status, revision: res.headers.get('x-vexil-revision'), variants };
  };

  while (!reloadsDone || seen.length < MIN_EVALUATIONS) {
    const wave = Array.from({ length: WAVE }, (_, i) => (i % 8 === 7 ? batch() : variant()));
    seen.push(...(await Promise.all(wave)));
  }
  await reloads;

  const fivexx = seen.filter((s) => s.status >= 500);
  t.equal(fivexx.length, 0, 'no 5xx');
  t.ok(
    seen.every((s) => s.status === 200),
    'every evaluation answered 200',
  );
  t.ok(seen.length >= MIN_EVALUATIONS, `${seen.length} evaluations`);
  const mixed = seen.filter(
    (s) => s.revision === null || !expected.has(s.revision) || s.variants.some((v) => v !== expected.get(s.revision!)),
  );
  t.same(mixed, [], 'every response matches the snapshot its revision header names');
  const revisions = new Set(seen.map((s) => s.revision));
  t.equal(expected.size, 2, 'two states, two revisions (content-addressed)');
  t.ok(revisions.size === 2, 'responses came from both states');
  t.same(new Set(expected.values()), new Set(['hello', 'bonjour']));
});
