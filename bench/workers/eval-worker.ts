/**
 * One evaluation scenario in one process: vexil's evaluator, @openfeature/flagd-core (compiled
 * json-logic, no-op logger) and @flipt-io/flipt-client-js (public evaluateVariant/evaluateBoolean)
 * on equivalent flag definitions and the same entity ids user-0..user-(N-1), following the harness
 * of shared/reference/engines-bench.md: ids built outside the timed loop, a 20k warm-up, then
 * `rounds` rounds of N evaluations; each result is classified and counted (a sanity check that also
 * keeps the call from being optimised away). Prints one JSON line per engine.
 *
 * Before timing, the engines are checked against each other: vexil and Flipt's engine must agree
 * id for id (same CRC-32 bucketing); flagd buckets differently (murmur3), so only its set of
 * outcomes must match.
 *
 * argv[2] = JSON {scenario, fixtures, n, rounds, fliptRounds, order}
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FlagdCore } from '@openfeature/flagd-core';
import { FliptClient } from '@flipt-io/flipt-client-js';
import { prepareMatcher } from '../../src/evaluation/codegen.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { load } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';

export type ScenarioName = 'variant' | 'boolean' | 'static' | 'complex';
export type EngineName = 'vexil' | 'flagd-core' | 'flipt-client-js';

export interface EvalWorkerArgs {
  scenario: ScenarioName;
  /** Absolute path of bench/fixtures in the repository. */
  fixtures: string;
  n: number;
  rounds: number;
  /** Flipt's engine is ~50x slower; fewer rounds keep the run short without changing its median much. */
  fliptRounds: number;
  /** Order the engines run in (rotated between repetitions so no engine always goes first). */
  order: EngineName[];
}

export interface EvalWorkerLine {
  scenario: ScenarioName;
  engine: EngineName;
  n: number;
  rounds: number;
  medianPerSec: number;
  minPerSec: number;
  maxPerSec: number;
  nsPerEval: number;
  /** Median over rounds of N / (user+system CPU time): less sensitive to other processes on a shared machine. */
  cpuMedianPerSec: number;
  distribution: Record<string, number>;
}

interface Scenario {
  /** Fixture file prefix ('' = the engines-bench.md fixtures, 'complex.' = scenario d). */
  prefix: string;
  flagKey: string;
  kind: 'variant' | 'boolean';
  context: Readonly<Record<string, string>>;
}

const args = JSON.parse(process.argv[2]) as EvalWorkerArgs;
const fixture = (name: string) => readFileSync(join(args.fixtures, name), 'utf8');

const SCENARIOS: Record<ScenarioName, Scenario> = {
  // (a) 1 rule, segment `fizz == buzz` matches, 50/50 split
  variant: { prefix: '', flagKey: 'flag1', kind: 'variant', context: { fizz: 'buzz' } },
  // (b) segment rollout `plan == enterprise` misses, then a 50% threshold
  boolean: { prefix: '', flagKey: 'flag_boolean', kind: 'boolean', context: { plan: 'free' } },
  // (c) no targeting at all
  static: { prefix: '', flagKey: 'flag_static', kind: 'boolean', context: {} },
  // (d) 5 rules x 3 segments x 4 constraints; rules 1-4 miss after evaluating every constraint, rule 5 matches
  complex: {
    prefix: 'complex.',
    flagKey: 'flag_complex',
    kind: 'variant',
    context: JSON.parse(readFileSync(join(args.fixtures, 'complex.context.json'), 'utf8')) as Record<string, string>,
  },
};

const sc = SCENARIOS[args.scenario];
const N = args.n;
const ids = Array.from({ length: N }, (_, i) => `user-${i}`);
const noop = { error() {}, warn() {}, info() {}, debug() {} };

// ----- vexil: the YAML fixture through the real loader (parse, validate, build) -------------------
const yamlName = sc.prefix === '' ? 'features.yml' : `${sc.prefix}features.yml`;
const loaded = load([{ path: yamlName, bytes: readFileSync(join(args.fixtures, yamlName)) }], { reference: 'bench', revision: 'bench' });
if (!loaded.snapshot) throw new Error(`vexil could not load ${yamlName}: ${JSON.stringify(loaded.problems)}`);
const snapshot: Snapshot = loaded.snapshot;
// What the server's store does in the background after each swap (store/matcher-warmup.ts).
for (const ns of snapshot.namespaces.values()) for (const flag of ns.flags.values()) prepareMatcher(flag.compiled);

// ----- flagd-core: compiled json-logic (the default mode) ------------------------------------------
const flagd = new FlagdCore(undefined, noop);
flagd.setConfigurations(fixture(`${sc.prefix}flagd-flags.json`));

// ----- flipt-client-js: the server snapshot JSON through a fetcher ---------------------------------
const fliptSnapshot = JSON.parse(fixture(`${sc.prefix}flipt-snapshot.json`)) as unknown;
const flipt = await FliptClient.init({
  namespace: 'default',
  url: 'http://127.0.0.1:1',
  fetcher: async () =>
    ({
      ok: true,
      status: 200,
      statusText: 'OK',
      headers: { get: (h: string) => (h.toLowerCase() === 'etag' ? '"v1"' : null) },
      json: async () => structuredClone(fliptSnapshot),
    }) as unknown as Response,
});

