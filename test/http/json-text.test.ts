import fc from 'fast-check';
import t from 'tap';
import { decimalText, jsonNumber, jsonStrings, quote } from '../../src/http/json-text.js';

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

t.test('decimalText(n, places) is the text of JSON.stringify(n / 10 ** places)', async (t) => {
  const places = fc.integer({ min: 0, max: 6 });
  const n = fc.oneof(
    fc.integer({ min: 0, max: 10_000_000 }),
    fc.integer({ min: 0, max: 999_999_999_999_999 }),
    fc.maxSafeInteger(),
    fc.double({ noNaN: false }),
    fc.constantFrom(0, 1, 10, 100, 1_000_000, 1_000_001, 999_999_999_999_999, 1e15, 2 ** 53, -1, -0, 0.5, NaN, Infinity),
  );
  fc.assert(
    fc.property(n, places, (v, p) => decimalText(v, p) === JSON.stringify(v / 10 ** p)),
    { numRuns: 20_000, seed: 20261126 },
  );
  for (let v = 0; v < 100_000; v++) if (decimalText(v, 6) !== JSON.stringify(v / 1e6)) t.fail(`${v} ns`);
  t.equal(decimalText(45_123, 6), '0.045123');
  t.equal(decimalText(1, 6), '0.000001');
  t.equal(decimalText(12_500, 3), '12.5');
  t.equal(decimalText(7, 7), JSON.stringify(7e-7), 'more places than it formats itself');
});
