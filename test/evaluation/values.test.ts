/**
 * Go-exact parsers. Expected values come from flipt-semantics.md §2.6 and from Go's documented
 * strconv / time / encoding/json behaviour (Go's own test tables for ParseFloat are the source of
 * the numeric cases).
 */
import t from 'tap';
import fc from 'fast-check';
import {
  compareInstant,
  isPlainDecimal,
  parseGoBool,
  parseGoFloat,
  parseGoTime,
  parseNumberArray,
  parseStringArray,
} from '../../src/evaluation/values.js';

t.test('parseGoFloat: plain decimals', async (t) => {
  const ok: Array<[string, number]> = [
    ['1', 1],
    ['+1', 1],
    ['-1', -1],
    ['-0.1', -0.1],
    ['1e23', 1e23],
    ['1E23', 1e23],
    ['100000000000000000000000', 1e23],
    ['625e-3', 0.625],
    ['3.14159', 3.14159],
    ['.5', 0.5],
    ['5.', 5],
    ['1.e2', 100],
    ['0e+01234567890123456789', 0],
    ['1e-400', 0], // underflow is not an error in Go
    ['2e-324', 0],
    ['1.7976931348623157e308', 1.7976931348623157e308],
    ['1.7976931348623158e308', 1.7976931348623157e308], // rounds down to max
    ['22.222222222222222', 22.22222222222222],
    ['2.' + '2'.repeat(4000) + 'e+1', 22.22222222222222],
  ];
  for (const [s, want] of ok) t.equal(parseGoFloat(s), want, s);
  t.ok(Object.is(parseGoFloat('-0'), -0), '-0 keeps its sign');
});

t.test('parseGoFloat: out of range is an error (ErrRange), not Inf', async (t) => {
  for (const s of ['1e309', '2e308', '-1e400', '1.797693134862315808e308', '1e+4294967296', '0x1p1024', '-0x1p1024']) {
    t.equal(parseGoFloat(s), undefined, s);
  }
});

t.test('parseGoFloat: Inf / Infinity / NaN case-insensitive', async (t) => {
  t.equal(parseGoFloat('inf'), Infinity);
  t.equal(parseGoFloat('+INF'), Infinity);
  t.equal(parseGoFloat('-Inf'), -Infinity);
  t.equal(parseGoFloat('Infinity'), Infinity);
  t.equal(parseGoFloat('-Infinity'), -Infinity);
  t.equal(parseGoFloat('+INFINITY'), Infinity);
  t.ok(Number.isNaN(parseGoFloat('nan')));
  t.ok(Number.isNaN(parseGoFloat('NaN')));
  t.ok(Number.isNaN(parseGoFloat('NAN')));
  // Go only lets a sign precede inf/infinity, not nan; partial words are syntax errors.
  for (const s of ['+nan', '-NaN', 'infin', 'infinit', 'infx', 'nanx', 'in', 'na', 'Infinityy']) {
    t.equal(parseGoFloat(s), undefined, s);
  }
});

t.test('parseGoFloat: hex floats need a p exponent', async (t) => {
  const ok: Array<[string, number]> = [
    ['0x1p0', 1],
    ['0x1p4', 16],
    ['0x1p-1', 0.5],
    ['0x1ep-1', 15],
    ['-0x1ep-1', -15],
    ['0x1fFe2.p0', 131042],
    ['0x1fFe2.P0', 131042],
    ['0X1P4', 16],
    ['-0x2p3', -16],
    ['0x0.fp4', 15],
    ['0x0.fp0', 0.9375],
    ['0x.1p-2', 0.015625],
    ['0x1p-200', 6.223015277861142e-61],
    ['0x1.fffffffffffffp1023', 1.7976931348623157e308],
    ['0x1.fffffffffffff7fffp1023', 1.7976931348623157e308],
    ['0x1.00000000000008p0', 1], // halfway: round to even (down)
    ['0x1.000000000000081p0', 1.0000000000000002],
    ['0x1.00000000000018p0', 1.0000000000000004], // halfway: round to even (up)
    ['0x0.00000000000010p-1022', 5e-324],
    ['0x0.000000000000081p-1022', 5e-324],
    ['0x0.00000000000008p-1022', 0],
    ['0x0.00000003456789p-1022', 1.6946496e-317],
    ['0x0.00000003456788p-1022', 1.694649e-317],
    ['0x1p-4294967296', 0],
  ];
  for (const [s, want] of ok) t.equal(parseGoFloat(s), want, s);
  for (const s of ['0x1e2', '1p2', '0x', '0x.', '0x1', '0x.1', '0x1p', '0x1p+', '0x1p-', '0x.p1', '0x1.fffffffffffff8p1023']) {
    t.equal(parseGoFloat(s), undefined, s);
  }
});

