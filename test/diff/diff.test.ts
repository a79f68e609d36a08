/** The semantic diff, one test per kind of change, on snapshots loaded from YAML. */
import t from 'tap';
import { diff } from '../../src/diff/diff.js';
import type { Change } from '../../src/diff/types.js';
import { snapshotOf } from './state.js';

const BASE = `
version: "1.4"
namespace: default
flags:
  - key: checkout
    name: Checkout
    type: VARIANT_FLAG_TYPE
    enabled: true
    metadata: {team: payments, tier: 1}
    variants:
      - {key: stripe, default: true, attachment: {fee: 1}}
      - {key: adyen}
    rules:
      - segment: beta
        distributions:
          - {variant: stripe, rollout: 50}
          - {variant: adyen, rollout: 50}
      - segment: {keys: [beta, eu], operator: AND_SEGMENT_OPERATOR}
        distributions:
          - {variant: adyen, rollout: 100}
      - segment: eu
        distributions:
          - {variant: stripe, rollout: 100}
  - key: dark-mode
    name: Dark mode
    type: BOOLEAN_FLAG_TYPE
    enabled: false
    rollouts:
      - segment: {key: beta, value: true}
      - threshold: {percentage: 50, value: true}
segments:
  - key: beta
    name: Beta
    match_type: ALL_MATCH_TYPE
    constraints:
      - {type: STRING_COMPARISON_TYPE, property: plan, operator: eq, value: beta}
  - key: eu
    name: EU
    match_type: ANY_MATCH_TYPE
    constraints:
      - {type: STRING_COMPARISON_TYPE, property: region, operator: eq, value: eu}
`;

/** BASE with one textual replacement (each must apply). */
function edited(...pairs: [string, string][]): string {
  let text = BASE;
  for (const [from, to] of pairs) {
    if (!text.includes(from)) throw new Error(`edit not applicable: ${from}`);
    text = text.replace(from, to);
  }
  return text;
}

function changesOf(head: string, flag = 'checkout'): Change[] {
  const d = diff(snapshotOf(BASE), snapshotOf(head, 'head'));
  return [...(d.namespaces[0]?.flags.find((f) => f.key === flag)?.changes ?? [])];
}

t.test('no change: empty diff', async (t) => {
  const d = diff(snapshotOf(BASE), snapshotOf(BASE, 'other'));
  t.equal(d.changed, false);
  t.same(d.namespaces, []);
  t.same(d.base, { reference: 'main', revision: 'main' });
  t.same(d.head, { reference: 'other', revision: 'other' });
});

t.test('enabled toggled', async (t) => {
  t.same(changesOf(edited(['enabled: false', 'enabled: true']), 'dark-mode'), [{ kind: 'flag.enabled', action: 'changed', from: false, to: true }]);
});

t.test('name and description', async (t) => {
  t.same(changesOf(edited(['name: Checkout', 'name: Pay\n    description: Which provider'])), [
    { kind: 'flag.name', action: 'changed', from: 'Checkout', to: 'Pay' },
    { kind: 'flag.description', action: 'changed', from: '', to: 'Which provider' },
  ]);
});

t.test('metadata added, removed, changed', async (t) => {
  t.same(changesOf(edited(['{team: payments, tier: 1}', '{team: growth, owner: ann}'])), [
    { kind: 'flag.metadata', action: 'added', key: 'owner', to: 'ann' },
    { kind: 'flag.metadata', action: 'changed', key: 'team', from: 'payments', to: 'growth' },
    { kind: 'flag.metadata', action: 'removed', key: 'tier', from: 1 },
  ]);
});

t.test('variant added, removed, attachment changed; default variant changed', async (t) => {
  const c = changesOf(edited(['{key: stripe, default: true, attachment: {fee: 1}}', '{key: stripe, attachment: {fee: 2}}\n      - {key: paypal}'], ['{key: adyen}', '{key: adyen, default: true}']));
  t.same(c, [
    { kind: 'variant', action: 'added', variant: 'paypal', to: { key: 'paypal', name: '', description: '', attachment: null } },
    { kind: 'variant.attachment', action: 'changed', variant: 'stripe', from: { fee: 1 }, to: { fee: 2 } },
    { kind: 'flag.defaultVariant', action: 'changed', from: 'stripe', to: 'adyen' },
  ]);
});

