/**
 * The per-subject solver (src/state/checks/subject-solver.ts) on its own: decided cases by hand,
 * then random lists of constraints on one property, drawn from small pools so that they often
 * contradict: "never" must hold for every value of a large pool (and the solver's own witnesses
 * of other lists), and a "sometimes" witness must satisfy every constraint (evaluation's
 * matchConstraint decides both).
 */
import t from 'tap';
import { compileConstraint } from '../../../src/evaluation/compile-segments.js';
import { matchConstraint } from '../../../src/evaluation/constraints.js';
import type { CompiledConstraint } from '../../../src/model/compiled.js';
import { solveSubject, timeText } from '../../../src/state/checks/subject-solver.js';
import { mulberry32 } from '../../support/prng.js';

const c = (type: string, operator: string, value = '') => compileConstraint(type, operator, 'p', value)!;
const S = 'STRING_COMPARISON_TYPE';
const N = 'NUMBER_COMPARISON_TYPE';
const D = 'DATETIME_COMPARISON_TYPE';
const B = 'BOOLEAN_COMPARISON_TYPE';
const verdict = (...cs: CompiledConstraint[]) => solveSubject(cs).verdict;

t.test('decided by hand', async (t) => {
  t.equal(verdict(c(S, 'eq', 'a'), c(S, 'eq', 'b')), 'never');
  t.equal(verdict(c(S, 'eq', 'a'), c(S, 'eq', 'a')), 'sometimes');
  t.equal(verdict(c(S, 'isoneof', '["a","b"]'), c(S, 'neq', 'a')), 'sometimes');
  t.equal(verdict(c(S, 'isoneof', '["a","b"]'), c(S, 'isnotoneof', '["a","b"]')), 'never');
  t.equal(verdict(c(S, 'neq', 'a'), c(S, 'empty')), 'sometimes', '" " is blank (empty after trimming) yet not "", where neq is false');
  t.equal(verdict(c(S, 'neq', 'a'), c(S, 'empty'), c(S, 'notempty')), 'never');
  t.equal(verdict(c(S, 'notcontains', 'x'), c(S, 'empty')), 'sometimes', '" " is blank and contains no x');
  t.equal(verdict(c(N, 'gt', '5'), c(N, 'lt', '5')), 'never');
  t.equal(verdict(c(N, 'gte', '5'), c(N, 'lte', '5')), 'sometimes');
  t.equal(verdict(c(N, 'gte', '5'), c(N, 'lte', '5'), c(N, 'neq', '5')), 'never');
  t.equal(verdict(c(N, 'neq', '5'), c(N, 'isnotoneof', '[1,2]')), 'sometimes');
  t.equal(verdict(c(N, 'gt', '1e308'), c(N, 'lt', 'Inf')), 'sometimes', 'the largest float');
  t.equal(verdict(c(N, 'gt', '1.7976931348623157e308'), c(N, 'neq', '+Inf')), 'never', 'nothing but infinity is above the largest float');
  t.equal(verdict(c(N, 'eq', '3'), c(N, 'isoneof', '[1, 2]')), 'never');
  t.equal(verdict(c(N, 'present'), c(N, 'notpresent')), 'never');
  t.equal(verdict(c(D, 'gt', '2025-01-01'), c(D, 'lt', '2025-01-01T00:00:00.000000001Z')), 'never');
  t.equal(verdict(c(D, 'gte', '2025-01-01'), c(D, 'lt', '2025-01-01T00:00:00.000000001Z')), 'sometimes');
  t.equal(verdict(c(D, 'eq', '2025-01-01'), c(D, 'neq', '2025-01-01T00:00:00Z')), 'never');
  t.equal(verdict(c(B, 'true'), c(B, 'false')), 'never');
  t.equal(verdict(c(B, 'true'), c(B, 'present')), 'sometimes');
  t.equal(verdict(c(S, 'prefix', 'ab'), c(S, 'prefix', 'ac')), 'never');
  t.equal(verdict(c(S, 'prefix', 'ab'), c(S, 'suffix', 'yz'), c(S, 'notcontains', 'bq')), 'sometimes');
  t.equal(verdict(c(S, 'prefix', ' a')), 'never', 'the value is trimmed before the prefix is compared');
  t.equal(verdict(c(N, 'gt', '0'), c(B, 'true')), 'unknown', 'a mixture without a decided part is not guessed');
  t.equal(verdict(c(N, 'le', '3')), 'never', '`le` never matches');
  t.equal(timeText(0n), '1970-01-01T00:00:00.000000000Z');
});

