/**
 * The behaviour every history store keeps (src/store/history/types.ts), run against each backend
 * (sqlite.test.ts, postgres.test.ts): served entries closed by the next, duplicates of the latest
 * event not written again, rejections between served ones, `servedAt`, paging newest first, and
 * retention by age and count that never removes what a reference serves now.
 */
import type { Test } from 'tap';
import type { HistoryStore, NewHistoryEvent } from '../../../src/store/history/types.js';

const T0 = Date.parse('2026-11-27T10:00:00Z');
const min = 60_000;
const keep = { maxAgeMs: 90 * 86_400_000, maxEntries: 10_000 };
const served = (revision: string, at: number, reference = 'main'): NewHistoryEvent => ({
  kind: 'served',
  reference,
  revision,
  author: 'Ada <ada@example.com>',
  message: `commit ${revision}`,
  committedAt: new Date(at - 1000).toISOString(),
  at,
});
const rejected = (revision: string, at: number, problems = 1): NewHistoryEvent => ({
  kind: 'rejected',
  reference: 'main',
  revision,
  at,
  problems: Array.from({ length: Math.min(problems, 20) }, (_, i) => ({ severity: 'error', rule: 'yaml.syntax', file: 'features.yml', line: i + 1, column: 1, message: 'bad' })),
  problemCount: problems,
});

export async function historySuite(t: Test, open: () => Promise<HistoryStore>): Promise<void> {
  await t.test('served, rejected, served: the first closed by the second, the rejection in between', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    t.equal(await h.record('r1', served('a', T0), keep), true);
    t.equal(await h.record('r1', rejected('x', T0 + min, 30), keep), true);
    t.equal(await h.record('r1', served('b', T0 + 2 * min), keep), true);
    const all = await h.list('r1', { reference: 'main', limit: 10 });
    t.same(all.map((e) => [e.kind, e.revision]), [['served', 'b'], ['rejected', 'x'], ['served', 'a']], 'newest first');
    t.equal(all[2]!.until, T0 + 2 * min, 'a served until b');
    t.equal(all[2]!.replacedBy, 'b');
    t.equal(all[0]!.until, undefined, 'b still served');
    t.equal(all[1]!.problemCount, 30, 'all problems counted');
    t.equal(all[1]!.problems?.length, 20, 'the first 20 kept');
    t.equal(all[2]!.author, 'Ada <ada@example.com>');
    t.equal(all[2]!.message, 'commit a');
    t.equal((await h.servedAt('r1', 'main', T0 + min + 5))?.revision, 'a', 'at: between a and b');
    t.equal((await h.servedAt('r1', 'main', T0 + 2 * min))?.revision, 'b', 'at: b from its first millisecond');
    t.equal(await h.servedAt('r1', 'main', T0 - 1), undefined, 'at: before anything');
    t.same(await h.list('r2', { reference: 'main', limit: 10 }), [], 'another scope sees none of it');
  });

  await t.test('the same event again (a restart, a second replica) is not written twice', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    await h.record('d', served('a', T0), keep);
    t.equal(await h.record('d', served('a', T0 + min), keep), false, 'a again: the entry stays as it was');
    await h.record('d', rejected('x', T0 + 2 * min), keep);
    t.equal(await h.record('d', rejected('x', T0 + 3 * min), keep), false, 'x rejected again');
    await h.record('d', served('b', T0 + 4 * min), keep);
    t.equal(await h.record('d', served('a', T0 + 5 * min), keep), true, 'back to a: a new entry');
    t.equal(await h.record('d', rejected('x', T0 + 6 * min), keep), true, 'x rejected again after a served change: recorded');
    const all = await h.list('d', { reference: 'main', limit: 10 });
    t.same(all.map((e) => e.revision), ['x', 'a', 'b', 'x', 'a']);
    t.equal(all[4]!.at, T0, 'the first entry keeps its time');
  });

  await t.test('pages newest first, since and until', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    for (let i = 0; i < 25; i++) await h.record('p', served(`r${i}`, T0 + i * min), keep);
    // Two events in the same millisecond: the sequence orders them.
    await h.record('p', rejected('same-ms', T0 + 24 * min), keep);
    const seen: string[] = [];
    let after: { at: number; seq: number } | undefined;
    for (;;) {
      const rows = await h.list('p', { reference: 'main', limit: 10, ...(after ? { after } : {}) });
      const page = rows.slice(0, 10);
      seen.push(...page.map((e) => e.revision));
      if (rows.length <= 10) break;
      after = { at: page[9]!.at, seq: page[9]!.seq };
    }
    t.equal(seen.length, 26, 'every entry once');
    t.same(seen.slice(0, 3), ['same-ms', 'r24', 'r23']);
    t.equal(seen[25], 'r0');
    const window = await h.list('p', { reference: 'main', limit: 100, since: T0 + 5 * min, until: T0 + 8 * min });
    t.same(window.map((e) => e.revision), ['r7', 'r6', 'r5'], 'since inclusive, until exclusive');
  });

  await t.test('retention: by count and by age, never the revision served now', async (t) => {
    const h = await open();
    t.teardown(() => h.close());
    for (let i = 0; i < 8; i++) await h.record('k', served(`c${i}`, T0 + i * min), { maxAgeMs: keep.maxAgeMs, maxEntries: 5 });
    t.same((await h.list('k', { reference: 'main', limit: 100 })).map((e) => e.revision), ['c7', 'c6', 'c5', 'c4', 'c3'], 'the 5 newest');
    await h.record('k', served('other', T0, 'other'), keep);
    await h.record('k', served('c8', T0 + 10 * 86_400_000), { maxAgeMs: 86_400_000, maxEntries: 100 });
    t.same((await h.list('k', { reference: 'main', limit: 100 })).map((e) => e.revision), ['c8'], 'older than a day gone');
    t.same((await h.list('k', { reference: 'other', limit: 100 })).map((e) => e.revision), ['other'], 'what another reference serves now stays');
  });
}
