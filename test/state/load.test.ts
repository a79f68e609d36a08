import t from 'tap';
import type { Test } from 'tap';
import { load } from '../../src/state/load.js';
import type { ParseCache, StateFile } from '../../src/state/load.js';
import type { Flag, Snapshot } from '../../src/model/snapshot.js';
import { fixtureFile, readFixture } from '../support/state-fixture.js';

const enc = new TextEncoder();
const file = (path: string, text: string, contentId?: string): StateFile => ({ path, bytes: enc.encode(text), contentId });
const opts = { reference: 'main', revision: 'rev-1', now: new Date('2026-01-01T00:00:00.000Z') };

/** The snapshot of a state expected to be valid (fails the test with the problems otherwise). */
function loadOk(t: Test, files: StateFile[]): Snapshot {
  const r = load(files, opts);
  t.ok(r.snapshot, r.snapshot ? 'loads' : JSON.stringify(r.problems, null, 1));
  if (!r.snapshot) throw new Error('state did not load');
  return r.snapshot;
}

function flagOf(s: Snapshot, ns: string, key: string): Flag {
  const f = s.namespaces.get(ns)?.flags.get(key);
  if (!f) throw new Error(`no flag ${ns}/${key}`);
  return f;
}

t.test('snapshot header and the implicit default namespace', async (t) => {
  const s = loadOk(t, []);
  t.equal(s.reference, 'main');
  t.equal(s.revision, 'rev-1');
  t.equal(s.builtAt, '2026-01-01T00:00:00.000Z');
  t.same([...s.namespaces.keys()], ['default']);
  const d = s.namespaces.get('default')!;
  t.same([d.name, d.description, d.flags.size, d.segments.size], ['Default', '', 0, 0]);
  t.same(s.warnings, []);
});

t.test('an empty file and empty documents are fine', async (t) => {
  const s = loadOk(t, [file('features.yml', ''), file('b.features.yml', '---\n---\n# only a comment\n'), file('c.features.json', '  \n')]);
  t.same([...s.namespaces.keys()], ['default']);
});

