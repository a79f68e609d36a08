/**
 * vexil's evaluator against Flipt's own engine (@flipt-io/flipt-client-js, Rust compiled to WASM):
 * 20,000 cases with a fixed seed, 200 random valid states x 100 evaluations each (see run.ts).
 * Every difference outside the documented quirks of the engine (quirks.ts; bucketing is
 * neutralized in flipt-engine.ts) fails the test with a reproducer. The long run is
 * `npm run test:oracle -- --cases 1000000 --seed N` (scripts/oracle.ts).
 */
import t from 'tap';
import { OPERATORS } from '../support/random-state.js';
import { FliptEngineOracle } from './flipt-engine.js';
import { NAMESPACES, formatDifference, runCases } from './run.js';

const SEED = 20_261_126;
const CASES = 20_000;

t.test(`${CASES} random cases agree with Flipt's engine (seed ${SEED})`, async (t) => {
  const oracle = await FliptEngineOracle.create(NAMESPACES);
  const { tally, differences, rejections } = runCases(oracle, { seed: SEED, cases: CASES, maxDifferences: 5 });

  t.equal(rejections.length, 0, 'vexil loads every generated state', {
    diagnostic: rejections.length > 0,
    problems: rejections.slice(0, 3).map((r) => ({ state: r.stateIndex, problems: r.problems.map((p) => `${p.rule}: ${p.message}`), files: r.files })),
  });
  t.equal(differences.length, 0, 'no difference outside the engine\'s documented quirks', {
    diagnostic: differences.length > 0,
    differences: differences.map(formatDifference),
  });
  t.equal(tally.cases, CASES - rejections.length * 100, 'every case was evaluated by both engines');

  // The comparison is only worth something if the cases reach every branch: assert the coverage.
  t.ok(tally.strict / tally.cases > 0.85, `most cases are compared strictly (${tally.strict} of ${tally.cases})`);
  const seen = (prefix: string) => Object.entries(tally.shapes).filter(([k]) => k.startsWith(prefix)).reduce((n, [, v]) => n + v, 0);
  const shapes: Array<[string, number]> = [
    ['variant MATCH match variant 1-segment', 100], // a distribution picked
    ['variant MATCH match variant n-segments', 20], // several segments of an OR / AND rule matched
    ['variant MATCH match no-variant', 20], // rule matched without distributions (no default variant)
    ['variant DEFAULT no-match variant 1-segment', 10], // rule matched, bucket in the gap, default variant
    ['variant UNKNOWN no-match no-variant 1-segment', 10], // rule matched, bucket in the gap, no default
    ['variant DEFAULT no-match variant no-segments', 20], // nothing matched, default variant
    ['variant UNKNOWN no-match no-variant no-segments', 20],
    ['variant FLAG_DISABLED no-match variant', 10], // disabled with a default variant
    ['variant FLAG_DISABLED no-match no-variant', 10],
    ['boolean MATCH true no-segments', 20], // thresholds
    ['boolean MATCH false no-segments', 20],
    ['boolean MATCH true 1-segment', 20], // segment rollouts
    ['boolean MATCH false n-segments', 5],
    ['boolean DEFAULT true', 20], // fall-through to the flag's enabled
    ['boolean DEFAULT false', 20],
    ['error', 20], // type mismatches and missing flags fail on both sides
  ];
  for (const [prefix, min] of shapes) t.ok(seen(prefix) >= min, `covers "${prefix}" (${seen(prefix)} cases)`);

  // Every operator of every comparison type, both matching and not matching some request.
  const thin: string[] = [];
  for (const [type, ops] of Object.entries(OPERATORS)) {
    for (const op of ops) {
      const v = tally.verdicts[`${type.replace('_COMPARISON_TYPE', '')} ${op}`];
      if (!v || v.true < 10 || v.false < 10) thin.push(`${type} ${op}: ${JSON.stringify(v ?? null)}`);
    }
  }
  t.same(thin, [], 'every operator of every type was seen true and false at least 10 times');
});
