/**
 * serializeAttachment's fast path (JSON.stringify with a sorted key allowlist) against the plain
 * encoder, on random JSON values whose keys and strings hit every corner of Go's encoding:
 * byte-order key sorting with astral characters, integer-like keys (which JS objects reorder),
 * `<>&` and U+2028/2029 escapes, lone surrogates, `__proto__` and other inherited names.
 */
import t from 'tap';
import fc from 'fast-check';
import { AttachmentError, serializeAttachment, serializeAttachmentPlain } from '../../src/state/attachment.js';

const KEYS = ['a', 'b', 'B', '10', '9', '0', '-1', '1.5', 'é', 'ｚ', '😀', '\ud7ff', '\ue000', '<k>', '&', '\u2028', '"q"', '\\', '__proto__', 'constructor', 'toString', 'toJSON', 'hasOwnProperty', ''];
const STRINGS = ['', 'x', '<b>Tom & Jerry</b>', 'line\u2028sep\u2029', '\ud800', '\udc00x', '😀', 'tab\t', '\u0000', '"', '\\'];

/** JSON text (so that JSON.parse builds the objects, with own `__proto__` keys as a parser does). */
const jsonText: fc.Arbitrary<string> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom(...STRINGS).map((s) => JSON.stringify(s)),
    fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -0, 1e21, 1e-7, 123456789012345680000)).map((n) => JSON.stringify(n)),
    fc.constantFrom('true', 'false', 'null'),
    fc.array(tie('value'), { maxLength: 4 }).map((xs) => `[${xs.join(',')}]`),
    fc.uniqueArray(fc.tuple(fc.constantFrom(...KEYS), tie('value')), { maxLength: 6, selector: ([k]) => k }).map(
      (entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`,
    ),
  ),
})).value as fc.Arbitrary<string>;

t.test('fast path == plain encoder on random values', async (t) => {
  let objects = 0;
  fc.assert(
    fc.property(jsonText, (text) => {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null) objects++;
      const fast = serializeAttachment(value);
      const plain = serializeAttachmentPlain(value);
      if (fast !== plain) throw new Error(`${text}\n fast  ${fast}\n plain ${plain}`);
      // Still JSON, and the same value.
      if (JSON.stringify(JSON.parse(fast)) !== JSON.stringify(JSON.parse(plain))) throw new Error('not the same value');
    }),
    { numRuns: 3000 },
  );
  t.ok(objects > 1000, `mostly objects and arrays (${objects})`);
});

t.test('fixed examples', async (t) => {
  t.equal(serializeAttachment(JSON.parse('{"9":1,"10":2,"a":{"9":[{"10":0,"9":0}]}}')), '{"10":2,"9":1,"a":{"9":[{"10":0,"9":0}]}}', 'byte order, not JS integer-key order');
  t.equal(serializeAttachment(JSON.parse('{"__proto__":{"x":1},"a":{}}')), '{"__proto__":{"x":1},"a":{}}', 'an own __proto__ key, and no inherited one elsewhere');
  t.equal(serializeAttachment({ a: {}, b: { constructor: 1 } }), '{"a":{},"b":{"constructor":1}}', 'inherited methods are not written');
  t.equal(serializeAttachment({ '\ue000': 1, '😀': 2 }), '{"\ue000":1,"😀":2}', 'U+E000 sorts before U+1F600 (UTF-8 bytes)');
  t.equal(serializeAttachment({ h: '<a&b>\u2028' }), '{"h":"\\u003ca\\u0026b\\u003e\\u2028"}');
  t.equal(serializeAttachment([1, 'x', null, true]), '[1,"x",null,true]');
  t.equal(serializeAttachment('s<'), '"s\\u003c"');
  t.equal(serializeAttachment(null), 'null');
  const wide = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, i]));
  t.equal(serializeAttachment(wide), serializeAttachmentPlain(wide), 'many keys: the plain encoder');
  t.throws(() => serializeAttachment({ a: [1, { b: Infinity }] }), /Infinity cannot be represented/);
  t.throws(() => serializeAttachment({ a: NaN }), /NaN cannot be represented/);
  t.ok(attempt(() => serializeAttachment({ a: NaN })) instanceof AttachmentError, 'an AttachmentError');
  let deep: unknown = 1;
  for (let i = 0; i < 300; i++) deep = { d: deep };
  t.throws(() => serializeAttachment(deep), /nested deeper/);
});

function attempt(f: () => unknown): unknown {
  try {
    return f();
  } catch (err) {
    return err;
  }
}
