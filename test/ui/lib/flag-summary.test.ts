/**
 * The flag page's first sentences (src/ui/lib/flag-summary.ts): variant flags from their rules,
 * boolean flags from their rollouts, disabled ones as the evaluator treats them.
 */
import t from 'tap';
import { booleanSummary, servedText, variantSummary } from '../../../src/ui/lib/flag-summary.js';

const none = new Set<string>();
const everyone = new Set(['everyone']);
const eu = { rank: 1, segments: ['eu'], operator: 'OR' as const, distributions: [{ variantKey: 'adyen', rollout: 100 }] };
const all = {
  rank: 2,
  segments: ['everyone'],
  operator: 'OR' as const,
  distributions: [
    { variantKey: 'stripe', rollout: 50 },
    { variantKey: 'adyen', rollout: 50 },
  ],
};
const flag = { type: 'VARIANT_FLAG_TYPE', enabled: true, defaultVariant: { key: 'stripe' } };

t.test('a variant flag: its rules in order, then everyone else (unless a rule takes everyone)', async (t) => {
  t.same(variantSummary(flag, [eu, all], none), [
    'Entities in segment eu get adyen; then entities in segment everyone get stripe 50% and adyen 50%.',
    'Everyone else gets the default variant stripe.',
  ]);
  t.same(
    variantSummary(flag, [eu, all], everyone),
    ['Entities in segment eu get adyen; then every entity gets stripe 50% and adyen 50%.'],
    'rule 2 takes every entity: nobody is left for the default',
  );
  t.same(variantSummary(flag, [{ ...all, rank: 1 }, { ...eu, rank: 2 }], everyone), ['Every entity gets stripe 50% and adyen 50%.'], 'rule 1 takes every entity: nothing after it is reached');
  t.same(variantSummary(flag, [], none), ['Every entity gets the default variant stripe.']);
  t.same(variantSummary({ ...flag, defaultVariant: undefined }, [], none), ['Every entity gets no variant.']);
  t.same(variantSummary(flag, [eu, { ...eu, rank: 2 }, { ...eu, rank: 3 }], none), [
    '3 rules decide, the first: entities in segment eu get adyen.',
    'Everyone else gets the default variant stripe.',
  ]);
});

t.test('a disabled variant flag serves its default to every entity', async (t) => {
  t.same(variantSummary({ ...flag, enabled: false }, [eu, all], none), ['Disabled: every entity gets the default variant stripe.', 'Its 2 rules apply only once it is enabled.']);
});

t.test('distributions in words', async (t) => {
  t.equal(servedText([{ variantKey: 'a', rollout: 100 }]), 'a');
  t.equal(servedText([{ variantKey: 'a', rollout: 30 }]), 'a 30% and no variant 70%');
  t.equal(servedText([]), 'no variant');
  t.equal(
    servedText([
      { variantKey: 'a', rollout: 20 },
      { variantKey: 'b', rollout: 30 },
      { variantKey: 'c', rollout: 50 },
    ]),
    'a 20%, b 30% and c 50%',
  );
});

t.test('a boolean flag: its rollouts apply when disabled too', async (t) => {
  const rollouts = [
    { rank: 1, value: true, segments: ['staff'], operator: 'OR' as const },
    { rank: 2, value: true, percentage: 25 },
  ];
  t.same(booleanSummary(false, rollouts, none), [
    'Entities in segment staff get true; then 25% of entities get true.',
    'Everyone else gets false. Disabled only sets what entities no rollout matches get.',
  ]);
  t.same(booleanSummary(true, rollouts, none), ['Every entity gets true.']);
  t.same(booleanSummary(false, [], none), ['Every entity gets false.']);
  t.same(booleanSummary(false, [{ rank: 1, value: true, percentage: 100 }], none), ['Every entity gets true. Disabled only sets what entities no rollout matches get.']);
});
