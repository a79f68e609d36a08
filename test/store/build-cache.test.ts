import t from 'tap';
import { load } from '../../src/state/load.js';
import type { StateFile } from '../../src/state/load.js';
import { createParseCache } from '../../src/store/parse-cache.js';

const enc = new TextEncoder();
const f = (text: string, contentId: string): StateFile => ({ path: 'features.yml', bytes: enc.encode(text), contentId });
const state = `flags:\n  - key: a\n    name: A\n    enabled: true\n`;

t.test("the store's parse cache comes with a build cache shared by every load", async (t) => {
  const parseCache = createParseCache();
  const { buildCache } = parseCache;
  const one = load([f(state, 'x')], { reference: 'main', revision: 'r1', parseCache, buildCache }).snapshot!;
  const two = load([f(state, 'x')], { reference: 'dev', revision: 'r2', parseCache, buildCache }).snapshot!;
  t.equal(two.namespaces.get('default')!.flags.get('a'), one.namespaces.get('default')!.flags.get('a'));
  const other = load([f(state.replace('A', 'B'), 'y')], { reference: 'x', revision: 'r3', parseCache, buildCache }).snapshot!;
  t.equal(other.namespaces.get('default')!.flags.get('a')!.name, 'B');
  t.not(createParseCache().buildCache, parseCache.buildCache, 'one build cache per store');
});
