import t from 'tap';
import { load } from '../../src/state/load.js';
import type { BuildCache, ParseCache, StateFile } from '../../src/state/load.js';
import type { Snapshot } from '../../src/model/snapshot.js';

const enc = new TextEncoder();
const file = (path: string, text: string, contentId: string): StateFile => ({ path, bytes: enc.encode(text), contentId });

function caches(): { parseCache: ParseCache; buildCache: BuildCache } {
  const parsed = new Map<string, unknown>();
  const built = new WeakMap<object, unknown>();
  return {
    parseCache: { get: (k) => parsed.get(k), set: (k, v) => void parsed.set(k, v) },
    buildCache: { get: (d) => built.get(d), set: (d, v) => void built.set(d, v) },
  };
}

function loadOk(files: StateFile[], reference: string, c?: ReturnType<typeof caches>, now = '2026-01-01T00:00:00.000Z'): Snapshot {
  const r = load(files, { reference, revision: `rev-${reference}`, now: new Date(now), ...(c ?? {}) });
  if (!r.snapshot) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

const flags = `namespace: prod
flags:
  - key: a
    name: A
    type: VARIANT_FLAG_TYPE
    enabled: true
    variants: [{ key: on, default: true }, { key: off }]
    rules:
      - segment: beta
        distributions: [{ variant: on, rollout: 100 }]
  - key: b
    name: B
    type: BOOLEAN_FLAG_TYPE
    enabled: true
    rollouts:
      - segment: { key: other, value: false }
  - key: c
    name: C
    enabled: true
`;
const segments = (country: string) => `namespace: prod
segments:
  - key: beta
    name: Beta
    match_type: ALL_MATCH_TYPE
    constraints: [{ type: STRING_COMPARISON_TYPE, property: country, operator: eq, value: ${country} }]
  - key: other
    name: Other
    match_type: ANY_MATCH_TYPE
`;
const flagFile = () => file('prod.features.yml', flags, 'blob-flags');
const segFile = (country: string) => file('segments.features.yml', segments(country), `blob-seg-${country}`);
const ns = (s: Snapshot) => s.namespaces.get('prod')!;
const segmentOfRule = (s: Snapshot) => ns(s).flags.get('a')!.compiled.variant!.rules[0].segments[0];

t.test('references sharing the same files share built flags and segments', async (t) => {
  const c = caches();
  const main = loadOk([flagFile(), segFile('fr')], 'main', c);
  const dev = loadOk([flagFile(), segFile('fr')], 'dev', c, '2026-02-02T00:00:00.000Z');
  for (const k of ['a', 'b', 'c']) t.equal(ns(dev).flags.get(k), ns(main).flags.get(k), `flag ${k} reused`);
  for (const k of ['beta', 'other']) t.equal(ns(dev).segments.get(k), ns(main).segments.get(k), `segment ${k} reused`);
  t.equal(dev.builtAt, '2026-02-02T00:00:00.000Z', 'timestamps stay per snapshot');
  t.equal(main.builtAt, '2026-01-01T00:00:00.000Z');
  t.equal(dev.reference, 'dev');
  t.equal(ns(dev).rulesById.get(ns(main).flags.get('a')!.rules[0].id), ns(main).flags.get('a')!.rules[0]);
});

t.test('a flag is rebuilt when a segment it references differs, and only then', async (t) => {
  const c = caches();
  const main = loadOk([flagFile(), segFile('fr')], 'main', c);
  const dev = loadOk([flagFile(), segFile('de')], 'dev', c);
  t.not(ns(dev).flags.get('a'), ns(main).flags.get('a'), 'flag a (references beta) rebuilt');
  t.not(ns(dev).segments.get('beta'), ns(main).segments.get('beta'));
  t.equal(segmentOfRule(main).constraints.length, 1);
  const compiledValue = (s: Snapshot) => JSON.stringify(ns(s).segments.get('beta')!.constraints[0].value);
  t.equal(compiledValue(main), '"fr"');
  t.equal(compiledValue(dev), '"de"');
  t.not(segmentOfRule(dev), segmentOfRule(main), 'compiled segment follows the new constraint');
  t.equal(ns(dev).flags.get('c'), ns(main).flags.get('c'), 'flag c (no segment) reused');
  // `other` is a separate parsed object in each segment file, so b is rebuilt too: reuse
  // is by object identity, never by guessing that contents are equal.
  t.same(ns(dev).flags.get('b')!.rollouts, ns(main).flags.get('b')!.rollouts);
  // Back to the first segment file: the first build is found again.
  const again = loadOk([flagFile(), segFile('fr')], 'main', c);
  t.equal(ns(again).flags.get('a'), ns(main).flags.get('a'));
});

t.test('cached builds equal uncached builds', async (t) => {
  const c = caches();
  loadOk([flagFile(), segFile('fr')], 'main', c);
  const cached = loadOk([flagFile(), segFile('fr')], 'dev', c);
  const plain = loadOk([flagFile(), segFile('fr')], 'dev');
  t.same(cached, plain);
  for (const k of ['a', 'b', 'c']) t.not(ns(plain).flags.get(k), ns(cached).flags.get(k));
});

t.test('a flag that produced findings is not cached: the problem is reported at each load', async (t) => {
  const c = caches();
  // Passes the schema and the alias budget, fails at build: aliases standing for ~120,000 values
  // (over the attachment size limit).
  const lines = ['flags:', '  - key: bomb', '    name: Bomb', '    variants:', '      - key: v', '        attachment:', '          l0: &l0 [x, x, x, x, x, x, x, x, x, x]'];
  for (let i = 1; i < 5; i++) lines.push(`          l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
  const bad = lines.join('\n');
  for (const path of ['one.features.yml', 'two.features.yml']) {
    const r = load([file(path, bad, 'blob-bad')], { reference: 'main', revision: 'r', ...c });
    t.notOk(r.snapshot);
    t.ok(r.problems.some((p) => p.rule === 'variant.attachment.invalid' && p.file === path), `reported in ${path}`);
  }
});
