/**
 * The distribution bar maths (src/ui/lib/distribution-bars.ts): variant ids to keys, widths,
 * the remainder that gets no variant, sums above 100% cut at 100 as Flipt's bucketing cuts them,
 * and the text equivalent of the bar.
 */
import t from 'tap';
import { distributionBar, percentText } from '../../../src/ui/lib/distribution-bars.js';

const variants = [
  { id: 'v-blue', key: 'blue' },
  { id: 'v-green', key: 'green' },
  { id: 'v-red', key: 'red' },
];

t.test('variant ids become keys; a full split has no remainder', async (t) => {
  const bar = distributionBar([{ variantId: 'v-blue', rollout: 60 }, { variantId: 'v-green', rollout: 40 }], variants);
  t.same(bar.parts.map((p) => [p.variantKey, p.variantIndex, p.rollout, p.width]), [['blue', 0, 60, 60], ['green', 1, 40, 40]]);
  t.equal(bar.total, 100);
  t.equal(bar.remainder, 0);
  t.equal(bar.text, 'blue 60%, green 40%');
});

t.test('a sum below 100 leaves a remainder for no variant', async (t) => {
  const bar = distributionBar([{ variantId: 'v-red', rollout: 25 }, { variantId: 'v-blue', rollout: 50 }], variants);
  t.same(bar.parts.map((p) => p.width), [25, 50]);
  t.equal(bar.remainder, 25);
  t.equal(bar.text, 'red 25%, blue 50%, no variant 25%');
  t.equal(bar.parts[0]!.variantIndex, 2, 'the colour follows the variant, not the position in the rule');
});

t.test('fractions: float dust rounded away, two decimals kept', async (t) => {
  const bar = distributionBar(
    [{ variantId: 'v-blue', rollout: 33.33 }, { variantId: 'v-green', rollout: 33.33 }, { variantId: 'v-red', rollout: 33.34 }],
    variants,
  );
  t.equal(bar.total, 100);
  t.equal(bar.remainder, 0);
  t.equal(bar.text, 'blue 33.33%, green 33.33%, red 33.34%');
  const third = distributionBar([{ variantId: 'v-blue', rollout: 33.33 }, { variantId: 'v-green', rollout: 33.33 }], variants);
  t.equal(third.remainder, 33.34);
  t.equal(third.text, 'blue 33.33%, green 33.33%, no variant 33.34%');
});

t.test('a sum above 100: later parts are cut at 100, nothing left over', async (t) => {
  const bar = distributionBar(
    [{ variantId: 'v-blue', rollout: 70 }, { variantId: 'v-green', rollout: 50 }, { variantId: 'v-red', rollout: 10 }],
    variants,
  );
  t.same(bar.parts.map((p) => p.width), [70, 30, 0]);
  t.equal(bar.total, 130);
  t.equal(bar.remainder, 0);
  t.equal(bar.text, 'blue 70%, green 50%, red 10%', 'the text gives the rollouts as declared');
});

t.test('a rollout of 0 takes no room; unknown variants show their id', async (t) => {
  const bar = distributionBar([{ variantId: 'v-blue', rollout: 0 }, { variantId: 'gone', rollout: 100 }], variants);
  t.same(bar.parts.map((p) => [p.variantKey, p.variantIndex, p.width]), [['blue', 0, 0], ['gone', -1, 100]]);
  t.equal(bar.text, 'blue 0%, gone 100%');
});

t.test('no distributions at all', async (t) => {
  const bar = distributionBar([], variants);
  t.same(bar.parts, []);
  t.equal(bar.remainder, 100);
  t.equal(bar.text, 'no distributions');
});

t.test('percent text', async (t) => {
  t.equal(percentText(60), '60%');
  t.equal(percentText(0.5), '0.5%');
  t.equal(percentText(12.345), '12.35%');
  t.equal(percentText(100 - 33.33 * 3), '0.01%');
});
