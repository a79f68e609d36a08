/** Boolean evaluation (§2.4): thresholds, segment rollouts, fall-through, errors. */
import t from 'tap';
import { VexilError } from '../../src/errors.js';
import { thresholdValue } from '../../src/evaluation/hash.js';
import { evaluateBoolean } from '../../src/evaluation/index.js';
import { booleanFlag, req, segment, snapshot, variantFlag, type RolloutSpec } from './fixture.js';

const pro = segment('pro', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'plan', 'eq', 'pro']]);
const eu = segment('eu', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'region', 'eq', 'eu']]);

function one(rollouts: RolloutSpec[], enabled = false) {
  return snapshot({ default: { segments: [pro, eu], flags: [booleanFlag({ key: 'b', enabled, rollouts })] } });
}

/** An entity id whose threshold value n (crc32(entityId ‖ 'b') % 100) equals `n`. */
function entityWithN(n: number): string {
  for (let i = 0; ; i++) if (thresholdValue(`e${i}`, 'b') === n) return `e${i}`;
}

t.test('threshold: strict float32 "<" and no range clamp', async (t) => {
  const cases: Array<[percentage: number, n: number, matches: boolean]> = [
    [0, 0, false], // 0 never matches
    [100, 99, true], // 100 always matches (n <= 99)
    [50, 49, true],
    [50, 50, false],
    [33.3, 33, true],
    [33.3, 34, false],
    [-5, 0, false], // negative never
    [150, 99, true], // above 100 always
    [1, 0, true],
    [33.00000001, 33, false], // float32(33.00000001) == 33, so 33 < 33 is false (float64 would say true)
  ];
  for (const [percentage, n, matches] of cases) {
    const s = one([{ threshold: percentage, value: true }]);
    const r = evaluateBoolean(s, req('b', entityWithN(n)));
    t.same(
      [r.enabled, r.reason],
      matches ? [true, 'MATCH_EVALUATION_REASON'] : [false, 'DEFAULT_EVALUATION_REASON'],
      `percentage ${percentage}, n ${n}`,
    );
  }
});

t.test('threshold value false on an enabled flag: a match answers false', async (t) => {
  const s = one([{ threshold: 100, value: false }], true);
  t.same(evaluateBoolean(s, req('b', 'anyone')), { flagKey: 'b', enabled: false, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] });
});

t.test('flag.enabled is only the fall-through value; boolean never answers FLAG_DISABLED', async (t) => {
  t.same(evaluateBoolean(one([], false), req('b', 'x')), { flagKey: 'b', enabled: false, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [] });
  t.same(evaluateBoolean(one([], true), req('b', 'x')), { flagKey: 'b', enabled: true, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [] });
  const disabled = one([{ segment: 'pro', value: true }], false);
  t.same(evaluateBoolean(disabled, req('b', 'x', { plan: 'pro' })), {
    flagKey: 'b', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: ['pro'],
  });
});

t.test('segment rollouts: OR / AND, matched keys, empty sets', async (t) => {
  const or = one([{ segment: { keys: ['pro', 'eu'] }, value: true }]);
  t.same(evaluateBoolean(or, req('b', 'x', { plan: 'pro', region: 'eu' })).segmentKeys, ['pro', 'eu']);
  t.same(evaluateBoolean(or, req('b', 'x', { region: 'eu' })), { flagKey: 'b', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: ['eu'] });
  t.same(evaluateBoolean(or, req('b', 'x', {})).reason, 'DEFAULT_EVALUATION_REASON');

  const and = one([{ segment: { keys: ['pro', 'eu'], op: 'AND_SEGMENT_OPERATOR' }, value: true }]);
  t.same(evaluateBoolean(and, req('b', 'x', { plan: 'pro', region: 'eu' })).enabled, true);
  t.same(evaluateBoolean(and, req('b', 'x', { plan: 'pro' })).reason, 'DEFAULT_EVALUATION_REASON');

  const andEmpty = one([{ segment: { keys: [], op: 'AND_SEGMENT_OPERATOR' }, value: true }]);
  t.same(evaluateBoolean(andEmpty, req('b', 'x')), { flagKey: 'b', enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: [] });
  const orEmpty = one([{ segment: { keys: [] }, value: true }]);
  t.same(evaluateBoolean(orEmpty, req('b', 'x')).reason, 'DEFAULT_EVALUATION_REASON');

  const valueFalse = one([{ segment: 'pro', value: false }], true);
  t.same(evaluateBoolean(valueFalse, req('b', 'x', { plan: 'pro' })), { flagKey: 'b', enabled: false, reason: 'MATCH_EVALUATION_REASON', segmentKeys: ['pro'] });
});

t.test('rollouts run in rank order; the first that matches decides; empty rollouts are skipped', async (t) => {
  const s = one([{}, { segment: 'pro', value: false }, { threshold: 100, value: true }]);
  t.equal(evaluateBoolean(s, req('b', 'x', { plan: 'pro' })).enabled, false);
  t.equal(evaluateBoolean(s, req('b', 'x', { plan: 'free' })).enabled, true);
  const thresholdFirst = one([{ threshold: 100, value: true }, { segment: 'pro', value: false }]);
  t.equal(evaluateBoolean(thresholdFirst, req('b', 'x', { plan: 'pro' })).enabled, true);
  t.same(evaluateBoolean(one([{}, {}]), req('b', 'x')).reason, 'DEFAULT_EVALUATION_REASON');
});

t.test('errors', async (t) => {
  const s = snapshot({ default: { flags: [variantFlag({ key: 'v', variants: ['a'] }), booleanFlag({ key: 'b' })] } });
  const check = (fn: () => unknown, code: number, message: string) => {
    t.throws(fn, { code, message });
    try {
      fn();
    } catch (e) {
      t.ok(e instanceof VexilError);
    }
  };
  check(() => evaluateBoolean(s, req('v', 'x')), 3, 'flag type VARIANT_FLAG_TYPE invalid');
  check(() => evaluateBoolean(s, req('b', 'x', {}, 'other')), 5, 'namespace "other" not found');
  check(() => evaluateBoolean(s, req('zzz', 'x')), 5, 'flag "default/zzz" not found');
  t.equal(evaluateBoolean(s, req('b', 'x', {}, 'default')).flagKey, 'b');
});
