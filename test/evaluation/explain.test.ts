/**
 * The explain trace (src/evaluation/explain.ts) against the evaluators: over the examples with
 * random entity ids and contexts, and over random valid states with random requests, its decision
 * must equal evaluateVariant/evaluateBoolean's (same result, or the same error), and the trace
 * must be consistent with it (the deciding rule, the matched segments, the bucket range).
 */
import t from 'tap';
import fc from 'fast-check';
import { fileURLToPath } from 'node:url';
import { VexilError } from '../../src/errors.js';
import {
  explain,
  type Explanation,
  type SegmentSetExplanation,
} from '../../src/evaluation/explain.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import type { EvaluationRequest } from '../../src/model/evaluation-request.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../src/sources/local.js';
import { readState } from '../../src/store/read-state.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { loadIntoVexil, stateFor } from '../oracle/run.js';
import { evalRng, randomRequest, toFeaturesYaml } from '../support/random-state.js';
import { STATE_LIMITS } from '../support/config-defaults.js';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

async function examplesSnapshot(): Promise<Snapshot> {
  const source = createLocalSource({ ...STATE_LIMITS, path: EXAMPLES });
  const rev = (await source.refs()).get(LOCAL_REFERENCE)!;
  const result = await readState(await source.files(rev), { ...STATE_LIMITS, reference: LOCAL_REFERENCE });
  if (result.snapshot === undefined) throw new Error(`examples invalid: ${JSON.stringify(result.problems)}`);
  return result.snapshot;
}

type Outcome = { ok: unknown } | { error: { code: number; message: string } };

function outcome(fn: () => unknown): Outcome {
  try {
    return { ok: fn() };
  } catch (err) {
    if (err instanceof VexilError) return { error: { code: err.code, message: err.message } };
    throw err;
  }
}

/** The trace agrees with its own decision (independent of the evaluators). */
function checkConsistency(e: Explanation): string | undefined {
  const setOk = (s: SegmentSetExplanation): string | undefined => {
    for (const seg of s.segments) {
      const hits = seg.constraints.filter((c) => c.matched).length;
      const want = seg.constraints.length === 0 || (seg.matchType === 'ALL_MATCH_TYPE' ? hits === seg.constraints.length : hits > 0);
      if (want !== seg.matched) return `segment ${seg.key}: matched=${seg.matched} but constraints say ${want}`;
    }
    const keys = s.segments.filter((x) => x.matched).map((x) => x.key);
    const want = s.operator === 'AND_SEGMENT_OPERATOR' ? keys.length === s.segments.length : keys.length > 0;
    if (want !== s.matched) return `set matched=${s.matched} but segments say ${want}`;
    return undefined;
  };
  if (e.flagType === 'VARIANT_FLAG_TYPE') {
    if (e.rules.length > e.ruleCount) return 'more rules considered than declared';
    for (const [i, r] of e.rules.entries()) {
      const bad = setOk(r.segments);
      if (bad !== undefined) return `rule ${r.rank}: ${bad}`;
      if (r.decided !== r.segments.matched) return `rule ${r.rank}: decided=${r.decided}, matched=${r.segments.matched}`;
      if (r.decided && i !== e.rules.length - 1) return `rule ${r.rank} decided but later rules were considered`;
      if (r.bucket !== undefined) {
        const b = r.bucket;
        if (!(b.value >= 0 && b.value < 1000)) return `bucket ${b.value} out of range`;
        let from = 0;
        for (const d of b.distributions) {
          // A tiny rollout (0.05 %) truncates to an empty range: allowed.
          if (d.from !== from || d.to < d.from) return `distribution ranges not contiguous: ${JSON.stringify(b.distributions)}`;
          from = d.to;
        }
        const hit = b.distributions.find((d) => b.value >= d.from && b.value < d.to);
        if ((hit?.variantKey ?? null) !== b.variantKey) return `bucket ${b.value} names ${b.variantKey}, ranges say ${hit?.variantKey}`;
      }
    }
    const d = e.decision;
    if (d.by === 'rule') {
      const last = e.rules.at(-1);
      if (last?.rank !== d.rank || !last.decided) return `decision names rule ${d.rank}, trace ends at ${last?.rank}`;
      if (JSON.stringify([...e.result.segmentKeys]) !== JSON.stringify(last.segments.matchedKeys)) return 'segmentKeys differ from the deciding set';
      if (d.outcome === 'distribution' && e.result.variantKey !== last.bucket?.variantKey) return 'variant differs from the bucket';
    } else if (e.rules.some((r) => r.decided)) return `decision ${d.by} but a rule decided`;
  } else {
    for (const [i, r] of e.rollouts.entries()) {
      if (r.segments !== undefined) {
        const bad = setOk(r.segments);
        if (bad !== undefined) return `rollout ${r.rank}: ${bad}`;
      }
      if (r.threshold !== undefined && r.threshold.matched !== r.decided) return `rollout ${r.rank}: threshold matched but did not decide`;
      if (r.decided && i !== e.rollouts.length - 1) return `rollout ${r.rank} decided but later rollouts were considered`;
    }
    const d = e.decision;
    if (d.by === 'rollout' && e.rollouts.at(-1)?.rank !== d.rank) return `decision names rollout ${d.rank}`;
  }
  return undefined;
}