t.test('distribution rollout moved 50 → 60', async (t) => {
  const c = changesOf(edited(['{variant: stripe, rollout: 50}', '{variant: stripe, rollout: 60}'], ['{variant: adyen, rollout: 50}', '{variant: adyen, rollout: 40}']));
  t.same(c, [
    { kind: 'distribution', action: 'changed', rule: { from: 1, to: 1 }, variant: 'adyen', from: 50, to: 40 },
    { kind: 'distribution', action: 'changed', rule: { from: 1, to: 1 }, variant: 'stripe', from: 50, to: 60 },
  ]);
});

t.test('rule added (not every later rule changed)', async (t) => {
  const c = changesOf(edited(['    rules:\n', '    rules:\n      - segment: eu\n        distributions:\n          - {variant: adyen, rollout: 100}\n']));
  t.same(c, [{ kind: 'rule', action: 'added', rule: { to: 1 }, to: { segments: ['eu'], operator: 'OR_SEGMENT_OPERATOR', distributions: [{ variant: 'adyen', rollout: 100 }] } }]);
});

t.test('rule removed', async (t) => {
  const c = changesOf(edited(['      - segment: eu\n        distributions:\n          - {variant: stripe, rollout: 100}\n', '']));
  t.same(c, [{ kind: 'rule', action: 'removed', rule: { from: 3 }, from: { segments: ['eu'], operator: 'OR_SEGMENT_OPERATOR', distributions: [{ variant: 'stripe', rollout: 100 }] } }]);
});

t.test('rules reordered: reported as moves, not as changed content', async (t) => {
  const first = '      - segment: beta\n        distributions:\n          - {variant: stripe, rollout: 50}\n          - {variant: adyen, rollout: 50}\n';
  const last = '      - segment: eu\n        distributions:\n          - {variant: stripe, rollout: 100}\n';
  const c = changesOf(edited([first, ''], [last, last + first]));
  t.ok(c.every((x) => x.kind === 'rule' && x.action === 'moved'), 'only moves');
  t.same(
    c.map((x) => x.rule),
    [{ from: 1, to: 3 }, { from: 2, to: 1 }, { from: 3, to: 2 }],
  );
});

t.test("a rule's segments and operator changed", async (t) => {
  t.same(changesOf(edited(['{keys: [beta, eu], operator: AND_SEGMENT_OPERATOR}', '{keys: [beta, eu], operator: OR_SEGMENT_OPERATOR}'])), [
    { kind: 'rule.operator', action: 'changed', rule: { from: 2, to: 2 }, from: 'AND_SEGMENT_OPERATOR', to: 'OR_SEGMENT_OPERATOR' },
  ]);
  t.same(changesOf(edited(['      - segment: eu\n        distributions:\n          - {variant: stripe', '      - segment: beta\n        distributions:\n          - {variant: stripe'])), [
    { kind: 'rule.segments', action: 'changed', rule: { from: 3, to: 3 }, from: ['eu'], to: ['beta'] },
  ]);
});

