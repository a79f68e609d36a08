import t from 'tap';
import fc from 'fast-check';
import { GlobSyntaxError, globMatch, compileGlob } from '../../src/state/glob.js';
import { referenceGlobToRegExp } from './glob-regex-reference.js';

t.test('* and ** cross / (gobwas without separators)', async (t) => {
  t.ok(globMatch('*.yml', 'a/b/c.yml'));
  t.ok(globMatch('**features.yml', 'features.yml'));
  t.ok(globMatch('**features.yml', 'a/b/features.yml'));
  t.ok(globMatch('**features.yml', 'myfeatures.yml'), 'the Flipt quirk: the name may have a prefix');
  t.ok(globMatch('**.features.yml', 'team/x.features.yml'));
  t.notOk(globMatch('**.features.yml', 'features.yml'));
  t.notOk(globMatch('*.yml', 'a.yaml'));
  t.ok(globMatch('flags/*', 'flags/x/y.yml'));
});

t.test('? [..] [!..] {a,b} and escapes', async (t) => {
  t.ok(globMatch('f?.yml', 'f1.yml'));
  t.ok(globMatch('f?.yml', 'f/.yml'), '? matches a separator too');
  t.notOk(globMatch('f?.yml', 'f12.yml'));
  t.ok(globMatch('[a-c]x', 'bx'));
  t.notOk(globMatch('[a-c]x', 'dx'));
  t.ok(globMatch('[!a-c]x', 'dx'));
  t.notOk(globMatch('[!a-c]x', 'ax'));
  t.ok(globMatch('*.{yml,yaml}', 'a.yaml'));
  t.ok(globMatch('{flags/*.yml,other/*.json}', 'other/t.json'));
  t.notOk(globMatch('{flags/*.yml,other/*.json}', 'other/t.yml'));
  t.ok(globMatch('a\\*b', 'a*b'));
  t.notOk(globMatch('a\\*b', 'axb'));
  t.ok(globMatch('a.b', 'a.b'), 'regex metacharacters are literal');
  t.notOk(globMatch('a.b', 'axb'));
  t.ok(globMatch('(x)+-|$^', '(x)+-|$^'));
  t.ok(globMatch('é*', 'école.yml'));
});

t.test('malformed patterns throw GlobSyntaxError', async (t) => {
  for (const bad of ['[abc', '{a,b', 'a}', 'x\\', '[z-a]']) {
    t.throws(() => compileGlob(bad), GlobSyntaxError, bad);
  }
});

t.test('compiled patterns are cached', async (t) => {
  t.equal(compileGlob('cache/*.yml'), compileGlob('cache/*.yml'));
});

t.test('nested {} groups, empty alternatives, astral characters', async (t) => {
  t.ok(globMatch('{a,{b,c{d,e}}}x', 'cex'));
  t.notOk(globMatch('{a,{b,c{d,e}}}x', 'cx'));
  t.ok(globMatch('a{,b}', 'a'), 'an empty alternative');
  t.ok(globMatch('a{}', 'a'));
  t.ok(globMatch('x,y', 'x,y'), 'a , outside {} is literal');
  t.ok(globMatch('?', '😀'), '? is one code point, not one UTF-16 unit');
  t.notOk(globMatch('??', '😀'));
  t.ok(globMatch('[😀-😂]', '😁'));
  t.ok(globMatch('[]a]', ']'), 'a ] right after [ is a member');
  t.ok(globMatch('[!]a]', 'b'));
  t.notOk(globMatch('[!]a]', ']'));
  const deep = 100_000;
  t.ok(globMatch(`${'{'.repeat(deep)}a${'}'.repeat(deep)}`, 'a'), 'groups nested deeper than the call stack');
});

// Tokens that exercise every construct and its corner cases (escapes, `]` first in a class, ranges,
// negation, nesting, astral code points); paths over the characters those tokens name.
const PATTERN_TOKENS = ['a', 'b', 'é', '😀', '/', '.', ',', '-', '*', '**', '?', '[', ']', '!', '{', '}', '\\', '\\*', '[a-b]', '[!a]', '{a,b}', '{,a*}'];
const PATH_CHARS = ['a', 'b', 'c', 'é', '😀', '/', '.', ',', '-', ']', '*', '\n', '\\'];
// Half the paths and patterns use only `a`, `b` (and `*`, `?`), so that they match often and in many ways.
const path = fc.oneof(
  fc.array(fc.constantFrom(...PATH_CHARS), { maxLength: 10 }).map((xs) => xs.join('')),
  fc.array(fc.constantFrom('a', 'b'), { maxLength: 6 }).map((xs) => xs.join('')),
);

t.test('same answers and errors as the former RegExp translation (random short inputs)', async (t) => {
  let matched = 0;
  let compared = 0;
  fc.assert(
    fc.property(
      fc.oneof(
        fc.array(fc.constantFrom(...PATTERN_TOKENS), { maxLength: 8 }).map((xs) => xs.join('')),
        fc.array(fc.constantFrom('a', 'b', '*', '?'), { maxLength: 6 }).map((xs) => xs.join('')),
      ),
      fc.array(path, { minLength: 1, maxLength: 8 }),
      (pattern, paths) => {
        let expected: RegExp | string;
        try {
          expected = referenceGlobToRegExp(pattern);
        } catch (err) {
          if (!(err instanceof GlobSyntaxError)) throw err;
          expected = err.message;
        }
        let actual: ReturnType<typeof compileGlob> | string;
        try {
          actual = compileGlob(pattern);
        } catch (err) {
          if (!(err instanceof GlobSyntaxError)) throw err;
          actual = err.message;
        }
        if (typeof expected === 'string' || typeof actual === 'string') return actual === expected;
        for (const path of paths) {
          const want = expected.test(path);
          if (actual.test(path) !== want) return false;
          compared++;
          if (want) matched++;
        }
        return true;
      },
    ),
    { seed: 11_04, numRuns: 20_000 },
  );
  t.ok(compared > 20_000 && matched > 2_000, `compared ${compared} matches (${matched} true)`);
});

t.test('hostile patterns against 1 MB paths complete', async (t) => {
  const long = 'a'.repeat(1024 * 1024);
  t.notOk(globMatch('*a*a*a*a*a*a*b', long), 'the exponential case of a backtracking regex');
  t.ok(globMatch('*a*a*a*a*a*a*a', long));
  t.notOk(globMatch('{*a,*a*}*a*a*a*a*b', long), 'alternatives of stars');
  t.notOk(globMatch('**?**?**?*b', `${long}/${long}`));
  t.ok(globMatch('*[a-b]*[!c]*', long));
});