t.test('parseGoFloat: underscores follow Go literal rules (also without a base prefix)', async (t) => {
  t.equal(parseGoFloat('1_23.50_0_0e+1_2'), 1.235e14);
  t.equal(parseGoFloat('1_000'), 1000);
  t.equal(parseGoFloat('0_1'), 1);
  t.equal(parseGoFloat('0x_1_2.3_4_5p+1_2'), 74565);
  t.equal(parseGoFloat('-0x1_ep-1'), -15);
  const bad = [
    '-_123.5e+12', '+_123.5e+12', '_123.5e+12', '1__23.5e+12', '123_.5e+12', '123._5e+12', '123.5_e+12',
    '123.5__0e+12', '123.5e_+12', '123.5e+_12', '123.5e_-12', '123.5e-_12', '123.5e+1__2', '123.5e+12_',
    '-_0x12.345p+12', '_0x12.345p+12', '0x__12.345p+12', '0x1__2.345p+12', '0x12_.345p+12', '0x12._345p+12',
    '0x12.3__45p+12', '0x12.345_p+12', '0x12.345p_+12', '0x12.345p+_12', '0x12.345p+1__2', '0x12.345p+12_',
    '1_', '_1',
  ];
  for (const s of bad) t.equal(parseGoFloat(s), undefined, s);
});

t.test('parseGoFloat: syntax errors', async (t) => {
  const bad = ['', ' ', ' 1', '1 ', '\t1', '1x', '1.1.', '1e', '1e-', '.e-1', '.', '-', '+', '1\u00002', '++1', '--1', '0b1', '0o7', '1e100x', 'e1', '١', '1,5', '0x1p1.5', 'Inf ', '1f'];
  for (const s of bad) t.equal(parseGoFloat(s), undefined, JSON.stringify(s));
});

/** The regex isPlainDecimal replaced (quadratic on a long run of digits that fails to match). */
const FORMER_PLAIN_DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

t.test('isPlainDecimal accepts exactly what the former regex did (random short strings)', async (t) => {
  const chars = ['0', '1', '9', '+', '-', '.', 'e', 'E', ' ', 'x', '_', 'p', '\n', '٣', ''];
  let accepted = 0;
  fc.assert(
    // Half the strings use only number characters, so that many are accepted.
    fc.property(fc.oneof(fc.array(fc.constantFrom(...chars), { maxLength: 12 }), fc.array(fc.constantFrom(...chars.slice(0, 8)), { maxLength: 8 })), (parts) => {
      const s = parts.join('');
      const want = FORMER_PLAIN_DECIMAL.test(s);
      if (want) accepted++;
      return isPlainDecimal(s) === want;
    }),
    { seed: 11_4, numRuns: 50_000 },
  );
  t.ok(accepted > 3_000, `${accepted} accepted strings among them`);
});

t.test('parseGoFloat on 1 MB values completes (digits that fail to match at the end)', async (t) => {
  const digits = '1'.repeat(1024 * 1024);
  t.equal(isPlainDecimal(`${digits}x`), false);
  t.equal(parseGoFloat(`${digits}x`), undefined);
  t.equal(parseGoFloat(`${digits}.${digits}e`), undefined);
  t.equal(parseGoFloat(`${digits}e+${digits}x`), undefined);
  t.equal(parseGoFloat(`0x${digits}p`), undefined);
  t.equal(parseGoFloat(`${'1_'.repeat(512 * 1024)}x`), undefined);
  t.equal(parseGoFloat(digits), undefined, 'out of range');
  t.equal(parseGoFloat(`0.${digits}`), 0.1111111111111111);
});

