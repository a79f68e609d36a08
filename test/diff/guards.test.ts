/**
 * The guards on a change (src/diff/guards.ts), one decision per test with its near miss: a move
 * equal to the limit passes and one a tenth above fails; added and removed rules and threshold
 * rollouts count from and to 0; protected flags refuse deletion and disabling, by flag or by
 * namespace; the impact share compares against the limit, and an unmeasured impact guard says so.
 */
import t from 'tap';
import { diff } from '../../src/diff/diff.js';
import { evaluateGuards, type GuardFinding } from '../../src/diff/guards.js';
import { impact, syntheticSample } from '../../src/diff/impact.js';
import type { Guards } from '../../src/state/policy/policy-file.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { snapshotOf } from './state.js';

const variantFlag = (key: string, rules: string, enabled = true) => `
  - key: ${key}
    name: ${key}
    enabled: ${enabled}
    variants: [{key: a}, {key: b}]
    rules:${rules}`;
const rule = (a: number, b: number, segment = 'everyone') => `
      - segment: ${segment}
        distributions: [{variant: a, rollout: ${a}}, {variant: b, rollout: ${b}}]`;
const boolFlag = (key: string, rollouts: string, enabled = false) => `
  - key: ${key}
    name: ${key}
    type: BOOLEAN_FLAG_TYPE
    enabled: ${enabled}
    rollouts:${rollouts === '' ? ' []' : rollouts}`;
const threshold = (p: number) => `
      - threshold: {percentage: ${p}, value: true}`;
const state = (flags: string, ns = 'default') => `
version: "1.4"
namespace: ${ns}
flags:${flags}
segments:
  - key: everyone
    name: Everyone
    match_type: ALL_MATCH_TYPE
  - key: pro
    name: Pro
    match_type: ALL_MATCH_TYPE
    constraints: [{type: STRING_COMPARISON_TYPE, property: plan, operator: eq, value: pro}]
`;

const guards = (g: Partial<Guards>): Guards => ({ protected: [], ...g });
const run = (base: Snapshot, head: Snapshot, g: Partial<Guards>, entities = 0): GuardFinding[] => {
  const d = diff(base, head);
  const i = entities > 0 ? impact(base, head, d, { sample: syntheticSample(entities, []), source: 'synthetic', contexts: 0 }) : undefined;
  return evaluateGuards(d, guards(g), i);
};
const rules = (fs: GuardFinding[]) => fs.map((f) => f.rule);

t.test('max_rollout_change: a distribution move equal to the limit passes, a tenth more fails', async (t) => {
  const base = snapshotOf(state(variantFlag('colors', rule(50, 50))));
  t.same(run(base, snapshotOf(state(variantFlag('colors', rule(70, 30)))), { maxRolloutChange: 20 }), [], '20 points against a limit of 20');
  const f = run(base, snapshotOf(state(variantFlag('colors', rule(70.1, 29.9)))), { maxRolloutChange: 20 });
  t.same(rules(f), ['guard.max-rollout-change']);
  t.match(f[0], { severity: 'error', namespace: 'default', flag: 'colors', side: 'head', field: 'rules' });
  t.match(f[0]!.message, /rule 1 moves variant `a` 50% → 70\.1%, a move of 20\.1 percentage points; the policy allows at most 20 per change/);
  // Float noise: 33.3 → 33.4 is 0.1 points, and 0.1 is the limit.
  const thirds = snapshotOf(state(variantFlag('colors', rule(33.3, 66.7))));
  t.same(run(thirds, snapshotOf(state(variantFlag('colors', rule(33.4, 66.6)))), { maxRolloutChange: 0.1 }), [], 'no float rounding failure');
});

t.test('max_rollout_change: an added rule counts from 0, a removed one to 0; segments alone move nothing', async (t) => {
  const base = snapshotOf(state(variantFlag('colors', rule(100, 0))));
  const added = run(base, snapshotOf(state(variantFlag('colors', rule(25, 75, 'pro') + rule(100, 0)))), { maxRolloutChange: 50 });
  t.same(rules(added), ['guard.max-rollout-change'], 'a new rule giving 75% to b');
  t.match(added[0]!.message, /rule 1 is added, giving variant `b` 75% \(from 0%\), a move of 75/);
  t.same(run(base, snapshotOf(state(variantFlag('colors', rule(25, 75, 'pro') + rule(100, 0)))), { maxRolloutChange: 75 }), [], 'near miss: the limit is 75');
  const removed = run(snapshotOf(state(variantFlag('colors', rule(40, 60, 'pro') + rule(100, 0)))), base, { maxRolloutChange: 59 });
  t.match(removed[0]!.message, /rule 1 is removed, taking variant `b` from 60% to 0%/);
  // The rule's segment changes (everyone → pro), its distributions stay: no percentage moves.
  t.same(run(base, snapshotOf(state(variantFlag('colors', rule(100, 0, 'pro')))), { maxRolloutChange: 0 }), []);
});