// ----- random lists -------------------------------------------------------------------------------

const OPS: Record<string, string[]> = {
  [S]: ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'],
  [N]: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent', 'isoneof', 'isnotoneof'],
  [D]: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent'],
  [B]: ['true', 'false', 'present', 'notpresent'],
};
const STRINGS = ['a', 'ab', 'b', 'ba', 'abc', ' a', 'a ', 'x', ''];
const NUMBERS = ['0', '1', '2', '-1', '1.5', 'NaN', 'Inf', '-Inf', '1e308'];
const TIMES = ['2025-01-01', '2025-01-01T00:00:00Z', '2025-01-01T00:00:00.000000001Z', '2024-12-31T23:59:59Z', '2025-06-01T00:00:00+02:00'];
const VALUES = [...STRINGS, ' ', '\t', 'abcx', 'xab', 'ab ', ...NUMBERS, '3', '-0', '1e309', ...TIMES, '2025-03-01T12:00:00Z', 'true', 'false', 't', 'F', '1'];

function randomList(rand: () => number): CompiledConstraint[] {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
  const types = rand() < 0.7 ? [pick([S, N, D, B])] : [S, N, D, B];
  const n = 1 + Math.floor(rand() * 4);
  const out: CompiledConstraint[] = [];
  for (let i = 0; i < n; i++) {
    const type = pick(types);
    const op = pick(OPS[type]);
    let value = '';
    if (type === S) value = op === 'isoneof' || op === 'isnotoneof' ? JSON.stringify([pick(STRINGS), pick(STRINGS)].slice(0, Math.floor(rand() * 3))) : pick(STRINGS);
    else if (type === N) value = op === 'isoneof' || op === 'isnotoneof' ? `[${pick(['0', '1', '2', '1.5'])}, ${pick(['0', '1', '2', '-1'])}]` : pick(NUMBERS);
    else if (type === D) value = pick(TIMES);
    out.push(c(type, op, value));
  }
  return out;
}

t.test('random lists: "never" is never contradicted, a witness always satisfies', async (t) => {
  const rand = mulberry32(21);
  const witnesses = new Set<string>(VALUES);
  const lists = Array.from({ length: 20_000 }, () => randomList(rand));
  const results = lists.map((l) => solveSubject(l));
  for (const r of results) if (r.verdict === 'sometimes') witnesses.add(r.witness);
  const count = { never: 0, sometimes: 0, unknown: 0 };
  const failures: string[] = [];
  const holds = (l: readonly CompiledConstraint[], v: string) => l.every((x) => matchConstraint(x, '', { p: v }));
  results.forEach((r, i) => {
    count[r.verdict]++;
    if (r.verdict === 'sometimes' && !holds(lists[i], r.witness)) failures.push(`witness ${JSON.stringify(r.witness)} fails list ${i}`);
    if (r.verdict === 'never') {
      for (const v of witnesses) if (holds(lists[i], v)) failures.push(`list ${i} reported never, ${JSON.stringify(v)} satisfies it`);
      const subset = r.because.map((k) => lists[i][k]);
      for (const v of witnesses) if (holds(subset, v)) failures.push(`list ${i}: its reason subset is satisfied by ${JSON.stringify(v)}`);
    }
  });
  t.same(failures.slice(0, 10), []);
  t.ok(count.never > 1000 && count.sometimes > 1000, `both verdicts are common (${JSON.stringify(count)})`);
  t.ok(count.unknown < count.never, 'unknown is the exception');
});
