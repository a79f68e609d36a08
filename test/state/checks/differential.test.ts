/**
 * The checks against evaluation, over random valid states (test/support/random-state.ts, the
 * generator of the Flipt differential test): for each state, 10,000 random entities and contexts
 * (drawn half from the generator's pools, half from the operands the state's own constraints
 * name, so that segments match often), and
 * - a rule or rollout reported unreachable is never the one that decides (for enabled flags the
 *   deciding index is also held equal to evaluation/explain.ts's; disabled variant flags are
 *   judged as if enabled, as the check does);
 * - a segment reported unmatchable never matches (evaluation's own matchSegment);
 * - a boolean flag reported without effect always answers its `enabled`.
 * And no check crashes on any state validation accepts (many more generated states, plus a large
 * one from test/support/generate-state.ts): no `internal.error`, only catalogued rules.
 */
import t from 'tap';
import { explain } from '../../../src/evaluation/explain.js';
import { compileConstraint } from '../../../src/evaluation/compile-segments.js';
import { matchSegment, matchSegmentSet } from '../../../src/evaluation/constraints.js';
import { thresholdValue } from '../../../src/evaluation/hash.js';
import { evaluateBoolean } from '../../../src/evaluation/boolean.js';
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from '../../../src/evaluation/opcodes.js';
import type { CompiledConstraint, CompiledSegment } from '../../../src/model/compiled.js';
import type { Flag, Segment, Snapshot } from '../../../src/model/snapshot.js';
import { runChecks } from '../../../src/state/checks/run-checks.js';
import { load } from '../../../src/state/load.js';
import { isRuleId } from '../../../src/state/rules.js';
import { generateState as generateLargeState } from '../../support/generate-state.js';
import { chance, evalRng, generateState, pick, randomContext, randomEntityId, stateRng, toFeaturesYaml, type Rng } from '../../support/random-state.js';

const SEED = 2111;
const STATES = 40;
const EVALUATIONS = 10_000;
const TODAY = new Date('2026-11-27T12:00:00Z');
const enc = new TextEncoder();

function loadGenerated(files: ReadonlyArray<{ path: string; text: string }>) {
  return load(files.map((f) => ({ path: f.path, bytes: enc.encode(f.text) })), { reference: 'main', revision: 'r', checks: { today: TODAY } });
}

/** The index of the rule (variant flag, as if enabled) or rollout that decides, -1 for none: the evaluators' loop over the compiled flag. */
function decidingIndex(flag: Flag, entityId: string, context: Record<string, string>): number {
  const v = flag.compiled.variant;
  if (v !== null) {
    for (let r = 0; r < v.rules.length; r++) if (matchSegmentSet(v.rules[r], entityId, context) !== null) return r;
    return -1;
  }
  const rollouts = flag.compiled.boolean!.rollouts;
  for (let r = 0; r < rollouts.length; r++) {
    const x = rollouts[r];
    if (x.kind === ROLLOUT_THRESHOLD && thresholdValue(entityId, flag.key) < x.percentage) return r;
    if (x.kind === ROLLOUT_SEGMENT && matchSegmentSet(x, entityId, context) !== null) return r;
  }
  return -1;
}

function compiledSegment(s: Segment): CompiledSegment {
  const constraints = s.constraints.map((c) => compileConstraint(c.type, c.operator, c.property, c.value)).filter((c): c is CompiledConstraint => c !== null);
  return { key: s.key, all: s.matchType === 'ALL_MATCH_TYPE', constraints, unknownType: false };
}

/** Values the namespace's constraints name, by property ('' key: entity ids). */
function operandPools(snapshot: Snapshot, ns: string): Map<string, string[]> {
  const pools = new Map<string, string[]>();
  for (const s of snapshot.namespaces.get(ns)!.segments.values()) {
    for (const c of s.constraints) {
      const key = c.type === 'ENTITY_ID_COMPARISON_TYPE' ? '' : c.property;
      let list = pools.get(key);
      if (list === undefined) pools.set(key, (list = []));
      list.push(c.value);
      if (c.value.startsWith('[')) {
        try {
          for (const x of JSON.parse(c.value) as unknown[]) list.push(String(x));
        } catch {
          // not a list
        }
      }
    }
  }
  return pools;
}

function request(rng: Rng, pools: Map<string, string[]>): { entityId: string; context: Record<string, string> } {
  const context = randomContext(rng);
  for (const [p, values] of pools) if (p !== '' && chance(rng, 0.5)) context[p] = pick(rng, values);
  const entities = pools.get('');
  const entityId = entities !== undefined && chance(rng, 0.5) ? pick(rng, entities) : randomEntityId(rng);
  return { entityId, context };
}

