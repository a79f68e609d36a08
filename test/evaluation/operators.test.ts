/**
 * Every operator of every comparison type (§2.6): match, non-match, missing property, unparsable
 * values. Each row compiles one constraint and matches it against one value.
 */
import t, { type Test } from 'tap';
import { compileConstraint } from '../../src/evaluation/compile-segments.js';
import { matchConstraint } from '../../src/evaluation/constraints.js';
import { evaluateVariant } from '../../src/evaluation/index.js';
import { req, segment, snapshot, variantFlag } from './fixture.js';

/** [operator, constraint value, context value (undefined = property absent), expected] */
type Row = [op: string, value: string, v: string | undefined, want: boolean];

function run(t: Test, type: string, rows: Row[]) {
  for (const [op, value, v, want] of rows) {
    const c = compileConstraint(type, op, 'p', value);
    if (c === null) throw new Error('unexpected unknown type');
    const context: Record<string, string> = v === undefined ? {} : { p: v };
    const entityId = type === 'ENTITY_ID_COMPARISON_TYPE' ? (v ?? '') : 'some-entity';
    t.equal(matchConstraint(c, entityId, type === 'ENTITY_ID_COMPARISON_TYPE' ? {} : context), want, `${op} ${label(value)} on ${label(v)}`);
  }
}
/** ASCII-only labels: TAP readers treat U+0085 / U+2028 in a test name as line breaks. */
const label = (s: string | undefined) =>
  s === undefined ? 'absent' : JSON.stringify(s).replace(/[^\x20-\x7e]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);

const stringRows: Row[] = [
  ['eq', 'foo', 'foo', true],
  ['eq', 'foo', 'Foo', false],
  ['eq', 'foo', ' foo', false], // exact, untrimmed
  ['eq', 'foo', undefined, false],
  ['eq', '', '', false], // v == "" is false for every operator but empty/notempty
  ['eq', '', undefined, false],
  ['neq', 'foo', 'bar', true],
  ['neq', 'foo', 'foo', false],
  ['neq', 'foo', undefined, false],
  ['neq', 'foo', '', false],
  ['empty', '', undefined, true],
  ['empty', '', '', true],
  ['empty', 'ignored', ' \t\n\v\f\r', true],
  ['empty', '', '\u00a0\u0085\u2003\u3000\u2028', true], // Go unicode.IsSpace
  ['empty', '', '\ufeff', false], // BOM is not whitespace for Go (it is for JS trim)
  ['empty', '', '\u200b', false],
  ['empty', '', 'x', false],
  ['empty', '', ' x ', false],
  ['notempty', '', 'x', true],
  ['notempty', '', ' x ', true],
  ['notempty', '', '\ufeff', true],
  ['notempty', '', '  ', false],
  ['notempty', '', undefined, false],
  ['prefix', 'foo', 'foobar', true],
  ['prefix', 'foo', '  foobar', true], // prefix is checked on the trimmed value
  ['prefix', 'foo', '\u3000foo', true],
  ['prefix', 'foo ', 'foo bar', true],
  ['prefix', 'foo', 'barfoo', false],
  ['prefix', 'foo', 'fo', false],
  ['prefix', 'foo', undefined, false],
  ['prefix', '', '   ', true], // trimmed "" has the prefix ""
  ['prefix', ' foo', ' foo', false], // the constraint value is not trimmed, the input is
  ['suffix', 'bar', 'foobar', true],
  ['suffix', 'bar', 'foobar \n', true],
  ['suffix', 'bar', 'barfoo', false],
  ['suffix', 'bar', 'ar', false],
  ['suffix', 'bar', undefined, false],
  ['suffix', 'bar ', 'foobar ', false],
  ['contains', 'oo', 'foo', true],
  ['contains', 'oo', 'bar', false],
  ['contains', 'oo', undefined, false],
  ['contains', ' ', 'a b', true], // untrimmed
  ['contains', '', 'x', true],
  ['notcontains', 'oo', 'bar', true],
  ['notcontains', 'oo', 'foo', false],
  ['notcontains', 'oo', undefined, false],
  ['notcontains', 'oo', '', false],
  ['isoneof', '["a","b"]', 'a', true],
  ['isoneof', '["a","b"]', 'c', false],
  ['isoneof', '["a","b"]', 'A', false],
  ['isoneof', '["a","b"]', undefined, false],
  ['isoneof', '["a",null]', '', false], // "" never reaches the list
  ['isoneof', 'a,b', 'a', false], // unparsable list → false
  ['isoneof', '["a",1]', 'a', false], // non-string element → unparsable
  ['isoneof', 'null', 'a', false],
  ['isnotoneof', '["a","b"]', 'c', true],
  ['isnotoneof', '["a","b"]', 'a', false],
  ['isnotoneof', '["a","b"]', undefined, false],
  ['isnotoneof', 'a,b', 'c', false], // unparsable list → false for both operators
  ['isnotoneof', '[1,2]', 'c', false],
  ['isnotoneof', 'null', 'c', true], // Go: json null → empty list, no error
  ['present', '', 'x', false], // not a string operator
  ['notpresent', '', undefined, false],
  ['lt', 'b', 'a', false],
  ['EQ', 'foo', 'foo', false], // operators are case-sensitive
];

