/** Variant evaluation: one test per row of the §2.2 decision table, bucketing (§2.3), segments (§2.5), errors (§2.1). */
import t from 'tap';
import { VexilError } from '../../src/errors.js';
import { crc32String, variantBucket } from '../../src/evaluation/hash.js';
import { evaluateVariant } from '../../src/evaluation/index.js';
import { booleanFlag, req, segment, snapshot, variantFlag, type RuleSpec } from './fixture.js';

const everyone = segment('everyone', 'ALL_MATCH_TYPE');
const pro = segment('pro', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'plan', 'eq', 'pro']]);
const eu = segment('eu', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'region', 'eq', 'eu']]);
const beta = segment('beta', 'ALL_MATCH_TYPE', [['BOOLEAN_COMPARISON_TYPE', 'beta', 'true']]);
const segments = [everyone, pro, eu, beta];

function one(spec: { enabled?: boolean; defaultVariant?: string; rules?: RuleSpec[] }) {
  return snapshot({
    default: {
      segments,
      flags: [variantFlag({ key: 'f', variants: ['a', ['b', '{"k":"v"}'], 'c'], ...spec })],
    },
  });
}

/** An entity id whose bucket for flag `flagKey` satisfies `pred`. */
function entityWithBucket(flagKey: string, pred: (b: number) => boolean): string {
  const seed = crc32String(flagKey, 0);
  for (let i = 0; ; i++) if (pred(variantBucket(seed, `e${i}`))) return `e${i}`;
}

