import t from 'tap';
import { serializeAttachment } from '../../src/state/attachment.js';
import { FlagIds, SegmentIds, stateId } from '../../src/state/ids.js';
import { load } from '../../src/state/load.js';
import type { StateFile } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { generateState } from '../support/generate-state.js';
import { readFixture } from '../support/state-fixture.js';

const enc = new TextEncoder();
const file = (path: string, text: string): StateFile => ({ path, bytes: enc.encode(text) });
/** Derived ids are version 8 (our layout, ids.ts); the rare fallback is a v5 hash of the full name. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[58][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function snapshotOf(name: string, now = new Date('2026-01-01T00:00:00Z')): Snapshot {
  const r = load(readFixture(name).files, { reference: 'main', revision: 'r', now });
  if (!r.snapshot) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

/** Every id of a snapshot, in a stable order. */
function ids(s: Snapshot): string[] {
  const out: string[] = [];
  for (const ns of s.namespaces.values()) {
    for (const seg of ns.segments.values()) for (const c of seg.constraints) out.push(c.id);
    for (const f of ns.flags.values()) {
      for (const v of f.variants) out.push(v.id);
      for (const r of f.rules) out.push(r.id, ...r.distributions.map((d) => d.id));
      for (const r of f.rollouts) out.push(r.id);
    }
  }
  return out;
}

t.test('ids are UUID shaped, unique, and the same for the same content', async (t) => {
  const a = ids(snapshotOf('readonly'));
  const b = ids(snapshotOf('readonly', new Date('2030-01-01T00:00:00Z')));
  t.ok(a.length > 100);
  t.same(b, a, 'rebuilt later: same ids');
  t.ok(a.every((id) => UUID.test(id)), 'all UUID shaped');
  t.equal(new Set(a).size, a.length, 'no collisions');
  t.equal(stateId('flag/default/x/rule/1'), stateId('flag/default/x/rule/1'));
  t.not(stateId('flag/default/x/rule/1'), stateId('flag/default/x/rule/2'));
});

t.test('ids: unique over a generated 3,000-flag state, and derived from one digest per owner', async (t) => {
  const files = generateState({ flags: 3000, segmentsPerNamespace: 400 }).map((f) => file(f.path, f.text));
  const s = load(files, { reference: 'm', revision: '1' }).snapshot!;
  const all = ids(s);
  t.ok(all.length > 20_000, `${all.length} ids`);
  t.equal(new Set(all).size, all.length, 'no two resources share an id');
  t.ok(all.every((id) => /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[1-5][0-9a-f]{11}$/.test(id)), 'all version 8 with a kind digit');
  // The parts of one flag share the owner prefix (24 characters) and differ in the last 12.
  const f = [...s.namespaces.get('default')!.flags.values()].find((x) => x.rules.length > 0 && x.rules[0].distributions.length > 1)!;
  const own = [...f.variants.map((v) => v.id), ...f.rules.flatMap((r) => [r.id, ...r.distributions.map((d) => d.id)])];
  t.equal(new Set(own.map((id) => id.slice(0, 24))).size, 1, 'one owner prefix per flag');
  t.equal(f.rules[0].id.slice(24), '200000000001', 'rule 1');
  t.equal(f.rules[0].distributions[1].id.slice(24), '300000100001', 'rule 1, distribution 1');
});

t.test('ids: every part kind and position is distinct within an owner; out-of-range positions fall back', async (t) => {
  const a = new FlagIds('default', 'f');
  const got = new Set<string>();
  const keys = Array.from({ length: 2000 }, (_, i) => `variant-${i}`);
  for (const k of keys) got.add(a.variant(k));
  for (let rank = 1; rank <= 50; rank++) {
    got.add(a.rule(rank));
    got.add(a.rollout(rank));
    for (let i = 0; i < 20; i++) got.add(a.distribution(rank, i));
  }
  t.equal(got.size, 2000 + 50 * 22, 'no collision among 3,100 parts of one flag');
  t.equal(new FlagIds('default', 'f').rule(3), a.rule(3), 'deterministic');
  t.not(new FlagIds('other', 'f').rule(3), a.rule(3), 'namespaced');
  t.not(new FlagIds('default', 'g').rule(3), a.rule(3), 'per flag');
  t.not(new SegmentIds('default', 'f').constraint(1), new FlagIds('default', 'f').rule(1), 'segments and flags apart');
  t.equal(a.distribution(1, 2 ** 20), stateId('flag/default/f/rule/1/distribution/1048576'), 'an index past 20 bits: v5 of the full name');
  t.equal(a.rule(2 ** 44), stateId(`flag/default/f/rule/${2 ** 44}`));
  t.equal(new SegmentIds('n', 's').constraint(2 ** 44), stateId(`segment/n/s/constraint/${2 ** 44}`));
});

