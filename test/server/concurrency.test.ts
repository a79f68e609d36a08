/**
 * 200 concurrent evaluations during 20 reloads: no 5xx, and every answer comes from one
 * snapshot (the revision in X-Vexil-Revision always goes with the same variant).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FIXTURES, post, startTestServer } from './support.js';

const REQUESTS = 200;
const RELOADS = 20;

t.test(`${REQUESTS} concurrent evaluations during ${RELOADS} reloads`, async (t) => {
  const { url, dir, store } = await startTestServer(t, { fixture: 'reload/a' });
  const versions = [readFileSync(join(FIXTURES, 'reload/a/features.yml')), readFileSync(join(FIXTURES, 'reload/b/features.yml'))];
  const swaps: string[] = [];
  store.subscribe((e) => {
    if (e.type === 'swap') swaps.push(e.snapshot.revision);
  });

  const reloads = (async () => {
    for (let i = 1; i <= RELOADS; i++) {
      writeFileSync(join(dir, 'features.yml'), versions[i % 2]!);
      await store.refresh();
      await new Promise((r) => setTimeout(r, 5));
    }
  })();

  const results = await Promise.all(
    Array.from({ length: REQUESTS }, async (_, i) => {
      await new Promise((r) => setTimeout(r, (i % 40) * 3));
      const r = await post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId: `e${i}` });
      return { status: r.status, revision: r.headers.get('x-vexil-revision') ?? '', variant: r.body?.variantKey as string };
    }),
  );
  await reloads;

  t.same(results.filter((r) => r.status !== 200), [], 'every evaluation answered 200');
  t.ok(swaps.length >= RELOADS, `the store swapped ${swaps.length} times`);
  const variantByRevision = new Map<string, Set<string>>();
  for (const r of results) {
    const set = variantByRevision.get(r.revision) ?? new Set<string>();
    set.add(r.variant);
    variantByRevision.set(r.revision, set);
  }
  t.equal(variantByRevision.size, 2, 'answers came from both revisions');
  for (const [revision, variants] of variantByRevision) {
    t.equal(variants.size, 1, `revision ${revision} always answered the same variant`);
  }
  t.same(new Set(results.map((r) => r.variant)), new Set(['blue', 'red']));
});
