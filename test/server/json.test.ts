import fc from 'fast-check';
import t from 'tap';
import { quote } from '../../src/server/json.js';

t.test('quote gives the text of JSON.stringify for any string', async (t) => {
  const awkward = fc.oneof(
    fc.string(),
    fc.string({ unit: 'grapheme' }),
    fc.string({ unit: 'binary' }),
    fc.constantFrom('', '"', '\\', '\u0000', '\u001f', '\u007f', '\u2028', '\u2029', '\ud800', '\udfff', '\ud83d\ude00', '/evaluate/v1/variant?a="b"'),
  );
  fc.assert(
    fc.property(awkward, (s) => quote(s) === JSON.stringify(s)),
    { numRuns: 5000, seed: 20261126 },
  );
  t.pass('5000 random strings');
});
