/** The context keys a namespace's segments read (src/ui/lib/context-keys.ts). */
import t from 'tap';
import { contextKeysOf, readByText } from '../../../src/ui/lib/context-keys.js';

t.test('each key once, alphabetical, with the segments reading it; entity-id constraints left out', async (t) => {
  const keys = contextKeysOf([
    { key: 'everyone', constraints: [] },
    { key: 'eu', constraints: [{ type: 'STRING_COMPARISON_TYPE', property: 'region' }, { type: 'STRING_COMPARISON_TYPE', property: 'country' }] },
    { key: 'beta', constraints: [{ type: 'STRING_COMPARISON_TYPE', property: 'plan' }, { type: 'NUMBER_COMPARISON_TYPE', property: 'age' }, { type: 'STRING_COMPARISON_TYPE', property: 'region' }] },
    { key: 'staff', constraints: [{ type: 'ENTITY_ID_COMPARISON_TYPE', property: 'entityId' }, { type: 'STRING_COMPARISON_TYPE', property: 'plan' }, { type: 'STRING_COMPARISON_TYPE', property: 'plan' }] },
  ]);
  t.same(keys, [
    { key: 'age', segments: ['beta'] },
    { key: 'country', segments: ['eu'] },
    { key: 'plan', segments: ['beta', 'staff'] },
    { key: 'region', segments: ['eu', 'beta'] },
  ]);
  t.equal(readByText(keys[0]!), 'read by segment beta');
  t.equal(readByText(keys[2]!), 'read by segments beta, staff');
  t.same(contextKeysOf([]), []);
});
