/**
 * The long run of the differential test against Flipt's WASM engine (test/oracle/).
 *
 *   node --import tsx scripts/oracle.ts [--cases 1000000] [--seed N] [--from I] [--evals-per-state 100] [--max-diffs 5]
 *   node --import tsx scripts/oracle.ts --seed N --case I      # one case in full: YAML, request, both results
 *
 * Exit status 0 when no difference (outside the documented quirks of the engine) was found, 1 otherwise.
 */
import { parseArgs } from 'node:util';
import { FliptEngineOracle } from '../test/oracle/flipt-engine.js';
import { DEFAULT_EVALS_PER_STATE, NAMESPACES, formatDifference, reproduceCase, runCases, type Tally } from '../test/oracle/run.js';

const { values } = parseArgs({
  options: {
    cases: { type: 'string', default: '1000000' },
    seed: { type: 'string' },
    from: { type: 'string', default: '0' },
    case: { type: 'string' },
    'evals-per-state': { type: 'string', default: String(DEFAULT_EVALS_PER_STATE) },
    'max-diffs': { type: 'string', default: '5' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  console.log('usage: node --import tsx scripts/oracle.ts [--cases N] [--seed N] [--from I] [--evals-per-state N] [--max-diffs N] | --seed N --case I');
  process.exit(0);
}
const num = (name: string, s: string | undefined): number => {
  const n = Number(s);
  if (!Number.isSafeInteger(n) || n < 0) {
    console.error(`--${name} must be a non-negative integer, got ${JSON.stringify(s)}`);
    process.exit(2);
  }
  return n;
};
const seed = values.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : num('seed', values.seed);
const per = num('evals-per-state', values['evals-per-state']);
const oracle = await FliptEngineOracle.create(NAMESPACES);

if (values.case !== undefined) {
  const r = reproduceCase(oracle, seed, num('case', values.case), per);
  if (!('vexil' in r) || r.vexil === undefined) {
    console.log(`state ${r.stateIndex} was refused by vexil:`);
    for (const p of r.problems) console.log(`  ${p.severity} ${p.rule} ${p.file}:${p.line}:${p.column} ${p.message}`);
    for (const f of r.files) console.log(`# ${f.path}\n${f.text}`);
    process.exit(1);
  }
  console.log(formatDifference({ seed, caseIndex: num('case', values.case), evalsPerState: per, files: r.files, request: r.request, vexil: r.vexil, flipt: r.flipt!, fields: r.fields! }));
  console.log(r.fields!.length === 0 ? 'equal' : `differs in ${r.fields!.join(', ')}${r.quirks!.length > 0 ? ` (touches the engine's quirks: ${r.quirks!.join(', ')})` : ''}`);
  process.exit(r.fields!.length === 0 ? 0 : 1);
}

const cases = num('cases', values.cases);
const from = num('from', values.from);
const maxDiffs = num('max-diffs', values['max-diffs']);
const started = performance.now();
let lastPrint = started;
const summary = (t: Tally) => {
  const secs = (performance.now() - started) / 1000;
  return `${t.cases} cases (${t.strict} strict, ${t.quirky} touching engine quirks) over ${t.states} states in ${secs.toFixed(1)} s`;
};
console.log(`seed ${seed}, cases ${from}..${from + cases - 1}, ${per} evaluations per state`);
const { tally, differences, rejections } = runCases(oracle, {
  seed,
  cases,
  from,
  evalsPerState: per,
  maxDifferences: maxDiffs === 0 ? undefined : maxDiffs,
  onDifference: (d) => console.log(formatDifference(d)),
  onProgress: (t) => {
    if (performance.now() - lastPrint > 10_000) {
      lastPrint = performance.now();
      console.log(`  ... ${summary(t)}`);
    }
  },
});
for (const r of rejections) {
  console.log(`--- state ${r.stateIndex} (seed ${r.seed}) refused by vexil:`);
  for (const p of r.problems) console.log(`  ${p.severity} ${p.rule} ${p.file}:${p.line}:${p.column} ${p.message}`);
  for (const f of r.files) console.log(`# ${f.path}\n${f.text}`);
}
console.log(summary(tally));
console.log(`excused differences (engine quirks, test/oracle/quirks.ts): ${JSON.stringify(tally.excused)}`);
console.log(`outcome shapes: ${JSON.stringify(Object.fromEntries(Object.entries(tally.shapes).sort()), null, 1)}`);
console.log(`${differences.length} difference(s)${maxDiffs > 0 && differences.length >= maxDiffs ? ' (stopped at --max-diffs)' : ''}, ${rejections.length} refused state(s)`);
process.exit(differences.length === 0 && rejections.length === 0 ? 0 : 1);
