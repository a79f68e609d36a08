/**
 * matchKeys (src/cli/stale/code-scan.ts): a key is found only as a whole token of letters,
 * digits, `_` and `-`, also inside a command-line option's dashes; keys with `,` are found by the
 * second tokenization; non-ASCII text around a key does not hide it.
 */
import t from 'tap';
import { matchKeys } from '../../../src/cli/stale/code-scan.js';

const found = (text: string, keys: string[]) => {
  const out = new Set<string>();
  matchKeys(text, new Set(keys), out, keys.some((k) => k.includes(',')));
  return [...out].sort();
};

t.test('whole tokens only', async (t) => {
  t.same(found('isEnabled("beta")', ['beta']), ['beta']);
  t.same(found('beta-access beta_mode betax', ['beta']), []);
  t.same(found('flags.get(`new-checkout`)', ['new-checkout', 'new', 'checkout']), ['new-checkout']);
  t.same(found('--beta and beta-- and ---beta---', ['beta']), ['beta']);
  t.same(found('the key (beta-access)', ['beta-access', 'beta']), ['beta-access']);
});

t.test('keys with a comma, and text around them', async (t) => {
  t.same(found('variant "a,b" here', ['a,b', 'a']), ['a', 'a,b']);
  t.same(found('variant "a, b" here', ['a,b']), []);
  t.same(found('«über»beta日本', ['beta', 'über']), ['beta']);
});
