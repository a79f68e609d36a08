/** The remembered namespace (src/ui/lib/last-namespace.ts): kept, read back, and which one home opens. */
import t from 'tap';
import { homeNamespace, lastNamespace, rememberNamespace } from '../../../src/ui/lib/last-namespace.js';

function memory() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

t.test('remembered and read back; nothing remembered reads undefined', async (t) => {
  const s = memory();
  t.equal(lastNamespace(s), undefined);
  rememberNamespace(s, 'catalog');
  t.equal(lastNamespace(s), 'catalog');
});

t.test('a storage that refuses is not an error', async (t) => {
  const refusing = {
    getItem: () => {
      throw new Error('denied');
    },
    setItem: () => {
      throw new Error('full');
    },
  };
  t.doesNotThrow(() => rememberNamespace(refusing, 'x'));
  t.equal(lastNamespace(refusing), undefined);
});

t.test('home: the remembered namespace when it exists, else default, else the first', async (t) => {
  t.equal(homeNamespace('catalog', ['catalog', 'default']), 'catalog');
  t.equal(homeNamespace('gone', ['catalog', 'default']), 'default');
  t.equal(homeNamespace(undefined, ['a', 'b']), 'a');
  t.equal(homeNamespace(undefined, []), undefined);
});
