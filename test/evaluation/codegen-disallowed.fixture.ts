/**
 * Run by codegen.test.ts under `node --disallow-code-generation-from-strings`: prepares the flags'
 * matchers, evaluates them and prints whether code was generated and the results, as one JSON line.
 */
import { interpretBoolean } from '../../src/evaluation/boolean.js';
import { CODEGEN_AVAILABLE, prepareMatcher } from '../../src/evaluation/codegen.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { interpretVariant } from '../../src/evaluation/variant.js';
import { booleanFlag, req, segment, snapshot, variantFlag } from './fixture.js';

const segs = [segment('s', 'ANY_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'plan', 'eq', 'pro'], ['NUMBER_COMPARISON_TYPE', 'age', 'gt', '30']])];
const s = snapshot({
  default: {
    segments: segs,
    flags: [
      variantFlag({ key: 'v', variants: ['a', 'b'], rules: [{ segment: 's', distributions: [['a', 50], ['b', 50]] }] }),
      booleanFlag({ key: 'b', rollouts: [{ segment: 's', value: true }, { threshold: 40, value: true }] }),
    ],
  },
});
const flags = s.namespaces.get('default')!.flags;
const v = flags.get('v')!.compiled;
const b = flags.get('b')!.compiled;
prepareMatcher(v);
prepareMatcher(b);
const results: string[] = [];
const expected: string[] = [];
for (let i = 0; i < 24; i++) {
  const ctx = { plan: i % 3 === 0 ? 'pro' : 'free', age: String(i * 2) };
  const r = req('v', `user-${i}`, ctx);
  results.push(JSON.stringify(evaluateVariant(s, r)), JSON.stringify(evaluateBoolean(s, { ...r, flagKey: 'b' })));
  expected.push(JSON.stringify(interpretVariant(v, v.variant!, r.entityId, ctx)), JSON.stringify(interpretBoolean(b, b.boolean!, r.entityId, ctx)));
}
const generated = v.variant!.matcher.fn !== null || b.boolean!.matcher.fn !== null;
process.stdout.write(`${JSON.stringify({ available: CODEGEN_AVAILABLE, generated, results, expected })}\n`);
