/**
 * The impact's outcome evaluation (src/diff/outcomes.ts: the interpreter's procedure with segment
 * matches remembered per distinct context) against the public evaluators, entry by entry, over
 * random valid states (the oracle's generator): every flag of every state over a sample where
 * contexts repeat (the same object, and equal copies), so remembered matches are reused.
 */
import t from 'tap';
import { prepareMatcher } from '../../src/evaluation/codegen.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { prepareSample, sampleOutcomes } from '../../src/diff/outcomes.js';
import type { SampleContext } from '../../src/diff/types.js';
import { loadIntoVexil, stateFor } from '../oracle/run.js';
import { evalRng, randomContext, randomEntityId, toFeaturesYaml } from '../support/random-state.js';

function outcomeOf(snapshotFlag: () => { variantKey: string } | { enabled: boolean }): string {
  try {
    const r = snapshotFlag();
    if ('variantKey' in r) return r.variantKey === '' ? '(none)' : r.variantKey;
    return r.enabled ? 'true' : 'false';
  } catch (err) {
    return `error: ${(err as Error).message}`;
  }
}

t.test('random states: every entry of the sample has the public evaluator\'s outcome', async (t) => {
  const SEED = 14_0507;
  const STATES = 120;
  let compared = 0;
  let throwing = 0;
  const mismatches: string[] = [];
  for (let i = 0; i < STATES && mismatches.length < 3; i++) {
    const loaded = loadIntoVexil(toFeaturesYaml(stateFor(SEED, i)));
    if (!loaded.snapshot) throw new Error(`state ${i} did not load: ${JSON.stringify(loaded.problems)}`);
    const s = loaded.snapshot;
    // 12 contexts over 90 entries: each context object reused, and an equal copy of each too.
    const rng = evalRng(SEED, i, 0);
    const contexts = Array.from({ length: 6 }, () => randomContext(rng));
    const copies = contexts.map((c) => Object.assign(Object.create(null) as Record<string, string>, c));
    const pool = [...contexts, ...copies];
    const entries: SampleContext[] = Array.from({ length: 90 }, (_, k) => ({ entityId: randomEntityId(rng), context: pool[k % pool.length]! }));
    const sample = prepareSample(entries);
    t.ok(sample.distinctContexts <= 12, 'equal contexts share a number');
    for (const [nsKey, ns] of s.namespaces) {
      for (const [flagKey, flag] of ns.flags) {
        // Half the flags with their generated matcher, so the public path runs both evaluators.
        if (flagKey.length % 2 === 0) prepareMatcher(flag.compiled);
        const expected = entries.map((e) => {
          const req = { namespaceKey: nsKey, flagKey, entityId: e.entityId, context: e.context };
          return outcomeOf(() => (flag.compiled.variant !== null ? evaluateVariant(s, req) : evaluateBoolean(s, req)));
        });
        const error = expected.find((o) => o.startsWith('error: '));
        let got: string[];
        try {
          got = sampleOutcomes(flag, sample);
        } catch (err) {
          got = [`error: ${(err as Error).message}`];
        }
        compared++;
        if (error !== undefined) {
          // The evaluators throw for this flag (an unknown constraint type reached): so does the impact.
          throwing++;
          if (got.length !== 1 || got[0] !== error) mismatches.push(`state ${i} ${nsKey}/${flagKey}: expected ${error}, got ${got.slice(0, 3).join(', ')}`);
        } else if (JSON.stringify(got) !== JSON.stringify(expected)) {
          const k = got.findIndex((o, j) => o !== expected[j]);
          mismatches.push(`state ${i} ${nsKey}/${flagKey} entry ${k} ${JSON.stringify(entries[k])}: expected ${expected[k]}, got ${got[k]}`);
        }
      }
    }
  }
  t.same(mismatches, [], 'no difference');
  t.ok(compared > STATES * 3, `compared ${compared} flags × 90 entries (${throwing} throwing)`);
});

t.test('contexts are numbered by content: same object or equal copy share a number', async (t) => {
  const a = { plan: 'pro', age: '30' };
  const n = Object.assign(Object.create(null) as Record<string, string>, a);
  const sample = prepareSample([
    { entityId: '1', context: a },
    { entityId: '2', context: { plan: 'pro', age: '30' } },
    { entityId: '3', context: a },
    { entityId: '4', context: n },
    { entityId: '5', context: { plan: 'pro' } },
    { entityId: '6', context: { plan: 'pro', age: '3' } },
    { entityId: '7', context: { 'plan3:pro': '', age: '30' } },
    { entityId: '8', context: { age: '30', plan: 'pro' } },
  ]);
  // Another prototype, other values or keys, or the same entries in another order: another number
  // (the last only costs sharing, never a wrong match).
  t.same([...sample.contextIds], [0, 0, 0, 1, 2, 3, 4, 5]);
  t.equal(sample.distinctContexts, 6);
});