t.test('rollout threshold changed, value changed, rollout added and reordered', async (t) => {
  t.same(changesOf(edited(['percentage: 50', 'percentage: 60']), 'dark-mode'), [
    { kind: 'rollout.threshold', action: 'changed', rollout: { from: 2, to: 2 }, from: 50, to: 60 },
  ]);
  t.same(changesOf(edited(['{key: beta, value: true}', '{key: beta, value: false}']), 'dark-mode'), [
    { kind: 'rollout.value', action: 'changed', rollout: { from: 1, to: 1 }, from: true, to: false },
  ]);
  const swapped = edited(['      - segment: {key: beta, value: true}\n      - threshold: {percentage: 50, value: true}', '      - threshold: {percentage: 50, value: true}\n      - segment: {key: beta, value: true}']);
  t.same(changesOf(swapped, 'dark-mode'), [
    { kind: 'rollout', action: 'moved', rollout: { from: 1, to: 2 } },
    { kind: 'rollout', action: 'moved', rollout: { from: 2, to: 1 } },
  ]);
  const added = edited(['      - threshold: {percentage: 50, value: true}', '      - segment: {key: eu, value: false}\n      - threshold: {percentage: 50, value: true}']);
  t.same(changesOf(added, 'dark-mode'), [
    { kind: 'rollout', action: 'added', rollout: { to: 2 }, to: { type: 'SEGMENT_ROLLOUT_TYPE', description: '', segment: { segments: ['eu'], operator: 'OR_SEGMENT_OPERATOR', value: false } } },
  ]);
});

t.test('segments: constraint added, removed, changed; match type; flags and segments added/removed', async (t) => {
  const head = edited(
    ['value: beta}', 'value: beta2}\n      - {type: NUMBER_COMPARISON_TYPE, property: age, operator: gt, value: "18"}'],
    ['match_type: ANY_MATCH_TYPE\n    constraints:\n      - {type: STRING_COMPARISON_TYPE, property: region, operator: eq, value: eu}', 'match_type: ALL_MATCH_TYPE\n    constraints: []'],
    ['  - key: dark-mode', '  - key: new-flag\n    name: New\n    enabled: true\n  - key: dark-mode'],
  );
  const d = diff(snapshotOf(BASE), snapshotOf(head));
  const ns = d.namespaces[0]!;
  t.same(ns.flags, [{ key: 'new-flag', status: 'added', type: 'VARIANT_FLAG_TYPE', changes: [] }]);
  t.same(ns.segments, [
    {
      key: 'beta',
      status: 'changed',
      changes: [
        { kind: 'constraint', action: 'added', constraint: { to: 2 }, to: { type: 'NUMBER_COMPARISON_TYPE', property: 'age', operator: 'gt', value: '18', description: '' } },
        {
          kind: 'constraint',
          action: 'changed',
          constraint: { from: 1, to: 1 },
          from: { type: 'STRING_COMPARISON_TYPE', property: 'plan', operator: 'eq', value: 'beta', description: '' },
          to: { type: 'STRING_COMPARISON_TYPE', property: 'plan', operator: 'eq', value: 'beta2', description: '' },
        },
      ],
    },
    {
      key: 'eu',
      status: 'changed',
      changes: [
        { kind: 'segment.matchType', action: 'changed', from: 'ANY_MATCH_TYPE', to: 'ALL_MATCH_TYPE' },
        { kind: 'constraint', action: 'removed', constraint: { from: 1 }, from: { type: 'STRING_COMPARISON_TYPE', property: 'region', operator: 'eq', value: 'eu', description: '' } },
      ],
    },
  ]);
  t.same(d.summary, { namespacesAdded: 0, namespacesRemoved: 0, namespacesChanged: 1, flagsAdded: 1, flagsRemoved: 0, flagsChanged: 0, segmentsAdded: 0, segmentsRemoved: 0, segmentsChanged: 2 });
});

t.test('namespace added; namespace option filters', async (t) => {
  const head = `${BASE}---\nversion: "1.4"\nnamespace: {key: team, name: Team}\nflags:\n  - key: x\n    name: X\n`;
  const d = diff(snapshotOf(BASE), snapshotOf(head));
  t.same(
    d.namespaces.map((n) => [n.key, n.status, n.flags.map((f) => `${f.key}:${f.status}`)]),
    [['team', 'added', ['x:added']]],
  );
  t.equal(diff(snapshotOf(BASE), snapshotOf(head), { namespace: 'default' }).changed, false);
  t.same(diff(snapshotOf(head), snapshotOf(BASE)).namespaces.map((n) => [n.key, n.status]), [['team', 'removed']]);
});
