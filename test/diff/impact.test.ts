/** The impact preview: outcomes compared between base and head over a sample, per flag. */
import t from 'tap';
import { parseContexts } from '../../src/diff/contexts.js';
import { describeImpact } from '../../src/diff/describe.js';
import { diff } from '../../src/diff/diff.js';
import { impact, syntheticSample } from '../../src/diff/impact.js';
import { evaluateVariant } from '../../src/evaluation/index.js';
import { snapshotOf } from './state.js';

const state = (stripe: number, betaValue = 'beta', darkEnabled = false) => `
version: "1.4"
namespace: default
flags:
  - key: payment-provider
    name: Payment provider
    enabled: true
    variants: [{key: stripe}, {key: adyen}]
    rules:
      - segment: everyone
        distributions:
          - {variant: stripe, rollout: ${stripe}}
          - {variant: adyen, rollout: ${100 - stripe}}
  - key: beta-banner
    name: Beta banner
    type: BOOLEAN_FLAG_TYPE
    enabled: ${darkEnabled}
    rollouts:
      - segment: {key: beta, value: true}
  - key: untouched
    name: Untouched
    enabled: true
    variants: [{key: a}]
    rules:
      - segment: everyone
        distributions: [{variant: a, rollout: 100}]
segments:
  - key: everyone
    name: Everyone
    match_type: ALL_MATCH_TYPE
  - key: beta
    name: Beta
    match_type: ALL_MATCH_TYPE
    constraints:
      - {type: STRING_COMPARISON_TYPE, property: plan, operator: eq, value: ${betaValue}}
`;

t.test('a rollout moved 50 → 60: the entities that move, counted against the evaluator', async (t) => {
  const base = snapshotOf(state(50));
  const head = snapshotOf(state(40), 'head');
  const sample = syntheticSample(10_000, []);
  const report = impact(base, head, diff(base, head), { sample, source: 'synthetic', contexts: 0 });
  t.equal(report.flags.length, 1, 'only the changed flag is evaluated');
  const f = report.flags[0]!;
  t.equal(f.flag, 'payment-provider');
  t.equal(f.evaluated, 10_000);
  // Independent count with the public evaluator.
  let expected = 0;
  for (const s of sample) {
    const req = { namespaceKey: 'default', flagKey: 'payment-provider', entityId: s.entityId, context: s.context };
    if (evaluateVariant(base, req).variantKey !== evaluateVariant(head, req).variantKey) expected++;
  }
  t.equal(f.changed, expected);
  t.ok(f.changed > 500 && f.changed < 1500, `about 10% move (${f.changed})`);
  t.same(f.transitions.map((x) => [x.from, x.to]), [['stripe', 'adyen']]);
  t.match(describeImpact(f), /^\d+\.\d% of 10,000 entities move stripe → adyen$/);
});

t.test('a changed segment: flags reading it are evaluated; contexts decide', async (t) => {
  const base = snapshotOf(state(50, 'beta'));
  const head = snapshotOf(state(50, 'pro'), 'head');
  const d = diff(base, head);
  t.same(d.namespaces[0]!.flags, [], 'no flag itself changed');
  const contexts: Record<string, string>[] = [{ plan: 'beta' }, { plan: 'pro' }, {}];
  const report = impact(base, head, d, { sample: syntheticSample(300, contexts), source: 'synthetic', contexts: 3 });
  t.same(report.flags.map((f) => [f.flag, f.changed, f.transitions.map((x) => `${x.from}→${x.to}:${x.count}`)]), [
    ['beta-banner', 200, ['false→true:100', 'true→false:100']],
  ]);
});

t.test('contexts file: JSONL, bounded, bad lines named', async (t) => {
  const s = parseContexts('{"entityId":"u1","context":{"plan":"beta"}}\n\n{"entityId":"u2"}\n');
  t.same(s.map((x) => [x.entityId, { ...x.context }]), [['u1', { plan: 'beta' }], ['u2', {}]]);
  t.throws(() => parseContexts('{"entityId":1}', 'c.jsonl'), { message: 'c.jsonl:1: entityId must be a string' });
  t.throws(() => parseContexts('{"entityId":"a"}\nnope', 'c.jsonl'), { message: 'c.jsonl:2: not JSON' });
  t.throws(() => parseContexts('{"entityId":"a","context":{"n":1}}', 'c.jsonl'), { message: 'c.jsonl:1: context.n must be a string' });
  t.throws(() => parseContexts(`{"entityId":"${'x'.repeat(1_000_000)}"}`, 'c.jsonl'), { message: /line longer than/ });
  t.throws(() => parseContexts('{"entityId":"a"}\n'.repeat(100_001), 'c.jsonl'), { message: /more than 100000 entries/ });
});

t.test('the evaluation budget: flags beyond 2,000,000 flag × entity pairs are counted, not evaluated', async (t) => {
  const base = snapshotOf(state(50, 'beta', false));
  const head = snapshotOf(state(40, 'beta', true), 'head');
  const d = diff(base, head);
  t.equal(d.summary.flagsChanged, 2);
  const within = impact(base, head, d, { sample: syntheticSample(1_000_000, []), source: 'synthetic', contexts: 0 });
  t.same([within.flags.length, within.omittedFlags], [2, 0], '2 × 1,000,000 pairs: both evaluated');
  const over = impact(base, head, d, { sample: syntheticSample(1_000_001, []), source: 'synthetic', contexts: 0 });
  t.same([over.flags.map((f) => f.flag), over.omittedFlags], [['beta-banner'], 1], 'the second flag would cross the budget');
});