// ----- the per-call functions (each builds its request object per call, as a caller would) --------
type Outcome = (id: string) => string;
const ctx = sc.context;
const flagKey = sc.flagKey;
// flagd reads the entity id from the context; for (d) the 13-property contexts are built outside
// the timed loop (this favours flagd a little), for (a)-(c) a literal per call as engines-bench.md.
const flagdCtx: Array<Record<string, string>> | null = args.scenario === 'complex' ? ids.map((id) => ({ ...ctx, targetingKey: id })) : null;
const idIndex = new Map<string, number>();
if (flagdCtx) ids.forEach((id, i) => idIndex.set(id, i));

const outcomes: Record<EngineName, Outcome> =
  sc.kind === 'variant'
    ? {
        vexil: (id) => evaluateVariant(snapshot, { namespaceKey: 'default', flagKey, entityId: id, context: ctx }).variantKey,
        'flagd-core': flagdCtx
          ? (id) => flagd.resolveStringEvaluation(flagKey, 'dflt', flagdCtx[idIndex.get(id)!], noop).value
          : (id) => flagd.resolveStringEvaluation(flagKey, 'dflt', { targetingKey: id, fizz: 'buzz' }, noop).value,
        'flipt-client-js': (id) => flipt.evaluateVariant({ flagKey, entityId: id, context: ctx }).variantKey,
      }
    : {
        vexil: (id) => String(evaluateBoolean(snapshot, { namespaceKey: 'default', flagKey, entityId: id, context: ctx }).enabled),
        'flagd-core':
          args.scenario === 'boolean'
            ? (id) => String(flagd.resolveBooleanEvaluation(flagKey, false, { targetingKey: id, plan: 'free' }, noop).value)
            : (id) => String(flagd.resolveBooleanEvaluation(flagKey, false, { targetingKey: id }, noop).value),
        'flipt-client-js': (id) => String(flipt.evaluateBoolean({ flagKey, entityId: id, context: ctx }).enabled),
      };

// The flagd index lookup above is not free; for (d) measure flagd through a direct index instead.
const timedFlagdComplex = flagdCtx
  ? (i: number) => flagd.resolveStringEvaluation(flagKey, 'dflt', flagdCtx[i], noop).value
  : null;

// ----- cross-check before timing -------------------------------------------------------------------
const CHECK = Math.min(N, 2000);
const seen: Record<EngineName, Set<string>> = { vexil: new Set(), 'flagd-core': new Set(), 'flipt-client-js': new Set() };
for (let i = 0; i < CHECK; i++) {
  const v = outcomes.vexil(ids[i]);
  const f = outcomes['flipt-client-js'](ids[i]);
  if (v !== f) throw new Error(`${args.scenario}: vexil and flipt-client-js disagree for ${ids[i]}: ${v} vs ${f}`);
  seen.vexil.add(v);
  seen['flipt-client-js'].add(f);
  seen['flagd-core'].add(outcomes['flagd-core'](ids[i]));
}
const outcomeSet = (s: Set<string>) => [...s].sort().join(',');
if (outcomeSet(seen.vexil) !== outcomeSet(seen['flagd-core'])) {
  throw new Error(`${args.scenario}: flagd-core outcomes {${outcomeSet(seen['flagd-core'])}} differ from vexil's {${outcomeSet(seen.vexil)}}`);
}

// ----- timing --------------------------------------------------------------------------------------
function measure(engine: EngineName, rounds: number): EvalWorkerLine {
  const fn = outcomes[engine];
  const byIndex = engine === 'flagd-core' ? timedFlagdComplex : null;
  const warm = Math.min(N, 20_000);
  for (let i = 0; i < warm; i++) fn(ids[i]);
  const rates: number[] = [];
  const cpuRates: number[] = [];
  let counts: Record<string, number> = {};
  for (let r = 0; r < rounds; r++) {
    counts = {};
    const u0 = process.cpuUsage();
    const t0 = performance.now();
    if (byIndex) {
      for (let i = 0; i < N; i++) {
        const k = byIndex(i);
        counts[k] = (counts[k] ?? 0) + 1;
      }
    } else {
      for (let i = 0; i < N; i++) {
        const k = fn(ids[i]);
        counts[k] = (counts[k] ?? 0) + 1;
      }
    }
    rates.push(N / ((performance.now() - t0) / 1000));
    const u = process.cpuUsage(u0);
    cpuRates.push(N / ((u.user + u.system) / 1e6));
  }
  rates.sort((a, b) => a - b);
  cpuRates.sort((a, b) => a - b);
  const med = rates[rates.length >> 1];
  return {
    scenario: args.scenario,
    engine,
    n: N,
    rounds,
    medianPerSec: Math.round(med),
    minPerSec: Math.round(rates[0]),
    maxPerSec: Math.round(rates[rates.length - 1]),
    nsPerEval: Math.round(1e9 / med),
    cpuMedianPerSec: Math.round(cpuRates[cpuRates.length >> 1]),
    distribution: counts,
  };
}

for (const engine of args.order) {
  const line = measure(engine, engine === 'flipt-client-js' ? args.fliptRounds : args.rounds);
  process.stdout.write(`${JSON.stringify(line)}\n`);
}
flipt.close();
