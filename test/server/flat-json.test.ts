/**
 * flat-json.ts reads a body exactly as JSON.parse does, or declines: differential against
 * JSON.parse over random bodies (plain and awkward strings, nesting, other value kinds, random
 * whitespace, duplicate keys, truncation and trailing text).
 */
import fc from 'fast-check';
import t from 'tap';
import { readFlatJsonObject } from '../../src/server/flat-json.js';

const text = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.constantFrom('', 'default', 'flag1', 'user-42', '__proto__', 'constructor', '1', '10', 'a"b', 'a\\b', 'é', '😀', '\u0000', '\u007f', ' '),
  fc.string({ unit: 'binary', maxLength: 6 }),
);
const scalar = fc.oneof(text, fc.integer(), fc.double(), fc.boolean(), fc.constant(null));
const inner = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 1, arbitrary: scalar },
  { weight: 1, arbitrary: fc.dictionary(text, text, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.array(text, { maxLength: 2 }) },
);
const member = fc.oneof(
  { weight: 4, arbitrary: text },
  { weight: 2, arbitrary: fc.dictionary(text, inner, { maxKeys: 4 }) },
  { weight: 1, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 2 }) },
);
const keys = fc.oneof(text, fc.constantFrom('namespaceKey', 'flagKey', 'entityId', 'context', 'requestId', 'reference', 'flag_key'));
const space = fc.constantFrom('', '', ' ', '\n', '\t', '\r\n  ');

/** JSON text of members in the given order (duplicates kept), with whitespace between tokens. */
function render(entries: Array<[string, unknown]>, ws: string[]): string {
  let k = 0;
  const w = () => ws[k++ % ws.length] ?? '';
  return `${w()}{${w()}${entries.map(([key, v]) => `${JSON.stringify(key)}${w()}:${w()}${JSON.stringify(v)}`).join(`${w()},${w()}`)}${w()}}${w()}`;
}

const body = fc
  .tuple(fc.array(fc.tuple(keys, member), { maxLength: 6 }), fc.array(space, { minLength: 1, maxLength: 8 }), fc.nat(100), fc.constantFrom('none', 'truncate', 'append', 'none', 'none'))
  .map(([entries, ws, cut, how]) => {
    const s = render(entries, ws);
    if (how === 'truncate') return s.slice(0, Math.floor((s.length * cut) / 100));
    if (how === 'append') return `${s}${['x', '}', ',', '{}', ' 1'][cut % 5]}`;
    return s;
  });

function parsed(s: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(s) };
  } catch {
    return { ok: false };
  }
}

/** Same members in the same order, all the way down (prototypes aside). */
function sameValue(a: unknown, b: unknown): boolean {
  if (typeof a !== 'object' || a === null || typeof b !== 'object' || b === null) return Object.is(a, b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

t.test('readFlatJsonObject gives what JSON.parse gives, or declines', async (t) => {
  let taken = 0;
  fc.assert(
    fc.property(body, (s) => {
      const flat = readFlatJsonObject(Buffer.from(s, 'utf8'));
      if (flat === undefined) return true;
      taken++;
      const general = parsed(s);
      return general.ok && sameValue(flat, general.value);
    }),
    { numRuns: 20_000, seed: 20261126 },
  );
  t.ok(taken > 2000, `a good share of the random bodies took the one-pass road (${taken})`);
});

t.test('the usual evaluation bodies take the one-pass road', async (t) => {
  const bodies = [
    '{"namespaceKey":"default","flagKey":"flag1","entityId":"user-42","context":{"fizz":"buzz"}}',
    '{ "flagKey": "f", "entityId": "u" }',
    '{"flagKey":"f","entityId":"u","context":{},"requestId":"r-1","reference":"main"}',
    '\n{\n  "flag_key": "f",\n  "entity_id": "u",\n  "context": {"__proto__": "x", "1": "one", "b": "bee"}\n}\n',
    '{}',
  ];
  for (const s of bodies) {
    const flat = readFlatJsonObject(Buffer.from(s));
    t.ok(flat !== undefined, s);
    t.ok(sameValue(flat, JSON.parse(s)), `${s}: same value`);
  }
  const withProto = readFlatJsonObject(Buffer.from('{"context":{"__proto__":"x"}}'))!;
  t.ok(Object.hasOwn(withProto.context as object, '__proto__'), 'a context key __proto__ is an ordinary member');
  t.same(Object.keys(readFlatJsonObject(Buffer.from('{"context":{"b":"1","2":"x","a":"y","1":"z"}}'))!.context as object), ['1', '2', 'b', 'a'], 'key order as JSON.parse');
});

t.test('anything else is declined (and then parsed the general way)', async (t) => {
  const declined = [
    '',
    '   ',
    '[]',
    '"x"',
    '{"a":1}',
    '{"a":null}',
    '{"a":"b\\"c"}',
    '{"a":"caf\u00e9"}',
    '{"__proto__":"x"}',
    '{"a":{"b":{"c":"d"}}}',
    '{"a":{"b":1}}',
    '{"a":"b"',
    '{"a":"b"} x',
    '{"a":"b",}',
    '{"a" "b"}',
    '{a:"b"}',
    '{"a":"tab\there"}',
  ];
  for (const s of declined) t.equal(readFlatJsonObject(Buffer.from(s)), undefined, JSON.stringify(s));
});
