/**
 * Rules' and rollouts' segment sets and outcomes in words (src/ui/lib/rule-text.ts): one segment,
 * several joined by AND/OR, the empty sets (AND of none: everyone; OR of none: nobody), threshold
 * and segment rollouts, and what everyone else gets.
 */
import t from 'tap';
import { everyoneElseText, operatorWord, rolloutText, segmentKeysOf, segmentSetText } from '../../../src/ui/lib/rule-text.js';

const one = { segmentKey: 'beta', segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR' };
const and = { segmentKey: '', segmentKeys: ['beta', 'mobile'], segmentOperator: 'AND_SEGMENT_OPERATOR' };
const or = { segmentKey: '', segmentKeys: ['a', 'b', 'c'], segmentOperator: 'OR_SEGMENT_OPERATOR' };

t.test('segment sets', async (t) => {
  t.same(segmentKeysOf(one), ['beta']);
  t.same(segmentKeysOf(and), ['beta', 'mobile']);
  t.equal(operatorWord('AND_SEGMENT_OPERATOR'), 'AND');
  t.equal(operatorWord('OR_SEGMENT_OPERATOR'), 'OR');
  t.equal(segmentSetText(one), 'segment beta');
  t.equal(segmentSetText(and), 'segments beta AND mobile');
  t.equal(segmentSetText(or), 'segments a OR b OR c');
  t.equal(segmentSetText({ segmentKey: '', segmentKeys: [], segmentOperator: 'AND_SEGMENT_OPERATOR' }), 'no segments (AND of none: every entity)');
  t.equal(segmentSetText({ segmentKey: '', segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR' }), 'no segments (OR of none: no entity)');
});

t.test('rollouts', async (t) => {
  t.equal(rolloutText({ type: 'THRESHOLD_ROLLOUT_TYPE', threshold: { percentage: 35, value: true } }), '35% of entities → true');
  t.equal(rolloutText({ type: 'THRESHOLD_ROLLOUT_TYPE', threshold: { percentage: 12.5, value: false } }), '12.5% of entities → false');
  t.equal(rolloutText({ type: 'SEGMENT_ROLLOUT_TYPE', segment: { ...one, value: false } }), 'entities in segment beta → false');
  t.equal(rolloutText({ type: 'SEGMENT_ROLLOUT_TYPE', segment: { ...and, value: true } }), 'entities in segments beta AND mobile → true');
  t.equal(rolloutText({ type: 'UNKNOWN_ROLLOUT_TYPE' }), 'empty rollout (skipped)');
  t.equal(everyoneElseText(true), 'everyone else → true');
  t.equal(everyoneElseText(false), 'everyone else → false');
});
