import t from 'tap';
import { jsonDepthExceeds, parseJsonText } from '../../src/http/body.js';
import { parseQueryString } from '../../src/http/url.js';

t.test('depth check counts brackets outside strings only', async (t) => {
  t.equal(jsonDepthExceeds('[[[]]]', 3), false);
  t.equal(jsonDepthExceeds('[[[[]]]]', 3), true);
  t.equal(jsonDepthExceeds('{"a":"[[[[[[[["}', 2), false, 'brackets in strings do not count');
  t.equal(jsonDepthExceeds('{"a":"\\"[[[[["}', 2), false, 'escaped quotes stay inside the string');
  t.equal(jsonDepthExceeds('['.repeat(1 << 20), 64), true, 'a MiB of [ is linear, no recursion');
});

t.test('parseJsonText', async (t) => {
  t.same(parseJsonText(''), {}, 'empty body is {}');
  t.same(parseJsonText(' \n'), {});
  t.same(parseJsonText('{"a":[1]}'), { a: [1] });
  t.throws(() => parseJsonText('{"a":'), { code: 3, message: /^malformed JSON body: / });
  t.throws(() => parseJsonText(`${'['.repeat(65)}${']'.repeat(65)}`), { code: 3, message: 'malformed JSON body: nesting deeper than 64 levels' });
});

t.test('strict query parsing', async (t) => {
  t.same([...parseQueryString('a=1&b=x%20y&c=p+q&pretty&a=2')], [['a', '1'], ['b', 'x y'], ['c', 'p q'], ['pretty', '']]);
  t.throws(() => parseQueryString('a=%zz'), { message: 'invalid percent-encoding in query' });
  t.throws(() => parseQueryString('%E0%A4%A=1'), { message: 'invalid percent-encoding in query' });
});

t.test('parseJsonText: short texts skip the depth scan without changing any answer', async (t) => {
  // At maxDepth 2 a valid text deeper than 2 has at least 6 characters.
  t.same(parseJsonText('[[]]', 2), [[]]);
  t.same(parseJsonText('[[1]]', 2), [[1]]);
  t.throws(() => parseJsonText('[[[]]]', 2), { message: 'malformed JSON body: nesting deeper than 2 levels' });
  t.throws(() => parseJsonText('[[[', 2), { message: 'malformed JSON body: nesting deeper than 2 levels' }, 'too deep wins over malformed');
  t.throws(() => parseJsonText('[[', 2), { message: /^malformed JSON body: (?!nesting)/ });
  t.same(parseJsonText('  ', 2), {}, 'blank is {}');
  t.same(parseJsonText('{"a":{"b":"x"}}'), { a: { b: 'x' } });
});
