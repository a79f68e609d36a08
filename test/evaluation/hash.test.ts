/** CRC-32 and the two hash orders, pinned to the worked examples of flipt-semantics.md §2.10. */
import t from 'tap';
import fc from 'fast-check';
import zlib from 'node:zlib';
import { crc32String, thresholdValue, variantBucket } from '../../src/evaluation/hash.js';

// [input string, crc32, bucket/percentile] straight from the §2.10 table.
const variantExamples: Array<[string, string, number, number]> = [
  ['foo', '1', 3476655244, 244], // #1
  ['foo', '2', 1446042934, 934], // #2
  ['foo', '123', 1614934253, 253], // #3, #4
  ['flag_001', 'some-fixed-entity-id', 1828167553, 553], // #7
  ['flag_002', 'some-fixed-entity-id', 401153378, 378], // #8
  ['flag_variant_and_segments', 'some-fixed-entity-id', 3583434531, 531], // #9
  ['flag_using_entity_id', 'user@flipt.io', 3004862939, 939], // #10
  ['foo', '10', 270150054, 54], // #10a
  ['foo', '01', 2114332785, 785], // #10b
];
const booleanExamples: Array<[string, string, number, number]> = [
  ['test-entity', 'test-flag', 4255329765, 65], // #11, #12, #13
  ['fixed', 'flag_boolean', 4136381709, 9], // #14
  ['hello', 'flag_boolean', 2534128796, 96], // #15
  ['beover50', 'boolean_disabled', 2629241899, 99], // #16
  ['fixed', 'boolean_disabled', 905904038, 38], // #17
];

t.test('§2.10 variant examples: crc32(flagKey ‖ entityId), bucket = crc % 1000', async (t) => {
  for (const [flagKey, entityId, crc, bucket] of variantExamples) {
    t.equal(crc32String(flagKey + entityId, 0), crc, `crc32(${flagKey}${entityId})`);
    t.equal(crc32String(entityId, crc32String(flagKey, 0)), crc, `chained crc32(${flagKey}, ${entityId})`);
    t.equal(variantBucket(crc32String(flagKey, 0), entityId), bucket, `bucket ${flagKey}/${entityId}`);
  }
});

t.test('§2.10 boolean examples: crc32(entityId ‖ flagKey), n = crc % 100', async (t) => {
  for (const [entityId, flagKey, crc, n] of booleanExamples) {
    t.equal(crc32String(entityId + flagKey, 0), crc, `crc32(${entityId}${flagKey})`);
    t.equal(thresholdValue(entityId, flagKey), n, `n ${entityId}/${flagKey}`);
  }
});

t.test('the two orders differ', async (t) => {
  // Same strings, opposite concatenation: a regression that swapped them would show here.
  t.not(crc32String('test-flag' + 'test-entity', 0) % 100, thresholdValue('test-entity', 'test-flag'));
  t.equal(crc32String('test-flag' + 'test-entity', 0) % 1000, variantBucket(crc32String('test-flag', 0), 'test-entity'));
});

t.test('known CRC-32 check values', async (t) => {
  t.equal(crc32String('', 0), 0);
  t.equal(crc32String('123456789', 0), 0xcbf43926); // the standard CRC-32/ISO-HDLC check value
  t.equal(crc32String('The quick brown fox jumps over the lazy dog', 0), 0x414fa339);
});

t.test('non-ASCII is hashed over its UTF-8 bytes', async (t) => {
  for (const s of ['é', 'héllo', '日本語', 'a😀b', '😀', 'ß-Ω-€', 'x\u0080', '\u07ff\u0800\uffff']) {
    t.equal(crc32String(s, 0), zlib.crc32(Buffer.from(s, 'utf8')), s);
  }
  // Lone surrogates are encoded as U+FFFD, as Buffer.from and Go's JSON decoder do.
  for (const s of ['\ud800', 'a\udc00b', '\ud83d', 'x\ud83dy', '\ude00\ud83d']) {
    t.equal(crc32String(s, 0), zlib.crc32(Buffer.from(s, 'utf8')), JSON.stringify(s));
  }
  t.equal(crc32String('\ud800', 0), crc32String('\ufffd', 0));
});

t.test('property: equals zlib over UTF-8 bytes; chaining hashes the two encodings back to back', async (t) => {
  // Chaining encodes each part on its own (a lone surrogate at the seam stays U+FFFD), which is
  // what Go hashes: the bytes of two separately decoded strings, concatenated.
  const str = fc.string({ unit: 'binary', maxLength: 40 });
  fc.assert(
    fc.property(str, str, (a, b) => {
      const bytesA = Buffer.from(a, 'utf8');
      const joined = zlib.crc32(Buffer.concat([bytesA, Buffer.from(b, 'utf8')]));
      return crc32String(a, 0) === zlib.crc32(bytesA) && crc32String(b, crc32String(a, 0)) === joined;
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 random pairs agree');
});
