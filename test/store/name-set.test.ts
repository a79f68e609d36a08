/** The bounded set of names the store answered 404 for: capped in names and in characters, oldest forgotten first. */
import t from 'tap';
import { BoundedNameSet } from '../../src/store/name-set.js';

t.test('at most maxNames names: the oldest is forgotten', async (t) => {
  const set = new BoundedNameSet(3, 1000);
  for (const n of ['a', 'b', 'c', 'd']) set.add(n);
  t.equal(set.size, 3);
  t.notOk(set.has('a'), 'the oldest went');
  t.ok(set.has('b') && set.has('c') && set.has('d'));
  set.add('b');
  t.equal(set.size, 3, 'adding a known name changes nothing');
  set.clear();
  t.equal(set.size, 0);
});

t.test('at most maxChars characters: 1 MB names do not pile up', async (t) => {
  const set = new BoundedNameSet(10_000, 1_000_000);
  const big = (c: string) => c.repeat(400_000);
  for (const c of 'abcdef') set.add(big(c));
  t.equal(set.size, 2, 'two 400,000-character names fit in 1,000,000');
  t.ok(set.has(big('e')) && set.has(big('f')), 'the newest two');
  set.add('x'.repeat(1_000_001));
  t.equal(set.size, 2, 'a name longer than the whole budget is not remembered');
  t.notOk(set.has('x'.repeat(1_000_001)));
  set.add('small');
  t.ok(set.has('small'));
});
