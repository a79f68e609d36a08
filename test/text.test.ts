import t from 'tap';
import { trimCharacter, trimTrailingCharacter } from '../src/text.js';

t.test('trimCharacter: both ends, like /^c+|c+$/g', async (t) => {
  for (const [input, want] of [
    ['', ''],
    ['/', ''],
    ['///a/b//', 'a/b'],
    ['a', 'a'],
    ['/a/', 'a'],
  ] as const) {
    t.equal(trimCharacter(input, '/'), want, JSON.stringify(input));
    t.equal(input.replace(/^\/+|\/+$/g, ''), want, 'the regex it replaces agrees');
  }
  t.equal(trimCharacter('__flags_git__', '_'), 'flags_git');
});

t.test('trimTrailingCharacter: the end only, like /c+$/', async (t) => {
  t.equal(trimTrailingCharacter('https://git.example/flags.git///', '/'), 'https://git.example/flags.git');
  t.equal(trimTrailingCharacter('/a', '/'), '/a');
  t.equal(trimTrailingCharacter('', '/'), '');
});

t.test('1 MB runs that do not end the string: linear (the regexes were quadratic)', async (t) => {
  const run = '/'.repeat(1 << 20);
  t.equal(trimCharacter(`${run}x${run}y`, '/').length, (1 << 20) + 2);
  t.equal(trimTrailingCharacter(`${run}x`, '/').length, (1 << 20) + 1);
  t.equal(trimCharacter(run, '/'), '');
});
