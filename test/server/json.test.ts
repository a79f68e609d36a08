import fc from 'fast-check';
import t from 'tap';
import { jsonNumber, jsonStrings, quote } from '../../src/server/json.js';

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

t.test('jsonNumber and jsonStrings give the text of JSON.stringify', async (t) => {
  fc.assert(
    fc.property(fc.oneof(fc.double(), fc.integer(), fc.constantFrom(0, -0, NaN, Infinity, -Infinity, 1e21, 1.5e-7, 0.000001)), (n) => jsonNumber(n) === JSON.stringify(n)),
    { numRuns: 3000, seed: 20261126 },
  );
  fc.assert(
    fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }), (list) => jsonStrings(list) === JSON.stringify(list)),
    { numRuns: 2000, seed: 20261126 },
  );
  t.equal(jsonStrings([]), '[]');
  t.equal(jsonStrings(['a', 'b"c']), '["a","b\\"c"]');
});