t.test('STRING_COMPARISON_TYPE', async (t) => run(t, 'STRING_COMPARISON_TYPE', stringRows));

t.test('ENTITY_ID_COMPARISON_TYPE: the string operators on the entity id', async (t) => {
  run(t, 'ENTITY_ID_COMPARISON_TYPE', stringRows);
  // The property is ignored: a context value of that name does not stand in for the entity id.
  const c = compileConstraint('ENTITY_ID_COMPARISON_TYPE', 'eq', 'user', 'alice')!;
  t.equal(matchConstraint(c, 'bob', { user: 'alice' }), false);
  t.equal(matchConstraint(c, 'alice', { user: 'bob' }), true);
  const empty = compileConstraint('ENTITY_ID_COMPARISON_TYPE', 'empty', 'whatever', '')!;
  t.equal(matchConstraint(empty, '', { whatever: 'x' }), true);
});

t.test('NUMBER_COMPARISON_TYPE', async (t) =>
  run(t, 'NUMBER_COMPARISON_TYPE', [
    ['eq', '42', '42', true],
    ['eq', '42', '42.0', true],
    ['eq', '42', '4.2e1', true],
    ['eq', '42', '0x2Ap0', true], // Go ParseFloat reads hex floats
    ['eq', '42', '+42', true],
    ['eq', '42', '4_2', true], // Go literal underscores
    ['eq', '42', ' 42', false], // ParseFloat does not trim
    ['eq', '42', '42abc', false],
    ['eq', '42', '43', false],
    ['eq', '42', undefined, false],
    ['eq', '1_000', '1000', true],
    ['eq', '0x10', '16', false], // hex without p exponent does not parse → never
    ['eq', 'abc', 'abc', false], // unparsable constraint value → never
    ['eq', 'NaN', 'NaN', false], // NaN == NaN is false
    ['neq', '42', '43', true],
    ['neq', '42', '42', false],
    ['neq', '42', '', false],
    ['neq', '42', 'abc', false], // unparsable context value → false
    ['neq', '42', 'NaN', true], // NaN != 42
    ['neq', 'NaN', '1', true],
    ['neq', 'abc', '1', false],
    ['lt', '10', '9.99', true],
    ['lt', '10', '10', false],
    ['lt', '10', '-inf', true],
    ['lt', '10', 'NaN', false],
    ['lt', '10', undefined, false],
    ['lte', '10', '10', true],
    ['lte', '10', '10.0001', false],
    ['lte', '10', '-10', true],
    ['gt', '10', '10.5', true],
    ['gt', '10', '10', false],
    ['gt', '10', 'Infinity', true],
    ['gt', '10', '1e400', false], // out of range → ParseFloat error → false
    ['gt', '-1e400', '0', false], // out-of-range constraint value → never
    ['gte', '10', '10', true],
    ['gte', '10', '9', false],
    ['gte', '10', '', false],
    ['le', '10', '1', false], // Flipt v1's evaluator has no `le`: never
    ['le', '10', '10', false],
    ['isoneof', '[3, 3.14159]', '3.14159', true],
    ['isoneof', '[3, 3.14159]', '3', true],
    ['isoneof', '[3, 3.14159]', '3.0', true],
    ['isoneof', '[3, 3.14159]', '4', false],
    ['isoneof', '[3, 3.14159]', '', false],
    ['isoneof', '[3, 3.14159]', 'abc', false],
    ['isoneof', '[0]', '-0', true],
    ['isoneof', '[3,"4"]', '3', false], // a string element → unparsable list → false
    ['isoneof', '["3"]', '3', false],
    ['isoneof', '[1,null]', '0', true], // Go: null element → 0
    ['isnotoneof', '[3, 3.14159]', '4', true],
    ['isnotoneof', '[3, 3.14159]', '3', false],
    ['isnotoneof', '[3, 3.14159]', 'abc', false],
    ['isnotoneof', '[3, 3.14159]', undefined, false],
    ['isnotoneof', '[3,"4"]', '5', false],
    ['isnotoneof', 'null', '5', true],
    ['isnotoneof', '[1]', 'NaN', true],
    ['present', '', '1', true],
    ['present', '', 'abc', true], // present does not parse
    ['present', '', '  ', false],
    ['present', '', undefined, false],
    ['notpresent', '', undefined, true],
    ['notpresent', '', ' ', true],
    ['notpresent', '', '1', false],
    ['empty', '', undefined, false], // empty/notempty are not number operators
    ['notempty', '', '1', false],
    ['contains', '1', '1', false],
  ]));

