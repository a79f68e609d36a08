/**
 * The policy's pattern subset (src/state/policy/linear-regex.ts): back-references and lookaround
 * refused with where they are, classes and escapes not mistaken for them, nested repetition
 * refused when the linear engine is missing, patterns that backtrack catastrophically on the
 * ordinary engine answering on long inputs, and subjects over the bound never matching.
 */
import t from 'tap';
import { compileLinear, MAX_PATTERN_LENGTH, MAX_SUBJECT_LENGTH, unsafeConstruct } from '../../../src/state/policy/linear-regex.js';

t.test('refused constructs, and near misses inside classes or escaped', async (t) => {
  t.match(unsafeConstruct('(a)\\1', false), /back-reference `\\1` at character 4/);
  t.match(unsafeConstruct('(?<n>a)\\k<n>', false), /named back-reference/);
  t.match(unsafeConstruct('a(?=b)', false), /lookahead `\(\?=` at character 2/);
  t.match(unsafeConstruct('(?<!a)b', false), /lookbehind `\(\?<!`/);
  for (const ok of ['[(?=]x', '\\(?=x', '[\\]1]', '\\\\1', '(?:ab)+', '(?<name>a)', '^[a-z0-9-]+$', 'a{2,3}']) {
    t.equal(unsafeConstruct(ok, false), undefined, ok);
  }
  t.match(unsafeConstruct('(a+)+$', true), /repeats a group that holds a quantifier/);
  t.match(unsafeConstruct('((a|b)c)*', true), /repeats a group/);
  t.equal(unsafeConstruct('(ab)+c*', true), undefined);
  t.equal(unsafeConstruct('(a+)+$', false), undefined, 'allowed where the linear engine runs it');
});

t.test('compiled patterns match; long subjects never do; long patterns are refused', async (t) => {
  const re = compileLinear('^@[a-z0-9-]+$');
  if ('refused' in re) return t.fail(re.refused);
  t.ok(re.test('@growth'));
  t.notOk(re.test('growth'));
  t.notOk(re.test(`@${'a'.repeat(MAX_SUBJECT_LENGTH)}`));
  t.match(compileLinear('a'.repeat(MAX_PATTERN_LENGTH + 1)), { refused: /at most 512/ });
  t.match(compileLinear('[a-'), { refused: /not a valid pattern/ });
});

t.test('a pattern that backtracks catastrophically elsewhere answers here (or is refused)', async (t) => {
  const re = compileLinear('^(a+)+$');
  if ('refused' in re) return t.match(re.refused, /nested repetition/);
  t.equal(re.test(`${'a'.repeat(MAX_SUBJECT_LENGTH - 1)}!`), false);
});
