/**
 * uniformOutcome (src/state/checks/uniform-outcome.ts): on fixtures/stale/state, each flag that
 * serves one outcome to everyone and each near miss; then held against the evaluators: over random
 * valid states (test/oracle's generator), every flag reported uniform answers that outcome to
 * 300 random entities and contexts, and every fixture near miss answers at least two outcomes.
 */
import t from 'tap';
import { evaluateBoolean, evaluateVariant } from '../../../src/evaluation/index.js';
import type { Flag, Snapshot } from '../../../src/model/snapshot.js';
import { load } from '../../../src/state/load.js';
import { describeOutcome, uniformOutcome, type UniformOutcome } from '../../../src/state/checks/uniform-outcome.js';
import { loadIntoVexil, stateFor } from '../../oracle/run.js';
import { mulberry32 } from '../../support/prng.js';
import { randomContext, randomEntityId, toFeaturesYaml } from '../../support/random-state.js';
import { stateFile } from '../../support/state-fixture.js';
import { REPO } from '../../cli/run-cli.js';

const fixture = load([stateFile(`${REPO}fixtures/stale/state`, 'flags.features.yml')], { reference: 'main', revision: 'r1' }).snapshot!;
const flag = (key: string) => fixture.namespaces.get('default')!.flags.get(key)!;

/** What one evaluation answers, in the terms of UniformOutcome. */
function answer(s: Snapshot, f: Flag, entityId: string, context: Record<string, string>): string {
  const req = { namespaceKey: f.namespaceKey, flagKey: f.key, entityId, context };
  if (f.type === 'BOOLEAN_FLAG_TYPE') return String(evaluateBoolean(s, req).enabled);
  const r = evaluateVariant(s, req);
  return r.reason === 'FLAG_DISABLED_EVALUATION_REASON' ? `disabled:${r.variantKey}` : `variant:${r.variantKey}`;
}

function expected(o: UniformOutcome): string {
  return o.kind === 'boolean' ? String(o.value) : `${o.kind}:${o.variant}`;
}

t.test('fixture: the uniform flags and what they serve', async (t) => {
  const uniform = [...fixture.namespaces.get('default')!.flags.values()].flatMap((f) => {
    const o = uniformOutcome(f);
    return o === undefined ? [] : [[f.key, describeOutcome(o)]];
  });
  t.same(uniform, [
    ['all-red', 'variant red'],
    ['beta-access', 'true'],
    ['blue-either-way', 'variant blue'],
    ['kill-switch', 'false'],
    ['plain-off', 'false'],
    ['switched-off', 'FLAG_DISABLED (variant v2)'],
  ]);
});

t.test('fixture near misses: not uniform, and the evaluators agree they vary', async (t) => {
  const rng = mulberry32(42);
  for (const key of ['split', 'beta-red', 'mostly-red', 'off-but-rolled-out', 'almost-all', 'old-experiment']) {
    const f = flag(key);
    t.equal(uniformOutcome(f), undefined, key);
    const seen = new Set<string>();
    for (let i = 0; i < 400 && seen.size < 2; i++) {
      seen.add(answer(fixture, f, `user-${i}`, rng() < 0.5 ? { plan: 'beta' } : {}));
    }
    t.ok(seen.size >= 2, `${key} answers ${[...seen].join(', ')}`);
  }
});

t.test('random valid states: a flag reported uniform answers its outcome to every request', async (t) => {
  const SEED = 20_261_127;
  let uniform = 0;
  let flags = 0;
  const failures: string[] = [];
  for (let s = 0; s < 60 && failures.length < 3; s++) {
    const loaded = loadIntoVexil(toFeaturesYaml(stateFor(SEED, s)));
    if (loaded.snapshot === undefined) continue;
    const rng = mulberry32(SEED + s);
    for (const ns of loaded.snapshot.namespaces.values()) {
      for (const f of ns.flags.values()) {
        flags++;
        const o = uniformOutcome(f);
        if (o === undefined) continue;
        uniform++;
        for (let i = 0; i < 300; i++) {
          const entityId = randomEntityId(rng);
          const context = randomContext(rng);
          let got: string;
          try {
            got = answer(loaded.snapshot, f, entityId, context);
          } catch (err) {
            got = `error ${(err as Error).message}`;
          }
          if (got !== expected(o)) {
            failures.push(`state ${s} ${ns.key}/${f.key}: reported ${expected(o)}, ${JSON.stringify(entityId)} ${JSON.stringify(context)} got ${got}`);
            break;
          }
        }
      }
    }
  }
  t.same(failures, []);
  t.ok(uniform >= 20, `${uniform} of ${flags} flags reported uniform`);
});
