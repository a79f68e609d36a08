/** The entity id rules of the console and the entity page (src/ui/lib/entity-id.ts). */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { entityIdFromBytes, entityIdProblem } from '../../../src/ui/lib/entity-id.js';

t.test('an entity id is required', async (t) => {
  t.match(entityIdProblem(''), /^Type an entity id, or generate one/);
  t.match(entityIdProblem('   '), /only spaces/);
  t.equal(entityIdProblem('user-42'), undefined);
  t.equal(entityIdProblem(' x '), undefined, 'sent as typed');
});

t.test('a generated id is a version 4 UUID from the bytes given', async (t) => {
  t.equal(entityIdFromBytes(new Uint8Array(16)), '00000000-0000-4000-8000-000000000000');
  t.equal(entityIdFromBytes(new Uint8Array(16).fill(255)), 'ffffffff-ffff-4fff-bfff-ffffffffffff');
  const seen = new Set<string>();
  for (let i = 0; i < 100; i++) {
    const id = entityIdFromBytes(randomBytes(16));
    t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    seen.add(id);
  }
  t.equal(seen.size, 100, 'different bytes, different ids');
  t.throws(() => entityIdFromBytes(new Uint8Array(8)), RangeError);
});