t.test('decision table', async (t) => {
  t.test('flag disabled, no default → false, FLAG_DISABLED, "", []', async (t) => {
    const s = one({ enabled: false, rules: [{ segment: 'everyone', distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x')), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'FLAG_DISABLED_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
  });
  t.test('flag disabled, default variant → false, FLAG_DISABLED, default key and attachment', async (t) => {
    const s = one({ enabled: false, defaultVariant: 'b', rules: [{ segment: 'everyone', distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x')), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'FLAG_DISABLED_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
  t.test('no rules, no default → false, UNKNOWN', async (t) => {
    t.same(evaluateVariant(one({}), req('f', 'x')), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'UNKNOWN_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
  });
  t.test('no rule matched, no default → false, UNKNOWN', async (t) => {
    const s = one({ rules: [{ segment: 'pro', distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'free' })), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'UNKNOWN_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
  });
  t.test('no rules, default → false, DEFAULT, default key', async (t) => {
    t.same(evaluateVariant(one({ defaultVariant: 'b' }), req('f', 'x')), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
  t.test('no rule matched, default → false, DEFAULT, default key', async (t) => {
    const s = one({ defaultVariant: 'b', rules: [{ segment: 'pro', distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x')), {
      flagKey: 'f', match: false, segmentKeys: [], reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
  t.test('rule matched, no distributions → TRUE, MATCH, "" (no default)', async (t) => {
    const s = one({ rules: [{ segment: 'pro' }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro' })), {
      flagKey: 'f', match: true, segmentKeys: ['pro'], reason: 'MATCH_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
  });
  t.test('rule matched, only 0% distributions, default → TRUE, MATCH, default key', async (t) => {
    const s = one({ defaultVariant: 'b', rules: [{ segment: 'pro', distributions: [['a', 0], ['c', 0]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro' })), {
      flagKey: 'f', match: true, segmentKeys: ['pro'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
  t.test('rule matched, bucket outside all distributions → false, no fall-through, keys set', async (t) => {
    const id = entityWithBucket('f', (b) => b >= 100);
    // A later rule that would match is NOT consulted.
    const s = one({ rules: [{ segment: 'pro', distributions: [['a', 10]] }, { segment: 'everyone', distributions: [['c', 100]] }] });
    t.same(evaluateVariant(s, req('f', id, { plan: 'pro' })), {
      flagKey: 'f', match: false, segmentKeys: ['pro'], reason: 'UNKNOWN_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
    const sd = one({ defaultVariant: 'b', rules: [{ segment: 'pro', distributions: [['a', 10]] }, { segment: 'everyone', distributions: [['c', 100]] }] });
    t.same(evaluateVariant(sd, req('f', id, { plan: 'pro' })), {
      flagKey: 'f', match: false, segmentKeys: ['pro'], reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
  t.test('rule matched, bucket inside → true, MATCH, picked variant with its attachment', async (t) => {
    const s = one({ defaultVariant: 'a', rules: [{ segment: 'pro', distributions: [['b', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro' })), {
      flagKey: 'f', match: true, segmentKeys: ['pro'], reason: 'MATCH_EVALUATION_REASON', variantKey: 'b', variantAttachment: '{"k":"v"}',
    });
  });
});

t.test('rules are tried in rank order; the first matching rule decides', async (t) => {
  const s = one({ rules: [{ segment: 'pro', distributions: [['a', 100]] }, { segment: 'everyone', distributions: [['c', 100]] }] });
  t.equal(evaluateVariant(s, req('f', 'x', { plan: 'pro' })).variantKey, 'a');
  t.equal(evaluateVariant(s, req('f', 'x', { plan: 'free' })).variantKey, 'c');
});

t.test('bucketing (§2.3)', async (t) => {
  t.test('boundaries: b < cumulative bound', async (t) => {
    const rules: RuleSpec[] = [{ segment: 'everyone', distributions: [['a', 25], ['b', 25], ['c', 50]] }];
    const s = one({ rules });
    for (const [lo, hi, want] of [[0, 249, 'a'], [250, 499, 'b'], [500, 999, 'c']] as const) {
      t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === lo))).variantKey, want, `bucket ${lo}`);
      t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === hi))).variantKey, want, `bucket ${hi}`);
    }
  });
  t.test('widths truncate one by one: 33.33/33.33/33.34 → 333/333/333, bucket 999 gets no variant', async (t) => {
    const s = one({ rules: [{ segment: 'everyone', distributions: [['a', 33.33], ['b', 33.33], ['c', 33.34]] }] });
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 998))).variantKey, 'c');
    const r = evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 999)));
    t.same([r.match, r.variantKey, r.segmentKeys], [false, '', ['everyone']]);
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 332))).variantKey, 'a');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 333))).variantKey, 'b');
  });
  t.test('float32 arithmetic: 0.1 * 10 → width 1; 14.3 → 143; 0.05 → width 0, never selected', async (t) => {
    const s = one({ rules: [{ segment: 'everyone', distributions: [['a', 0.05], ['b', 0.1], ['c', 14.3]] }] });
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 0))).variantKey, 'b');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 1))).variantKey, 'c');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 143))).variantKey, 'c');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 144))).match, false);
  });
  t.test('float32 on both sides of the product: 0.7 → 7 (not 6), 12.99999999 → float32 13 → 130', async (t) => {
    const s = one({ rules: [{ segment: 'everyone', distributions: [['a', 0.7], ['b', 12.99999999], ['c', 50]] }] });
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 6))).variantKey, 'a');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 7))).variantKey, 'b');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 136))).variantKey, 'b');
    t.equal(evaluateVariant(s, req('f', entityWithBucket('f', (b) => b === 137))).variantKey, 'c');
  });
  t.test('sum below 100 leaves a tail without variant; above 100 starves the later ones', async (t) => {
    const under = one({ rules: [{ segment: 'everyone', distributions: [['a', 40], ['b', 40]] }] });
    t.equal(evaluateVariant(under, req('f', entityWithBucket('f', (b) => b >= 800))).match, false);
    const over = one({ rules: [{ segment: 'everyone', distributions: [['a', 80], ['b', 80]] }] });
    t.equal(evaluateVariant(over, req('f', entityWithBucket('f', (b) => b >= 800))).variantKey, 'b');
    t.equal(evaluateVariant(over, req('f', entityWithBucket('f', (b) => b < 800))).variantKey, 'a');
  });
  t.test('the bucket does not depend on the rule or context', async (t) => {
    const id = entityWithBucket('f', (b) => b < 500);
    const s = one({ rules: [{ segment: 'pro', distributions: [['a', 50], ['b', 50]] }, { segment: 'everyone', distributions: [['a', 50], ['c', 50]] }] });
    t.equal(evaluateVariant(s, req('f', id, { plan: 'pro' })).variantKey, 'a');
    t.equal(evaluateVariant(s, req('f', id, { plan: 'free' })).variantKey, 'a');
  });
});

