/** "Differs from the default reference" (src/ui/lib/flag-compare.ts): timestamps do not count, anything else does. */
import t from 'tap';
import { sameApartFromTimestamps, withoutTimestamps } from '../../../src/ui/lib/flag-compare.js';

const flag = (at: string, rollout: number) => ({
  key: 'f',
  createdAt: at,
  updatedAt: at,
  variants: [{ id: 'v1', key: 'a', createdAt: at, updatedAt: at }],
  rules: [{ id: 'r1', distributions: [{ id: 'd1', rollout, createdAt: at }] }],
});

t.test('only timestamps differ: the same', async (t) => {
  t.ok(sameApartFromTimestamps(flag('2026-01-01T00:00:00Z', 50), flag('2026-02-02T00:00:00Z', 50)));
});

t.test('a rollout moves: different', async (t) => {
  t.notOk(sameApartFromTimestamps(flag('2026-01-01T00:00:00Z', 50), flag('2026-01-01T00:00:00Z', 40)));
});

t.test('key order does not matter; missing against present does', async (t) => {
  t.ok(sameApartFromTimestamps({ a: 1, b: 2 }, { b: 2, a: 1 }));
  t.notOk(sameApartFromTimestamps({ a: 1 }, undefined));
  t.same(withoutTimestamps({ z: [{ createdAt: 'x', y: 1 }], a: null }), { a: null, z: [{ y: 1 }] });
});