t.test('ids derive from position: same flag in another namespace or file order differs / stays', async (t) => {
  const s = snapshotOf('readonly');
  const d = s.namespaces.get('default')!.flags.get('flag_001')!;
  const p = s.namespaces.get('production')!.flags.get('flag_001')!;
  t.not(d.rules[0].id, p.rules[0].id, 'namespaced');
  t.not(d.variants[0].id, p.variants[0].id);
  // Editing an unrelated flag keeps this flag's ids.
  const base = 'flags:\n  - key: a\n    name: A\n    variants: [{key: x}]\n';
  const one = load([file('f.yml', base)], { reference: 'm', revision: '1' }).snapshot!;
  const two = load([file('f.yml', `${base}  - key: b\n    name: B\n`)], { reference: 'm', revision: '2' }).snapshot!;
  t.equal(two.namespaces.get('default')!.flags.get('a')!.variants[0].id, one.namespaces.get('default')!.flags.get('a')!.variants[0].id);
});

t.test('distributions point at their rule and variant ids', async (t) => {
  const f = snapshotOf('readonly').namespaces.get('default')!.flags.get('flag_002')!;
  for (const r of f.rules) {
    for (const d of r.distributions) {
      t.equal(d.ruleId, r.id);
      t.equal(d.variantId, f.variants.find((v) => v.key === d.variantKey)!.id);
    }
  }
});

t.test('the snapshot is frozen, maps included', async (t) => {
  const s = snapshotOf('multi-file');
  const ns = s.namespaces.get('team')!;
  const flag = ns.flags.get('checkout')!;
  t.ok(Object.isFrozen(s));
  t.ok(Object.isFrozen(ns));
  t.ok(Object.isFrozen(flag));
  t.ok(Object.isFrozen(flag.variants) && Object.isFrozen(flag.variants[0]));
  t.ok(Object.isFrozen(flag.rules) && Object.isFrozen(flag.rules[0]) && Object.isFrozen(flag.rules[0].distributions[0]));
  t.ok(Object.isFrozen(ns.segments.get('beta-users')!.constraints[0]));
  t.ok(Object.isFrozen(s.warnings));
  t.ok(Object.isFrozen(s.namespaces.get('default')!.flags.get('banner')!.rollouts[0].segment));
  t.ok(Object.isFrozen(ns.flags.get('search')!.metadata));
  for (const map of [s.namespaces, ns.flags, ns.segments, ns.rulesById, ns.rolloutsById] as Map<string, unknown>[]) {
    t.ok(map instanceof Map);
    t.throws(() => map.set('x', {}), TypeError);
    t.throws(() => map.delete('checkout'), TypeError);
    t.throws(() => map.clear(), TypeError);
  }
  t.ok(ns.flags.has('checkout'), 'still intact');
  t.throws(() => {
    (flag as { enabled: boolean }).enabled = false;
  }, TypeError);
  t.ok(flag.compiled !== undefined, 'compiled evaluation data attached');
});

t.test('compiled evaluation data: computed at build, an enumerable property that cannot be replaced', async (t) => {
  const s = snapshotOf('multi-file');
  const flag = s.namespaces.get('team')!.flags.get('checkout')!;
  const first = flag.compiled;
  t.ok(Object.getOwnPropertyDescriptor(flag, 'compiled')?.value === first, 'a plain data property, computed at build');
  t.equal(first.key, 'checkout');
  t.ok(Object.keys(flag).includes('compiled'), 'listed with the other fields');
  t.equal({ ...flag }.compiled, first, 'a spread copies it');
  t.throws(() => {
    (flag as { compiled: unknown }).compiled = null;
  }, TypeError);
  t.equal(flag.compiled, first, 'cannot be replaced');
});

