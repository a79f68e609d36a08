/**
 * Properties of the diff over random valid states (test/support/random-state.ts):
 * diff(a, a) is empty, and diff(b, a) mirrors diff(a, b) (added ↔ removed, from ↔ to, ranks swapped).
 * Pairs are either two unrelated states (many adds, removes and changes) or a state and a copy of
 * it with rules and rollouts shuffled and flags toggled (reorders).
 */
import fc from 'fast-check';
import t from 'tap';
import { diff } from '../../src/diff/diff.js';
import type { Change, NamespaceDiff, SnapshotDiff } from '../../src/diff/types.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { loadIntoVexil } from '../oracle/run.js';
import { chance, generateState, mulberry32, shuffle, toFeaturesYaml, type GenState } from '../support/random-state.js';

function snapshotOf(state: GenState): Snapshot {
  const r = loadIntoVexil(toFeaturesYaml(state));
  if (r.snapshot === undefined) throw new Error(`generated state invalid: ${JSON.stringify(r.problems.slice(0, 3))}`);
  return r.snapshot;
}

/** The same state with rules and rollouts shuffled and some flags toggled. */
function reshuffled(state: GenState, seed: number): GenState {
  const rng = mulberry32(seed);
  return {
    ...state,
    namespaces: state.namespaces.map((ns) => ({
      ...ns,
      flags: ns.flags.map((f) => ({
        ...f,
        enabled: chance(rng, 0.2) ? !(f.enabled ?? false) : f.enabled,
        rules: chance(rng, 0.5) ? shuffle(rng, f.rules) : f.rules,
        rollouts: chance(rng, 0.5) ? shuffle(rng, f.rollouts) : f.rollouts,
      })),
    })),
  };
}

function mirrorChange(c: Change): Change {
  const swap = (p: { from?: number; to?: number } | undefined) => (p === undefined ? undefined : { ...(p.to !== undefined ? { from: p.to } : {}), ...(p.from !== undefined ? { to: p.from } : {}) });
  const action = c.action === 'added' ? 'removed' : c.action === 'removed' ? 'added' : c.action;
  const out: Record<string, unknown> = { kind: c.kind, action };
  if (c.variant !== undefined) out.variant = c.variant;
  if (c.key !== undefined) out.key = c.key;
  if (c.rule !== undefined) out.rule = swap(c.rule);
  if (c.rollout !== undefined) out.rollout = swap(c.rollout);
  if (c.constraint !== undefined) out.constraint = swap(c.constraint);
  if (c.to !== undefined) out.from = c.to;
  if (c.from !== undefined) out.to = c.from;
  return out as unknown as Change;
}

const flip = (s: string) => (s === 'added' ? 'removed' : s === 'removed' ? 'added' : s);
/** Canonical text of a change (keys sorted) so multisets compare. */
const canon = (c: Change) => JSON.stringify(c, Object.keys(c).sort());
const changeSet = (cs: readonly Change[]) => cs.map(canon).sort();

function normalized(d: SnapshotDiff, mirror: boolean): unknown {
  const m = (c: Change) => (mirror ? mirrorChange(c) : c);
  return d.namespaces.map((n: NamespaceDiff) => ({
    key: n.key,
    status: mirror ? flip(n.status) : n.status,
    changes: changeSet(n.changes.map(m)),
    flags: n.flags.map((f) => ({ key: f.key, status: mirror ? flip(f.status) : f.status, changes: changeSet(f.changes.map(m)) })),
    segments: n.segments.map((s) => ({ key: s.key, status: mirror ? flip(s.status) : s.status, changes: changeSet(s.changes.map(m)) })),
  }));
}

const seeds = fc.integer({ min: 0, max: 2 ** 31 - 1 });

t.test('diff(a, a) is empty', async (t) => {
  fc.assert(
    fc.property(seeds, (seed) => {
      const state = generateState(mulberry32(seed));
      const a = snapshotOf(state);
      const again = snapshotOf(state); // built separately: equal content, other objects
      const d = diff(a, again);
      return !d.changed && d.namespaces.length === 0 && diff(a, a).namespaces.length === 0;
    }),
    { numRuns: 150 },
  );
  t.pass('150 random states');
});

t.test('diff(b, a) mirrors diff(a, b)', async (t) => {
  let changedPairs = 0;
  let moves = 0;
  fc.assert(
    fc.property(seeds, seeds, fc.boolean(), (s1, s2, related) => {
      const stateA = generateState(mulberry32(s1));
      const stateB = related ? reshuffled(stateA, s2) : generateState(mulberry32(s2));
      const a = snapshotOf(stateA);
      const b = snapshotOf(stateB);
      const ab = diff(a, b);
      const ba = diff(b, a);
      if (ab.changed) changedPairs++;
      moves += ab.namespaces.flatMap((n) => n.flags.flatMap((f) => f.changes)).filter((c) => c.action === 'moved').length;
      t.strictSame(normalized(ba, false), normalized(ab, true));
      t.equal(ba.summary.flagsAdded, ab.summary.flagsRemoved);
      t.equal(ba.summary.segmentsRemoved, ab.summary.segmentsAdded);
    }),
    { numRuns: 300 },
  );
  t.ok(changedPairs > 100, `most pairs differ (${changedPairs})`);
  t.ok(moves > 0, `reorders seen (${moves} moves)`);
});