/** explain() agrees with the evaluator of the flag's type on this request (result or error). */
function compare(snapshot: Snapshot, req: EvaluationRequest): string | undefined {
  const variant = outcome(() => evaluateVariant(snapshot, req));
  const boolean = outcome(() => evaluateBoolean(snapshot, req));
  const e = outcome(() => explain(snapshot, req));
  if ('ok' in e) {
    const x = e.ok as Explanation;
    const own = x.flagType === 'VARIANT_FLAG_TYPE' ? variant : boolean;
    if (JSON.stringify({ ok: x.result }) !== JSON.stringify(own)) {
      return `${x.flagType}: evaluator ${JSON.stringify(own)} vs explain ${JSON.stringify(x.result)}`;
    }
    return checkConsistency(x);
  }
  return JSON.stringify(e) === JSON.stringify(variant) ? undefined : `explain() error ${JSON.stringify(e)}`;
}

t.test('examples: explain decides as the evaluators, for random entities and contexts', async (t) => {
  const snapshot = await examplesSnapshot();
  const flags: Array<[string, string]> = [];
  for (const [ns, n] of snapshot.namespaces) for (const key of n.flags.keys()) flags.push([ns, key]);
  flags.push(['default', 'missing'], ['nowhere', 'color-theme']);

  const value = fc.oneof(
    fc.constantFrom('', 'true', 'false', 'pro', 'enterprise', 'free', 'ios', 'android', 'web-app', 'DE', 'FR', 'US', 'EUR', 'JPY', 'bot', 'Mozilla'),
    fc.constantFrom('1', '2', '3', '4', '49.5', '50', '199', '200', '250', '2022-12-31', '2023-01-01', '2023-06-01T10:00:00Z', '2024-01-01T00:00:00Z'),
    fc.string({ maxLength: 6 }),
  );
  const keys = ['beta_opt_in', 'plan', 'platform', 'prefers_contrast', 'client', 'signed_up_at', 'country', 'cart_total', 'currency', 'item_count', 'api_version', 'user_agent'];
  const entity = fc.oneof(fc.constantFrom('alice@example.com', 'qa-bot-1', 'qa-bot-2', '', ' @example.com '), fc.string({ maxLength: 12 }), fc.integer({ min: 0, max: 99999 }).map((n) => `user-${n}`));
  let checked = 0;
  fc.assert(
    fc.property(fc.constantFrom(...flags), entity, fc.dictionary(fc.constantFrom(...keys), value), ([ns, flag], entityId, context) => {
      const problem = compare(snapshot, { namespaceKey: ns, flagKey: flag, entityId, context });
      checked++;
      return problem === undefined ? true : (t.fail(problem, { ns, flag, entityId, context }), false);
    }),
    { seed: 20_261_126, numRuns: 3000 },
  );
  t.equal(checked, 3000);
});

t.test('random valid states: explain decides as the evaluators', async (t) => {
  const SEED = 7_091_983;
  let cases = 0;
  const failures: string[] = [];
  const seen = new Map<string, number>();
  for (let s = 0; s < 150 && failures.length < 3; s++) {
    const state = stateFor(SEED, s);
    const loaded = loadIntoVexil(toFeaturesYaml(state));
    if (loaded.snapshot === undefined) {
      failures.push(`state ${s} did not load: ${loaded.problems.map((p) => p.message).join('; ')}`);
      continue;
    }
    for (let j = 0; j < 60; j++) {
      const r = randomRequest(evalRng(SEED, s, j), state);
      const problem = compare(loaded.snapshot, { namespaceKey: r.namespaceKey, flagKey: r.flagKey, entityId: r.entityId, context: r.context });
      cases++;
      if (problem !== undefined) failures.push(`state ${s} request ${j}: ${problem}`);
      const e = outcome(() => explain(loaded.snapshot!, { namespaceKey: r.namespaceKey, flagKey: r.flagKey, entityId: r.entityId, context: r.context }));
      if ('ok' in e) {
        const d = (e.ok as Explanation).decision;
        const kind = d.by === 'rule' ? `rule ${d.outcome}` : d.by === 'rollout' ? `rollout ${d.type}` : d.by;
        seen.set(kind, (seen.get(kind) ?? 0) + 1);
      }
    }
  }
  t.same(failures, [], 'no difference');
  t.equal(cases, 150 * 60);
  // Worth something only if every kind of decision was reached.
  for (const kind of ['flag-disabled', 'rule distribution', 'rule no-distributions', 'rule outside-distributions', 'no-rule-matched', 'rollout threshold', 'rollout segment', 'no-rollout-matched']) {
    t.ok((seen.get(kind) ?? 0) >= 10, `decided by ${kind}: ${seen.get(kind) ?? 0} cases`);
  }
});