t.test('max_rollout_change: threshold rollouts, added, removed, moved; a new flag is not measured', async (t) => {
  const base = snapshotOf(state(boolFlag('beta', threshold(10))));
  const moved = run(base, snapshotOf(state(boolFlag('beta', threshold(40)))), { maxRolloutChange: 20 });
  t.match(moved[0], { rule: 'guard.max-rollout-change', flag: 'beta', field: 'rollouts' });
  t.match(moved[0]!.message, /rollout 1 moves its threshold 10% → 40%, a move of 30/);
  t.same(run(base, snapshotOf(state(boolFlag('beta', threshold(30)))), { maxRolloutChange: 20 }), [], 'near miss: 20 points');
  const none = snapshotOf(state(boolFlag('beta', '')));
  t.match(run(none, base, { maxRolloutChange: 5 })[0]!.message, /threshold rollout 1 is added at 10% \(from 0%\)/);
  t.match(run(base, none, { maxRolloutChange: 5 })[0]!.message, /threshold rollout 1 is removed \(10% to 0%\)/);
  t.same(run(none, base, { maxRolloutChange: 10 }), [], 'near miss: an added 10% threshold against 10');
  const fresh = snapshotOf(state(boolFlag('beta', '') + variantFlag('colors', rule(100, 0))));
  t.same(run(none, fresh, { maxRolloutChange: 0 }), [], 'an added flag had no outcome to move from');
});

t.test('protected: deleting or disabling a protected flag, or deleting its namespace, fails', async (t) => {
  const two = snapshotOf(state(variantFlag('pay', rule(100, 0)) + variantFlag('other', rule(100, 0)), 'checkout'));
  const onlyOther = snapshotOf(state(variantFlag('other', rule(100, 0)), 'checkout'));
  const payDisabled = snapshotOf(state(variantFlag('pay', rule(100, 0), false) + variantFlag('other', rule(100, 0)), 'checkout'));
  const byFlag = { protected: [{ namespace: 'checkout', flags: ['pay'] }] };
  const deleted = run(two, onlyOther, byFlag);
  t.match(deleted, [{ rule: 'guard.protected', namespace: 'checkout', flag: 'pay', side: 'base' }]);
  t.match(deleted[0]!.message, /flag `checkout\/pay` is deleted; the policy protects it from deletion/);
  const disabled = run(two, payDisabled, byFlag);
  t.match(disabled, [{ rule: 'guard.protected', flag: 'pay', side: 'head', field: 'enabled' }]);
  t.match(disabled[0]!.message, /is disabled/);
  t.same(run(payDisabled, two, byFlag), [], 'near miss: enabling a protected flag passes');
  t.same(run(two, snapshotOf(state(variantFlag('pay', rule(100, 0)), 'checkout')), byFlag), [], 'near miss: deleting an unprotected flag of the namespace');
  t.same(run(two, onlyOther, { protected: [{ namespace: 'other-ns' }] }), [], 'near miss: another namespace protected');
  const everyFlag = run(two, onlyOther, { protected: [{ namespace: 'checkout' }] });
  t.match(everyFlag[0]!.message, /every flag of namespace `checkout`/);
  // The namespace deleted: every protected flag in it, once each.
  const gone = snapshotOf(state(variantFlag('x', rule(100, 0)), 'elsewhere'));
  const both = snapshotOf(`${state(variantFlag('pay', rule(100, 0)) + variantFlag('other', rule(100, 0)), 'checkout')}`);
  const nsDeleted = run(both, gone, byFlag);
  t.same(nsDeleted.map((f) => f.flag), ['pay']);
  t.match(nsDeleted[0]!.message, /is deleted with its namespace `checkout`/);
});

t.test('max_impact_share: per flag, against the share of sample entities that change', async (t) => {
  const base = snapshotOf(state(variantFlag('colors', rule(50, 50))));
  const head = snapshotOf(state(variantFlag('colors', rule(80, 20))));
  const d = diff(base, head);
  const i = impact(base, head, d, { sample: syntheticSample(2000, [{ plan: 'pro' }]), source: 'synthetic', contexts: 1 });
  const ratio = i.flags[0]!.ratio;
  t.ok(ratio > 0.2 && ratio < 0.4, `about 30% move (${ratio})`);
  t.same(evaluateGuards(d, guards({ maxImpactShare: ratio }), i), [], 'near miss: a share equal to the limit');
  const f = evaluateGuards(d, guards({ maxImpactShare: ratio - 0.001 }), i);
  t.same(rules(f), ['guard.max-impact-share']);
  t.match(f[0]!.message, new RegExp(`the outcome changes for ${i.flags[0]!.changed.toLocaleString("en-US")} of 2,000 sample entities`));
});

t.test('max_impact_share unmeasured: no sample, or no test contexts, is said (information)', async (t) => {
  const base = snapshotOf(state(variantFlag('colors', rule(50, 50))));
  const head = snapshotOf(state(variantFlag('colors', rule(80, 20))));
  const noSample = run(base, head, { maxImpactShare: 1 });
  t.match(noSample, [{ rule: 'guard.impact.unmeasured', severity: 'info' }]);
  t.match(noSample[0]!.message, /not checked: no impact sample/);
  const empty = run(base, head, { maxImpactShare: 1 }, 100);
  t.match(empty, [{ rule: 'guard.impact.unmeasured', severity: 'info' }]);
  t.match(empty[0]!.message, /no flag test contexts/);
  t.same(run(base, base, { maxImpactShare: 0 }), [], 'nothing changed: nothing to measure, nothing said');
});