t.test('BOOLEAN_COMPARISON_TYPE', async (t) =>
  run(t, 'BOOLEAN_COMPARISON_TYPE', [
    ['true', '', 'true', true],
    ['true', '', 'TRUE', true],
    ['true', '', 'True', true],
    ['true', '', '1', true],
    ['true', '', 't', true],
    ['true', '', 'T', true],
    ['true', '', 'false', false],
    ['true', '', 'yes', false],
    ['true', '', ' true', false],
    ['true', '', 'tRUE', false],
    ['true', '', undefined, false],
    ['true', 'false', 'true', true], // the constraint value is ignored
    ['false', '', 'false', true],
    ['false', '', 'FALSE', true],
    ['false', '', 'False', true],
    ['false', '', '0', true],
    ['false', '', 'f', true],
    ['false', '', 'F', true],
    ['false', '', 'true', false],
    ['false', '', 'no', false], // unparsable → false, not "not true"
    ['false', '', '', false],
    ['false', '', undefined, false],
    ['present', '', 'garbage', true],
    ['present', '', undefined, false],
    ['notpresent', '', undefined, true],
    ['notpresent', '', 'true', false],
    ['eq', 'true', 'true', false], // not a boolean operator
    ['neq', 'true', 'false', false],
  ]));

t.test('DATETIME_COMPARISON_TYPE', async (t) =>
  run(t, 'DATETIME_COMPARISON_TYPE', [
    ['eq', '2006-01-02T15:04:05Z', '2006-01-02T15:04:05Z', true],
    ['eq', '2006-01-02T15:04:05Z', '2006-01-02T16:04:05+01:00', true], // same instant
    ['eq', '2006-01-02T15:04:05Z', '2006-01-02T15:04:05.000000001Z', false], // nanosecond precision
    ['eq', '2006-01-02T15:04:05.123456789Z', '2006-01-02T15:04:05.123456789Z', true],
    ['eq', '2006-01-02', '2006-01-02T00:00:00Z', true], // date-only = midnight UTC
    ['eq', '2006-01-02T00:00:00Z', '2006-01-02', true],
    ['eq', '2006-01-02T15:04:05Z', 'garbage', false],
    ['eq', '2006-01-02T15:04:05Z', undefined, false],
    ['eq', 'garbage', '2006-01-02', false], // unparsable constraint value → never
    ['neq', '2006-01-02', '2006-01-03', true],
    ['neq', '2006-01-02', '2006-01-02', false],
    ['neq', '2006-01-02', 'soon', false],
    ['neq', '2006-01-02', '', false],
    ['lt', '2006-01-02', '2006-01-01T23:59:59.999999999Z', true],
    ['lt', '2006-01-02', '2006-01-02', false],
    ['lt', '2006-01-02', '2006-01-02T00:00:00-00:01', false], // 00:01 UTC
    ['lt', '2006-01-02', '2006-01-02T00:00:00+00:01', true], // 23:59 UTC the day before
    ['lte', '2006-01-02', '2006-01-02', true],
    ['lte', '2006-01-02', '2006-01-02T00:00:00.000000001Z', false],
    ['gt', '2006-01-02', '2006-01-02T00:00:00.000000001Z', true],
    ['gt', '2006-01-02', '2006-01-02', false],
    ['gt', '2006-01-02', '1999-12-31', false],
    ['gte', '2006-01-02', '2006-01-02', true],
    ['gte', '2006-01-02', '2006-01-01', false],
    ['gte', '2006-01-02', undefined, false],
    ['le', '2006-01-02', '2000-01-01', false], // never
    ['present', '', 'not a date', true],
    ['present', '', undefined, false],
    ['notpresent', '', undefined, true],
    ['notpresent', '', '2006-01-02', false],
    ['empty', '', undefined, false],
  ]));

t.test('an unknown comparison type compiles to null (its segment fails the request)', async (t) => {
  t.equal(compileConstraint('UNKNOWN_COMPARISON_TYPE', 'eq', 'p', 'x'), null);
  t.equal(compileConstraint('toString', 'eq', 'p', 'x'), null);
});

t.test('end to end: a context value reaches the constraint through the snapshot', async (t) => {
  const s = snapshot({
    default: {
      segments: [
        segment('adults', 'ALL_MATCH_TYPE', [
          ['NUMBER_COMPARISON_TYPE', 'age', 'gte', '18'],
          ['DATETIME_COMPARISON_TYPE', 'signup', 'lt', '2024-01-01'],
          ['BOOLEAN_COMPARISON_TYPE', 'verified', 'true'],
          ['STRING_COMPARISON_TYPE', 'country', 'isoneof', '["fr","de"]'],
          ['ENTITY_ID_COMPARISON_TYPE', 'ignored', 'prefix', 'user-'],
        ]),
      ],
      flags: [variantFlag({ key: 'f', variants: ['on'], rules: [{ segment: 'adults', distributions: [['on', 100]] }] })],
    },
  });
  const ctx = { age: '30', signup: '2023-06-01T12:00:00+02:00', verified: 'T', country: 'fr' };
  t.equal(evaluateVariant(s, req('f', 'user-1', ctx)).variantKey, 'on');
  t.equal(evaluateVariant(s, req('f', 'admin-1', ctx)).match, false);
  t.equal(evaluateVariant(s, req('f', 'user-1', { ...ctx, age: '17.9' })).match, false);
  t.equal(evaluateVariant(s, req('f', 'user-1', { ...ctx, country: 'es' })).match, false);
});
