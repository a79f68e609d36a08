/** If-None-Match against a bare ETag (src/server/pipeline/conditional.ts): every form HTTP allows, linear on hostile lists. */
import t from 'tap';
import { ifNoneMatchHits } from '../../src/server/pipeline/conditional.js';

const E = '0123456789abcdef0123456789abcdef01234567';

t.test('forms that name the ETag', async (t) => {
  for (const h of [E, `"${E}"`, `W/"${E}"`, `W/${E}`, ` ${E} `, `"a", ${E}`, `x,"${E}",y`, '*', ' * ', [`"a"`, E]]) t.ok(ifNoneMatchHits(h, E), JSON.stringify(h));
});

t.test('forms that do not', async (t) => {
  for (const h of [undefined, '', ',', '""', 'W/""', `${E}0`, `"${E}`, `${E}"`, `'${E}'`, `w/"${E}"`, `"${E.toUpperCase()}"`, `W/W/"${E}"`, 'a,b']) t.notOk(ifNoneMatchHits(h, E), JSON.stringify(h));
});

t.test('1 MB lists complete (linear scan)', async (t) => {
  t.notOk(ifNoneMatchHits(','.repeat(1 << 20), E));
  t.notOk(ifNoneMatchHits('"'.repeat(1 << 20), E));
  t.notOk(ifNoneMatchHits(`${'W/"x", '.repeat(150_000)}`, E));
  t.ok(ifNoneMatchHits(`${'W/"x", '.repeat(150_000)}${E}`, E));
});