t.test('parseGoTime, parseStringArray, parseNumberArray on 1 MB values complete', async (t) => {
  const digits = '1'.repeat(1024 * 1024);
  t.equal(parseGoTime(`2024-01-01T10:00:00.${digits}x`), undefined);
  t.equal(parseGoTime(`2024-01-01T10:00:00.${digits}Z`)?.nanos, 111_111_111);
  t.equal(parseStringArray(`["${digits}"`), undefined);
  t.equal(parseNumberArray(`[${digits}x]`), undefined);
});

t.test('parseGoBool', async (t) => {
  for (const s of ['1', 't', 'T', 'TRUE', 'true', 'True']) t.equal(parseGoBool(s), true, s);
  for (const s of ['0', 'f', 'F', 'FALSE', 'false', 'False']) t.equal(parseGoBool(s), false, s);
  for (const s of ['', 'yes', 'no', 'tRUE', 'fAlse', ' true', 'true ', '2', 'on', 'y']) t.equal(parseGoBool(s), undefined, s);
});

const sec = (iso: string) => Date.parse(iso) / 1000;

t.test('parseGoTime: RFC 3339', async (t) => {
  t.same(parseGoTime('2006-01-02T15:04:05Z'), { seconds: sec('2006-01-02T15:04:05Z'), nanos: 0 });
  t.same(parseGoTime('2006-01-02T15:04:05+07:00'), { seconds: sec('2006-01-02T08:04:05Z'), nanos: 0 });
  t.same(parseGoTime('2006-01-02T15:04:05-07:30'), { seconds: sec('2006-01-02T22:34:05Z'), nanos: 0 });
  t.same(parseGoTime('2006-01-02T15:04:05.5Z'), { seconds: sec('2006-01-02T15:04:05Z'), nanos: 500_000_000 });
  t.same(parseGoTime('2006-01-02T15:04:05.123456789Z'), { seconds: sec('2006-01-02T15:04:05Z'), nanos: 123_456_789 });
  // Go truncates (does not round) digits past the ninth.
  t.same(parseGoTime('2006-01-02T15:04:05.1234567899999Z'), { seconds: sec('2006-01-02T15:04:05Z'), nanos: 123_456_789 });
  // Go's general layout parser (the fallback behind time.Parse's RFC 3339 fast path) accepts a comma
  // fraction, a one-digit hour, and zone offsets up to 24:60.
  t.same(parseGoTime('2006-01-02T15:04:05,25Z'), { seconds: sec('2006-01-02T15:04:05Z'), nanos: 250_000_000 });
  t.same(parseGoTime('2006-01-02T5:04:05Z'), { seconds: sec('2006-01-02T05:04:05Z'), nanos: 0 });
  t.same(parseGoTime('2006-01-02T15:04:05+24:00'), { seconds: sec('2006-01-01T15:04:05Z'), nanos: 0 });
  t.same(parseGoTime('2006-01-02T15:04:05-00:60'), { seconds: sec('2006-01-02T16:04:05Z'), nanos: 0 });
  t.same(parseGoTime('2024-02-29T00:00:00Z'), { seconds: sec('2024-02-29T00:00:00Z'), nanos: 0 });
  t.same(parseGoTime('0000-01-01T00:00:00Z'), { seconds: -62167219200, nanos: 0 });
  t.same(parseGoTime('9999-12-31T23:59:59Z'), { seconds: 253402300799, nanos: 0 });
  t.same(parseGoTime('1969-12-31T23:59:59.5Z'), { seconds: -1, nanos: 500_000_000 });
});