t.test("Flipt's readonly test state shapes", async (t) => {
  const fx = readFixture('readonly');
  t.same(fx.selected, ['default.yaml', 'production.yaml'], 'the .flipt.yml include list');
  const s = loadOk(t, fx.files);
  t.same([...s.namespaces.keys()], ['default', 'production']);
  t.equal(s.namespaces.get('production')!.name, 'production', 'string namespace: name = key');
  for (const nsKey of ['default', 'production']) {
    const ns = s.namespaces.get(nsKey)!;
    t.equal(ns.flags.size, 12);
    t.equal(ns.segments.size, 9);
    const f1 = flagOf(s, nsKey, 'flag_001');
    t.same([f1.type, f1.enabled, f1.description, f1.rules.length], ['VARIANT_FLAG_TYPE', true, 'Some Description', 6]);
    t.same(f1.rules.map((r) => r.rank), [1, 2, 3, 4, 5, 6]);
    t.same(f1.rules.map((r) => r.segmentKey), ['segment_001', 'segment_002', 'segment_003', 'segment_004', 'segment_005', 'segment_006']);
    t.same(f1.rules[4].distributions.map((d) => [d.variantKey, d.rollout, d.variantId]), [
      ['variant_001', 50, f1.variants[0].id],
      ['variant_002', 50, f1.variants[1].id],
    ]);
    const and = flagOf(s, nsKey, 'flag_variant_and_segments').rules[0];
    t.same([and.segmentKey, and.segmentKeys, and.segmentOperator], ['', ['segment_001', 'segment_anding'], 'AND_SEGMENT_OPERATOR']);
    const b = flagOf(s, nsKey, 'flag_boolean');
    t.same([b.type, b.enabled, b.rollouts.length], ['BOOLEAN_FLAG_TYPE', false, 5]);
    t.same(b.rollouts.map((r) => r.type), [
      'SEGMENT_ROLLOUT_TYPE',
      'SEGMENT_ROLLOUT_TYPE',
      'SEGMENT_ROLLOUT_TYPE',
      'SEGMENT_ROLLOUT_TYPE',
      'THRESHOLD_ROLLOUT_TYPE',
    ]);
    t.same(b.rollouts[0].segment, { segmentKey: 'segment_001', segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR', value: true });
    t.same(b.rollouts[1].segment?.value, false, 'value defaults to false');
    t.same(b.rollouts[4].threshold, { percentage: 50, value: true });
    t.same(
      b.rollouts.map((r) => r.description),
      ['enabled for segment_001', 'disabled for segment_002', 'enabled for segment_003', 'disabled for segment_004', 'enabled for 50%'],
      'rollout descriptions are kept (Flipt drops them)',
    );
    const bAnd = flagOf(s, nsKey, 'flag_boolean_and_segments').rollouts[0].segment!;
    t.same([bAnd.segmentKey, bAnd.segmentKeys, bAnd.segmentOperator], ['', ['segment_001', 'segment_anding'], 'AND_SEGMENT_OPERATOR']);
    t.same(flagOf(s, nsKey, 'flag_no_distributions').rules[0].distributions, []);
    t.same(flagOf(s, nsKey, 'flag_disabled').rules, []);
    const entity = ns.segments.get('segment_entity_id')!;
    t.same([entity.matchType, entity.constraints[0].type, entity.constraints[0].value], ['ANY_MATCH_TYPE', 'ENTITY_ID_COMPARISON_TYPE', 'user@flipt.io']);
    t.same(ns.segments.get('segment_no_constraints')!.constraints, []);
    t.equal(ns.rulesById.size, 5 * 6 + 3, 'every rule of every flag, by id');
    t.equal(ns.rolloutsById.size, 5 + 1 + 1);
    t.equal(ns.rulesById.get(f1.rules[2].id), f1.rules[2]);
  }
});

t.test('several files and documents merged; references across files in any order', async (t) => {
  const fx = readFixture('multi-file');
  t.same(fx.selected, ['a.features.yml', 'myfeatures.yml', 'nested/deeper/features.yaml', 'team.features.json', 'z.features.yml']);
  const r = load(fx.files, opts);
  t.ok(r.snapshot);
  const s = r.snapshot!;
  t.same([...s.namespaces.keys()], ['default', 'team']);
  const team = s.namespaces.get('team')!;
  t.same([team.name, team.description], ['Team Space', 'Flags of the team'], 'the first document naming the namespace wins');
  t.same([...team.flags.keys()], ['checkout', 'search'], 'flags of two files in one namespace');
  t.same([...team.segments.keys()], ['beta-users'], 'segment from a JSON file that sorts after its user');
  t.same([...s.namespaces.get('default')!.flags.keys()], ['banner', 'from-json', 'quirk']);
  t.same([...s.namespaces.get('default')!.segments.keys()], ['beta', 'internal'], 'segments used by a.features.yml, defined in z.features.yml');
  t.same(
    r.problems.map((p) => [p.severity, p.rule, p.file, p.line, p.column]),
    [['warning', 'namespace.redefined', 'nested/deeper/features.yaml', 3, 3]],
  );
  t.same(s.warnings, r.problems, 'warnings are kept on the snapshot');
  t.same(flagOf(s, 'team', 'search').metadata, { owner: 'search-team', tier: 2, public: true });
  t.equal(flagOf(s, 'team', 'checkout').metadata, undefined, 'metadata only when declared');
  t.equal(flagOf(s, 'team', 'checkout').defaultVariant?.key, 'new');
});

t.test('JSON streams: concatenated values are several documents; no extension reads as JSON', async (t) => {
  const s = loadOk(t, [
    file('x.json', '{"flags":[{"key":"a","name":"A"}]}\n{"namespace":"n2","flags":[{"key":"b","name":"B"}]}[]'.replace('[]', '')),
    file('stream.json', '{"namespace":"n3"}{"namespace":"n4"} {"namespace":"n5"}'),
    fixtureFile('problems', 'noext'),
  ]);
  t.same([...s.namespaces.keys()], ['default', 'n2', 'n3', 'n4', 'n5']);
  t.same([...s.namespaces.get('default')!.flags.keys()], ['a', 'noext']);
});

t.test('multi-document YAML with anchors and merge keys', async (t) => {
  const s = loadOk(t, [
    file(
      'features.yml',
      [
        'namespace: one',
        'flags:',
        '  - &base {key: a, name: A, enabled: true}',
        '  - <<: *base',
        '    key: b',
        '---',
        'namespace: two',
        'flags: [{key: c, name: C}]',
        '...',
      ].join('\n'),
    ),
  ]);
  t.same([...s.namespaces.get('one')!.flags.keys()], ['a', 'b']);
  t.equal(flagOf(s, 'one', 'b').enabled, true, 'merged from the anchor');
  t.same([...s.namespaces.get('two')!.flags.keys()], ['c']);
});

t.test('YAML 1.2 core scalars: no timestamps, no yes/no booleans', async (t) => {
  const r = load([file('features.yml', 'flags:\n  - key: a\n    name: 2024-01-01\n    enabled: yes\n')], opts);
  t.same(r.problems.map((p) => [p.rule, p.line, p.column]), [['schema.type', 4, 14]], 'yes is a string; the date stays a string name');
});

t.test('versions 1.0 to 1.4 and the namespace forms', async (t) => {
  const fx = readFixture('versions');
  const r = load(fx.files, opts);
  t.same(r.problems, []);
  const s = r.snapshot!;
  t.same([...s.namespaces.keys()], ['default', 'nov', 'v10', 'v11', 'v12', 'v13', 'v14']);
  t.same([s.namespaces.get('v14')!.name, s.namespaces.get('v14')!.description], ['Version 1.4', 'Namespace given as an object']);
  t.same([s.namespaces.get('nov')!.name, s.namespaces.get('nov')!.description], ['', ''], 'object form without a name');
  t.same(flagOf(s, 'v10', 'plain').type, 'VARIANT_FLAG_TYPE', '1.0 flags are variant flags');
  t.equal(flagOf(s, 'v10', 'plain').variants[0].attachment, '{"k":"v"}');
  const toggle = flagOf(s, 'v11', 'toggle');
  t.same(toggle.rollouts.map((r) => [r.type, r.rank]), [['THRESHOLD_ROLLOUT_TYPE', 1], ['UNKNOWN_ROLLOUT_TYPE', 2]]);
  t.same(toggle.rollouts[0].threshold, { percentage: 25.5, value: false });
  t.same([toggle.rollouts[1].segment, toggle.rollouts[1].threshold], [undefined, undefined], 'an empty rollout has neither');
  const multi = flagOf(s, 'v12', 'multi').rules[0];
  t.same([multi.segmentKey, multi.segmentKeys, multi.segmentOperator], ['', ['one', 'two'], 'OR_SEGMENT_OPERATOR']);
  const bm = flagOf(s, 'v12', 'bool-multi').rollouts;
  t.same(bm[0].segment, { segmentKey: 'one', segmentKeys: [], segmentOperator: 'OR_SEGMENT_OPERATOR', value: true }, 'one key in `keys` -> segmentKey');
  t.same(bm[1].segment, { segmentKey: '', segmentKeys: ['one', 'two'], segmentOperator: 'AND_SEGMENT_OPERATOR', value: false });
  const wd = flagOf(s, 'v13', 'with-default');
  t.same(wd.metadata, { team: 'web', weight: 1.5 });
  t.equal(wd.defaultVariant, wd.variants[1], 'defaultVariant is the variant object');
  t.equal(wd.variants[1].attachment, '{"b":"x","size":2}');
  t.equal(flagOf(s, 'nov', 'implicit-14').defaultVariant?.key, 'd', 'no version = 1.4: default and metadata allowed');
});

t.test('the parse cache: hit by content id, same result', async (t) => {
  const store = new Map<string, unknown>();
  let gets = 0;
  let sets = 0;
  const cache: ParseCache = {
    get: (k) => {
      gets++;
      return store.get(k);
    },
    set: (k, v) => {
      sets++;
      store.set(k, v);
    },
  };
  const files = readFixture('multi-file').files;
  const first = load(files, { ...opts, parseCache: cache });
  t.equal(sets, files.length);
  const second = load(files, { ...opts, parseCache: cache });
  t.equal(sets, files.length, 'nothing parsed again');
  t.equal(gets, files.length * 2);
  t.same(second.problems, first.problems);
  t.same(
    [...second.snapshot!.namespaces.get('team')!.flags.get('checkout')!.variants].map((v) => v.id),
    [...first.snapshot!.namespaces.get('team')!.flags.get('checkout')!.variants].map((v) => v.id),
  );
  // A broken file's problems are cached too, and still name the right file.
  const broken = file('x.features.yml', 'flags: [', 'blob-1');
  const a = load([broken], { ...opts, parseCache: cache });
  const b = load([{ ...broken, path: 'y.features.yml' }], { ...opts, parseCache: cache });
  t.equal(a.problems[0].file, 'x.features.yml');
  t.equal(b.problems[0].file, 'y.features.yml');
  t.same({ ...a.problems[0], file: '' }, { ...b.problems[0], file: '' });
  // Same content id with another decoder is another entry.
  const j = load([{ ...broken, path: 'x.json' }], { ...opts, parseCache: cache });
  t.equal(j.problems[0].rule, 'json.syntax');
});

t.test('files given in any order load the same (walk order is applied)', async (t) => {
  const files = readFixture('multi-file').files;
  const a = load(files, opts);
  const b = load([...files].reverse(), opts);
  t.same(b.problems, a.problems);
  t.same(JSON.stringify([...b.snapshot!.namespaces.values()].map((n) => [n.key, n.name, [...n.flags.keys()]])), JSON.stringify([...a.snapshot!.namespaces.values()].map((n) => [n.key, n.name, [...n.flags.keys()]])));
});
