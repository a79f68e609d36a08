import t from 'tap';
import { newUuid } from '../../src/server/pipeline/uuid.js';

const V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

t.test('newUuid gives random version 4 UUIDs, lower-case, never the same twice', async (t) => {
  const seen = new Set<string>();
  // Several refills of the random pool (256 ids each).
  for (let i = 0; i < 5000; i++) {
    const id = newUuid();
    if (!V4.test(id)) t.fail(`not a version 4 UUID: ${id}`);
    seen.add(id);
  }
  t.equal(seen.size, 5000, 'all distinct');
  // Every hex digit shows up in every free position (a stuck position would be a bug in the table).
  const positions = Array.from({ length: 36 }, () => new Set<string>());
  for (const id of seen) for (let i = 0; i < 36; i++) positions[i]!.add(id[i]!);
  for (const i of [0, 7, 9, 12, 15, 20, 35]) t.equal(positions[i]!.size, 16, `position ${i} takes all 16 digits`);
  t.same([...positions[14]!], ['4'], 'version digit');
  t.same([...positions[19]!].sort(), ['8', '9', 'a', 'b'], 'variant digit');
  const a = newUuid();
  const b = newUuid();
  t.not(a, b, 'a returned id is not changed by the next call');
  t.match(a, V4);
});