t.test('the trace of a rule that decided by its bucket', async (t) => {
  const snapshot = await examplesSnapshot();
  const e = explain(snapshot, {
    namespaceKey: '',
    flagKey: 'color-theme',
    entityId: 'user-1',
    context: { beta_opt_in: 'true', plan: 'pro', platform: 'ios' },
  });
  if (e.flagType !== 'VARIANT_FLAG_TYPE') throw new Error('variant flag expected');
  t.equal(e.namespaceKey, 'default');
  t.equal(e.ruleCount, 3);
  t.equal(e.rules.length, 2, 'rule 3 is not evaluated');
  t.match(e.rules[0], {
    rank: 1,
    decided: false,
    segments: { matched: false, matchedKeys: [], segments: [{ key: 'internal-users', matchType: 'ANY_MATCH_TYPE', matched: false }] },
  });
  t.same(e.rules[0]!.segments.segments[0]!.constraints[0], {
    type: 'ENTITY_ID_COMPARISON_TYPE',
    property: 'entityId',
    operator: 'suffix',
    expected: '@example.com',
    actual: 'user-1',
    matched: false,
  });
  t.same(e.rules[1]!.bucket, {
    value: 218,
    distributions: [
      { variantKey: 'dark', from: 0, to: 500 },
      { variantKey: 'light', from: 500, to: 1000 },
    ],
    variantKey: 'dark',
  });
  t.same(e.rules[1]!.segments.matchedKeys, ['beta-testers', 'mobile-users']);
  const platform = e.rules[1]!.segments.segments[1]!.constraints;
  t.same(
    platform.map((c) => [c.property, c.operator, c.expected, c.actual, c.matched]),
    [
      ['platform', 'eq', 'ios', 'ios', true],
      ['platform', 'eq', 'android', 'ios', false],
    ],
  );
  t.same(e.decision, { by: 'rule', rank: 2, outcome: 'distribution' });
  t.equal(e.result.variantKey, 'dark');
});

t.test('boolean traces: a missed segment, then a threshold; absent context values are null', async (t) => {
  const snapshot = await examplesSnapshot();
  const inRollout = explain(snapshot, { namespaceKey: 'default', flagKey: 'new-search', entityId: 'user-5', context: {} });
  if (inRollout.flagType !== 'BOOLEAN_FLAG_TYPE') throw new Error('boolean flag expected');
  t.equal(inRollout.rollouts.length, 2);
  t.match(inRollout.rollouts[0], { rank: 1, type: 'segment', value: true, decided: false });
  t.same(inRollout.rollouts[1], { rank: 2, type: 'threshold', value: true, threshold: { percentage: 25, bucket: 17, matched: true }, decided: true });
  t.same(inRollout.decision, { by: 'rollout', rank: 2, type: 'threshold' });

  const out = explain(snapshot, { namespaceKey: 'checkout', flagKey: 'express-shipping', entityId: 'user-9', context: {} });
  if (out.flagType !== 'BOOLEAN_FLAG_TYPE') throw new Error('boolean flag expected');
  t.same(out.decision, { by: 'no-rollout-matched' });
  t.same(out.result, { flagKey: 'express-shipping', enabled: false, reason: 'DEFAULT_EVALUATION_REASON', segmentKeys: [] });
  const cart = out.rollouts[0]!.segments!.segments[0]!.constraints[0]!;
  t.same([cart.property, cart.actual, cart.matched], ['cart_total', null, false]);
});

t.test('disabled variant flag: no rule is considered', async (t) => {
  const snapshot = await examplesSnapshot();
  const e = explain(snapshot, { namespaceKey: 'default', flagKey: 'legacy-dashboard', entityId: 'u', context: { beta_opt_in: 'true', plan: 'pro' } });
  t.match(e, { flagType: 'VARIANT_FLAG_TYPE', rules: [], decision: { by: 'flag-disabled' }, result: { reason: 'FLAG_DISABLED_EVALUATION_REASON', variantKey: 'v2' } });
});