t.test('maps iterate in ascending key byte order', async (t) => {
  const r = load(
    [file('features.yml', 'flags:\n  - {key: b, name: B}\n  - {key: B, name: B}\n  - {key: a-1, name: A}\n  - {key: a, name: A}\n  - {key: "_", name: U}\n')],
    { reference: 'm', revision: '1' },
  );
  t.same([...r.snapshot!.namespaces.get('default')!.flags.keys()], ['B', '_', 'a', 'a-1', 'b']);
});

t.test('attachments: Go encoding/json of the value', async (t) => {
  const s = snapshotOf('attachments');
  const v = Object.fromEntries(s.namespaces.get('default')!.flags.get('shapes')!.variants.map((x) => [x.key, x.attachment]));
  t.equal(v.none, 'null');
  t.equal(v['explicit-null'], 'null');
  t.equal(v.sorted, '{"alpha":{"a":1,"b":2},"mid":[3,{"x":null,"y":true}],"zeta":1}');
  t.equal(v.html, '{"html":"\\u003cb\\u003eTom \\u0026 Jerry\\u003c/b\\u003e","sep":"line\\u2028sep"}');
  t.equal(v.numbers, '{"big":1e+21,"float":1,"frac":0.5,"int":42,"neg":-3,"small":1e-7}');
  t.equal(v.list, '["a",1,false]');
  t.equal(v.unicode, '{"quote\\"back\\\\slash":"tab\\tnl\\n","z":2,"é":1,"ｚ":4,"😀":3}', 'keys sorted by UTF-8 bytes');
  const json = s.namespaces.get('json')!.flags.get('nums')!.variants[0].attachment;
  t.equal(json, '{"big":12345678901234567000,"exp":2000,"int":1,"tiny":1e-7}');
  t.same(JSON.parse(v.sorted), { zeta: 1, alpha: { b: 2, a: 1 }, mid: [3, { y: true, x: null }] }, 'still valid JSON');
  t.equal(serializeAttachment({ a: '\u0001\u001f' }), '{"a":"\\u0001\\u001f"}');
  t.throws(() => serializeAttachment({ a: Infinity }));
});

t.test('defaults of optional fields', async (t) => {
  const s = load(
    [
      file(
        'features.yml',
        [
          'flags:',
          '  - key: f',
          '    name: F',
          '    variants: [{key: v}]',
          '    rules: [{segment: s}]',
          'segments:',
          '  - key: s',
          '    name: S',
          '    match_type: ANY_MATCH_TYPE',
          '    constraints: [{type: STRING_COMPARISON_TYPE, property: p, operator: empty}]',
        ].join('\n'),
      ),
    ],
    { reference: 'm', revision: '1' },
  ).snapshot!;
  const ns = s.namespaces.get('default')!;
  const f = ns.flags.get('f')!;
  t.same([f.description, f.enabled, f.type, f.metadata, f.defaultVariant], ['', false, 'VARIANT_FLAG_TYPE', undefined, undefined]);
  t.same([f.variants[0].name, f.variants[0].description, f.variants[0].default], ['', '', false]);
  t.same([f.rules[0].segmentKey, f.rules[0].segmentKeys, f.rules[0].segmentOperator, f.rules[0].distributions], ['s', [], 'OR_SEGMENT_OPERATOR', []]);
  t.same(f.rollouts, []);
  const c = ns.segments.get('s')!.constraints[0];
  t.same([c.value, c.description, c.segmentKey, c.namespaceKey], ['', '', 's', 'default']);
  t.equal(ns.segments.get('s')!.description, '');
  t.ok(UUID.test(c.id));
});

// Aliases standing for ~120,000 values: within what aliases may add to a file (alias-expansion.ts),
// over what one attachment may hold. (A bigger bomb is refused before the build: see alias-expansion.test.ts.)
t.test('an alias bomb in an attachment is refused, not expanded', async (t) => {
  const lines = ['flags:', '  - key: bomb', '    name: Bomb', '    variants:', '      - key: v', '        attachment:', '          l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 5; i++) lines.push(`          l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
  const r = load([file('features.yml', lines.join('\n'))], { reference: 'm', revision: '1' });
  t.same(r.problems.map((p) => [p.rule, p.line, p.column]), [['variant.attachment.invalid', 7, 11]]);
  t.match(r.problems[0].message, /more than 100000 values/);
});