t.test('segments of a rule (§2.5)', async (t) => {
  t.test('OR: any matched; segmentKeys = every matched segment, in declared order', async (t) => {
    const s = one({ rules: [{ segment: { keys: ['pro', 'eu', 'beta'] }, distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro', region: 'eu', beta: 'true' })).segmentKeys, ['pro', 'eu', 'beta']);
    t.same(evaluateVariant(s, req('f', 'x', { region: 'eu' })).segmentKeys, ['eu']);
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro', beta: 't' })).segmentKeys, ['pro', 'beta']);
    t.same(evaluateVariant(s, req('f', 'x', { region: 'eu', beta: '1' })).segmentKeys, ['eu', 'beta']);
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro', region: 'eu' })).segmentKeys, ['pro', 'eu']);
    const none = evaluateVariant(s, req('f', 'x', {}));
    t.same([none.match, none.segmentKeys], [false, []]);
  });
  t.test('a partial OR match that misses every distribution still reports its keys', async (t) => {
    const id = entityWithBucket('f', (b) => b >= 100);
    const s = one({ defaultVariant: 'c', rules: [{ segment: { keys: ['pro', 'eu'] }, distributions: [['a', 10]] }] });
    t.same(evaluateVariant(s, req('f', id, { region: 'eu' })), {
      flagKey: 'f', match: false, segmentKeys: ['eu'], reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'c', variantAttachment: 'null',
    });
    const nd = one({ rules: [{ segment: { keys: ['pro', 'eu'] } }] });
    t.same(evaluateVariant(nd, req('f', id, { region: 'eu' })), {
      flagKey: 'f', match: true, segmentKeys: ['eu'], reason: 'MATCH_EVALUATION_REASON', variantKey: '', variantAttachment: '',
    });
  });
  t.test('AND: every segment must match', async (t) => {
    const s = one({ rules: [{ segment: { keys: ['pro', 'eu'], op: 'AND_SEGMENT_OPERATOR' }, distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro', region: 'eu' })).segmentKeys, ['pro', 'eu']);
    t.equal(evaluateVariant(s, req('f', 'x', { plan: 'pro' })).match, false);
    t.equal(evaluateVariant(s, req('f', 'x', { region: 'eu' })).match, false);
  });
  t.test('empty key set: AND matches everyone (segmentKeys []), OR never matches', async (t) => {
    const and = one({ rules: [{ segment: { keys: [], op: 'AND_SEGMENT_OPERATOR' }, distributions: [['a', 100]] }] });
    t.same(evaluateVariant(and, req('f', 'x')), {
      flagKey: 'f', match: true, segmentKeys: [], reason: 'MATCH_EVALUATION_REASON', variantKey: 'a', variantAttachment: 'null',
    });
    const or = one({ rules: [{ segment: { keys: [] }, distributions: [['a', 100]] }] });
    t.same([evaluateVariant(or, req('f', 'x')).match, evaluateVariant(or, req('f', 'x')).reason], [false, 'UNKNOWN_EVALUATION_REASON']);
  });
  t.test('a repeated key counts once (Flipt keys segments by key)', async (t) => {
    const s = one({ rules: [{ segment: { keys: ['pro', 'pro'], op: 'AND_SEGMENT_OPERATOR' }, distributions: [['a', 100]] }] });
    t.same(evaluateVariant(s, req('f', 'x', { plan: 'pro' })).segmentKeys, ['pro']);
  });
  t.test('ALL vs ANY match types, and zero constraints for both', async (t) => {
    const all = segment('s', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'a', 'eq', '1'], ['STRING_COMPARISON_TYPE', 'b', 'eq', '2']]);
    const any = segment('s', 'ANY_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'a', 'eq', '1'], ['STRING_COMPARISON_TYPE', 'b', 'eq', '2']]);
    const flag = variantFlag({ key: 'f', variants: ['a'], rules: [{ segment: 's', distributions: [['a', 100]] }] });
    const sAll = snapshot({ default: { segments: [all], flags: [flag] } });
    const sAny = snapshot({ default: { segments: [any], flags: [flag] } });
    t.equal(evaluateVariant(sAll, req('f', 'x', { a: '1', b: '2' })).match, true);
    t.equal(evaluateVariant(sAll, req('f', 'x', { a: '1' })).match, false);
    t.equal(evaluateVariant(sAny, req('f', 'x', { b: '2' })).match, true);
    t.equal(evaluateVariant(sAny, req('f', 'x', { c: '3' })).match, false);
    for (const mt of ['ALL_MATCH_TYPE', 'ANY_MATCH_TYPE'] as const) {
      const s = snapshot({ default: { segments: [segment('s', mt)], flags: [flag] } });
      t.equal(evaluateVariant(s, req('f', 'anyone')).match, true, `${mt} with no constraints`);
    }
  });
  t.test('a constraint that cannot parse just does not match (no error)', async (t) => {
    const s = snapshot({
      default: {
        segments: [
          segment('n', 'ALL_MATCH_TYPE', [['NUMBER_COMPARISON_TYPE', 'age', 'gt', 'not-a-number']]),
          segment('d', 'ANY_MATCH_TYPE', [['DATETIME_COMPARISON_TYPE', 'at', 'gt', '2006-01-02'], ['STRING_COMPARISON_TYPE', 'p', 'eq', 'x']]),
        ],
        flags: [variantFlag({ key: 'f', variants: ['a'], rules: [{ segment: 'n', distributions: [['a', 100]] }, { segment: 'd', distributions: [['a', 100]] }] })],
      },
    });
    t.same(evaluateVariant(s, req('f', 'x', { age: '30' })).reason, 'UNKNOWN_EVALUATION_REASON');
    t.same(evaluateVariant(s, req('f', 'x', { at: 'yesterday', p: 'x' })).segmentKeys, ['d']);
    t.same(evaluateVariant(s, req('f', 'x', { at: 'yesterday' })).match, false);
  });
});

t.test('errors (§2.1)', async (t) => {
  const s = snapshot({
    default: { flags: [booleanFlag({ key: 'bool' }), variantFlag({ key: 'var', variants: ['a'] })] },
    team: { flags: [variantFlag({ key: 'var', variants: ['a'] }, 'team')] },
  });
  const expectError = (fn: () => unknown, code: number, message: string) => {
    try {
      fn();
      t.fail(`expected ${message}`);
    } catch (e) {
      t.ok(e instanceof VexilError, 'a VexilError');
      t.match(e, { code, message });
      t.equal((e as Error).message, message);
    }
  };
  expectError(() => evaluateVariant(s, req('var', 'x', {}, 'nope')), 5, 'namespace "nope" not found');
  expectError(() => evaluateVariant(s, req('missing', 'x')), 5, 'flag "default/missing" not found');
  expectError(() => evaluateVariant(s, req('missing', 'x', {}, 'team')), 5, 'flag "team/missing" not found');
  expectError(() => evaluateVariant(s, req('', 'x')), 5, 'flag "default" not found');
  expectError(() => evaluateVariant(s, req('bool', 'x')), 3, 'flag type BOOLEAN_FLAG_TYPE invalid');
  expectError(() => evaluateVariant(s, req('x"y', 'x', {}, 'a\tb')), 5, 'namespace "a\\tb" not found');
  // Empty namespaceKey is `default`; a named namespace is looked up as is.
  t.equal(evaluateVariant(s, req('var', 'x', {}, '')).flagKey, 'var');
  t.equal(evaluateVariant(s, req('var', 'x', {}, 'default')).flagKey, 'var');
  t.equal(evaluateVariant(s, req('var', 'x', {}, 'team')).flagKey, 'var');
  // No request validation: an empty entity id is evaluated like any other.
  t.equal(evaluateVariant(s, req('var', '')).reason, 'UNKNOWN_EVALUATION_REASON');
});

t.test('results are frozen; repeated full matches share one precomputed object', async (t) => {
  const s = one({ rules: [{ segment: 'everyone', distributions: [['a', 100]] }] });
  const a = evaluateVariant(s, req('f', 'x'));
  const b = evaluateVariant(s, req('f', 'y'));
  t.equal(a, b);
  t.ok(Object.isFrozen(a) && Object.isFrozen(a.segmentKeys));
});

t.test('context lookups ignore inherited properties', async (t) => {
  const s = snapshot({
    default: {
      segments: [segment('s', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'constructor', 'empty'], ['STRING_COMPARISON_TYPE', 'toString', 'notpresent']])],
      flags: [variantFlag({ key: 'f', variants: ['a'], rules: [{ segment: 's', distributions: [['a', 100]] }] })],
    },
  });
  const r = evaluateVariant(s, req('f', 'x', {}));
  t.equal(r.match, false, '`notpresent` is not a string operator, so the ALL segment fails');
  const s2 = snapshot({
    default: {
      segments: [segment('s', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'constructor', 'empty'], ['NUMBER_COMPARISON_TYPE', 'toString', 'notpresent']])],
      flags: [variantFlag({ key: 'f', variants: ['a'], rules: [{ segment: 's', distributions: [['a', 100]] }] })],
    },
  });
  t.equal(evaluateVariant(s2, req('f', 'x', {})).match, true, 'inherited members read as absent');
  t.equal(evaluateVariant(s2, req('f', 'x', JSON.parse('{"constructor":"c"}') as Record<string, string>)).match, false);
});
