/**
 * Diff changes in words (src/diff/describe.ts): constraints read as on the segment pages and in the
 * trace (evaluation/constraint-words.ts), one-of lists as the values added and removed; no
 * operator codes, no double-escaped JSON.
 */
import t from 'tap';
import { describeChange } from '../../src/diff/describe.js';
import type { Change } from '../../src/diff/types.js';

const S = 'STRING_COMPARISON_TYPE';
const constraint = (property: string, operator: string, value: string, type = S) => ({ type, property, operator, value, description: '' });

t.test('constraints in words', async (t) => {
  const added: Change = { kind: 'constraint', action: 'added', constraint: { to: 2 }, to: constraint('region', 'eq', 'ch') };
  t.equal(describeChange(added), 'constraint added: region is "ch"');
  const removed: Change = { kind: 'constraint', action: 'removed', constraint: { from: 1 }, from: constraint('age', 'gte', '18', 'NUMBER_COMPARISON_TYPE') };
  t.equal(describeChange(removed), 'constraint removed: age ≥ 18');
  const changed: Change = { kind: 'constraint', action: 'changed', constraint: { from: 1, to: 1 }, from: constraint('plan', 'eq', 'pro'), to: constraint('plan', 'neq', 'free') };
  t.equal(describeChange(changed), 'constraint 1: plan is "pro" → plan is not "free"');
});

t.test('a changed one-of list: the values added and removed, never escaped JSON', async (t) => {
  const change: Change = {
    kind: 'constraint',
    action: 'changed',
    constraint: { from: 2, to: 2 },
    from: constraint('country', 'isoneof', '["DE", "FR"]'),
    to: constraint('country', 'isoneof', '["DE", "IT", "ES"]'),
  };
  const text = describeChange(change);
  t.equal(text, 'constraint 2: country is one of: added IT, ES; removed FR');
  t.notMatch(text, /\\"/, 'no escaped quotes');
  const added: Change = { kind: 'constraint', action: 'added', constraint: { to: 1 }, to: constraint('country', 'isoneof', '["DE", "FR"]') };
  t.equal(describeChange(added), 'constraint added: country is one of [DE, FR]');
});

t.test("a rule's or rollout's segment set: the keys added and removed, then the set it now has", async (t) => {
  const rule: Change = { kind: 'rule.segments', action: 'changed', rule: { from: 3, to: 3 }, from: ['eu'], to: ['eu', 'beta'] };
  t.equal(describeChange(rule), 'rule 3: segments added beta (now eu, beta)');
  const swapped: Change = { kind: 'rollout.segments', action: 'changed', rollout: { from: 1, to: 1 }, from: ['eu', 'staff'], to: ['beta'] };
  t.equal(describeChange(swapped), 'rollout 1: segments added beta; removed eu, staff (now beta)');
  const reordered: Change = { kind: 'rule.segments', action: 'changed', rule: { from: 2, to: 2 }, from: ['a', 'b'], to: ['b', 'a'] };
  t.equal(describeChange(reordered), 'rule 2: segments reordered: a, b → b, a');
});