t.test('parseGoTime: date only is midnight UTC', async (t) => {
  t.same(parseGoTime('2006-01-02'), { seconds: sec('2006-01-02T00:00:00Z'), nanos: 0 });
  t.equal(compareInstant(parseGoTime('2006-01-02')!, parseGoTime('2006-01-02T00:00:00Z')!), 0);
  t.same(parseGoTime('0099-03-01'), { seconds: sec('0099-03-01T00:00:00Z'), nanos: 0 }); // no 19xx mapping
});

t.test('parseGoTime: rejects', async (t) => {
  const bad = [
    '', '2006', '2006-01', '2006-1-02', '2006-01-2', '06-01-02', '+2006-01-02', '2006-13-01', '2006-00-01', '2006-01-00',
    '2006-02-29', '2023-02-29T00:00:00Z', '2006-04-31', '2006-01-02T', '2006-01-02T15:04Z', '2006-01-02T15:04:05',
    '2006-01-02t15:04:05Z', '2006-01-02 15:04:05Z', '2006-01-02T15:04:05z', '2006-01-02T24:00:00Z', '2006-01-02T23:60:00Z',
    '2006-01-02T23:59:60Z', '2006-01-02T15:4:05Z', '2006-01-02T15:04:5Z', '2006-01-02T15:04:05.Z', '2006-01-02T15:04:05+0700',
    '2006-01-02T15:04:05+07', '2006-01-02T15:04:05+25:00', '2006-01-02T15:04:05+07:61', '2006-01-02T15:04:05ZZ',
    ' 2006-01-02', '2006-01-02 ', '2006-01-02T15:04:05.123Z ', '2006-01-02T15:04:05 Z', '2006-01-02T15:04:05UTC',
    '２００６-01-02', '2006-01-02Z', '2006-01-02T15:04:05-7:00',
  ];
  for (const s of bad) t.equal(parseGoTime(s), undefined, s);
});

t.test('compareInstant orders by seconds then nanos', async (t) => {
  const a = parseGoTime('2006-01-02T15:04:05.000000001Z')!;
  const b = parseGoTime('2006-01-02T15:04:05.000000002Z')!;
  const c = parseGoTime('2006-01-02T16:04:05+01:00')!; // same instant as 15:04:05Z
  t.ok(compareInstant(a, b) < 0);
  t.ok(compareInstant(b, a) > 0);
  t.equal(compareInstant(c, parseGoTime('2006-01-02T15:04:05Z')!), 0);
  t.ok(compareInstant(parseGoTime('1969-12-31T23:59:59.9Z')!, parseGoTime('1970-01-01T00:00:00Z')!) < 0);
});

t.test('parseStringArray: encoding/json into []string', async (t) => {
  t.same(parseStringArray('["a","b"]'), ['a', 'b']);
  t.same(parseStringArray(' [ "a" , "b\\u0041" ] '), ['a', 'bA']);
  t.same(parseStringArray('[]'), []);
  // Go: top-level null leaves the slice nil (no error); a null element is the zero value "".
  t.same(parseStringArray('null'), []);
  t.same(parseStringArray('["a",null]'), ['a', '']);
  for (const s of ['', 'a', '"a"', '[1]', '["a",1]', '["a",true]', '[["a"]]', '[{"a":"b"}]', '{"a":"b"}', '[a]', '["a",]', '["a"] x', "['a']", '1', 'true']) {
    t.equal(parseStringArray(s), undefined, s);
  }
});

t.test('parseNumberArray: encoding/json into []float64', async (t) => {
  t.same(parseNumberArray('[1, 2.5]'), [1, 2.5]);
  t.same(parseNumberArray('[3, 3.14159, -1e3]'), [3, 3.14159, -1000]);
  t.same(parseNumberArray('[]'), []);
  t.same(parseNumberArray('null'), []);
  t.same(parseNumberArray('[1,null]'), [1, 0]);
  for (const s of ['', '1', '["1"]', '[1,"2"]', '[true]', '[1e400]', '[-1e400]', '[01]', '[+1]', '[.5]', '[0x10]', '[NaN]', '[Infinity]', '[1,]', '{}', '[[1]]']) {
    t.equal(parseNumberArray(s), undefined, s);
  }
});
