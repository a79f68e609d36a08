import t from 'tap';
import { GlobSyntaxError, globMatch, globToRegExp } from '../../src/state/glob.js';

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
    t.throws(() => globToRegExp(bad), GlobSyntaxError, bad);
  }
});

t.test('compiled patterns are cached', async (t) => {
  t.equal(globToRegExp('cache/*.yml'), globToRegExp('cache/*.yml'));
});