t.test('reported unreachable never decides, reported unmatchable never matches, no effect is no effect', async (t) => {
  const totals = { rules: 0, rollouts: 0, segments: 0, noEffect: 0, decidedByOthers: 0 };
  const failures: string[] = [];
  for (let i = 0; i < STATES; i++) {
    const gen = generateState(stateRng(SEED, i));
    const loaded = loadGenerated(toFeaturesYaml(gen));
    const snapshot = loaded.snapshot;
    if (snapshot === undefined) {
      failures.push(`state ${i} does not load: ${JSON.stringify(loaded.problems.slice(0, 2))}`);
      continue;
    }
    const reports = runChecks(snapshot, { today: TODAY });
    for (const ns of snapshot.namespaces.values()) {
      const mine = reports.filter((r) => r.namespace === ns.key);
      const unreachable = new Map<Flag, Set<number>>();
      for (const r of mine) {
        if (r.place.kind !== 'rule' && r.place.kind !== 'rollout') continue;
        if (r.rule !== 'rule.unreachable' && r.rule !== 'rollout.unreachable') continue;
        const flag = ns.flags.get(r.place.flag)!;
        if (!unreachable.has(flag)) unreachable.set(flag, new Set());
        unreachable.get(flag)!.add(r.place.index);
        if (r.rule === 'rule.unreachable') totals.rules++;
        else totals.rollouts++;
      }
      const unmatchable = mine.filter((r) => r.rule === 'segment.unmatchable' && r.place.kind === 'segment').map((r) => ns.segments.get((r.place as { segment: string }).segment)!);
      totals.segments += unmatchable.length;
      const noEffect = mine.filter((r) => r.rule === 'flag.rollouts.no-effect' && r.place.kind === 'flag').map((r) => ns.flags.get((r.place as { flag: string }).flag)!);
      totals.noEffect += noEffect.length;
      if (unreachable.size === 0 && unmatchable.length === 0 && noEffect.length === 0) continue;
      const compiled = unmatchable.map(compiledSegment);
      const pools = operandPools(snapshot, ns.key);
      const rng = evalRng(SEED, i, ns.key.length);
      for (let e = 0; e < EVALUATIONS && failures.length < 10; e++) {
        const { entityId, context } = request(rng, pools);
        for (const [flag, never] of unreachable) {
          const d = decidingIndex(flag, entityId, context);
          if (d >= 0 && never.has(d)) failures.push(`state ${i} ${ns.key}/${flag.key}: ${flag.type === 'VARIANT_FLAG_TYPE' ? 'rule' : 'rollout'} ${d + 1} reported unreachable decided for ${JSON.stringify({ entityId, context })}`);
          else if (d >= 0) totals.decidedByOthers++;
          if (flag.enabled || flag.type === 'BOOLEAN_FLAG_TYPE') {
            const x = explain(snapshot, { namespaceKey: ns.key, flagKey: flag.key, entityId, context });
            const rank = x.flagType === 'VARIANT_FLAG_TYPE' ? (x.decision.by === 'rule' ? x.decision.rank : 0) : x.decision.by === 'rollout' ? x.decision.rank : 0;
            if (rank !== d + 1) failures.push(`state ${i} ${ns.key}/${flag.key}: the test's deciding index ${d + 1} is not explain's ${rank}`);
          }
        }
        for (let s = 0; s < compiled.length; s++) {
          if (matchSegment(compiled[s], entityId, context)) failures.push(`state ${i} ${ns.key}: segment ${compiled[s].key} reported unmatchable matched ${JSON.stringify({ entityId, context })}`);
        }
        for (const flag of noEffect) {
          const r = evaluateBoolean(snapshot, { namespaceKey: ns.key, flagKey: flag.key, entityId, context });
          if (r.enabled !== flag.enabled) failures.push(`state ${i} ${ns.key}/${flag.key}: reported without effect, answered ${r.enabled}`);
        }
      }
    }
  }
  t.same(failures, []);
  t.ok(totals.rules > 0 && totals.rollouts > 0 && totals.segments > 0 && totals.noEffect > 0, `the states give every report something to hold (${JSON.stringify(totals)})`);
  t.ok(totals.decidedByOthers > 0, 'the other rules and rollouts of those flags do decide');
});

t.test('no check crashes on a state validation accepts', async (t) => {
  const failures: string[] = [];
  let accepted = 0;
  for (let i = 0; i < 400; i++) {
    const r = loadGenerated(toFeaturesYaml(generateState(stateRng(SEED + 1, i))));
    if (r.snapshot === undefined) continue;
    accepted++;
    for (const p of r.problems) {
      if (p.rule === 'internal.error' || !isRuleId(p.rule)) failures.push(`state ${i}: ${p.rule} ${p.message}`);
      if (p.file === '' || p.line < 1 || p.column < 1) failures.push(`state ${i}: ${p.rule} is not located`);
    }
  }
  const large = loadGenerated(generateLargeState({ flags: 500, seed: 7 }));
  t.ok(large.snapshot !== undefined, 'the large generated state loads');
  for (const p of large.problems) if (p.rule === 'internal.error') failures.push(`large: ${p.message}`);
  t.same(failures, []);
  t.ok(accepted > 300, `most generated states are accepted (${accepted})`);
});
