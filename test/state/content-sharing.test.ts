import t from 'tap';
import { load } from '../../src/state/load.js';
import type { BuildCache, StateFile } from '../../src/state/load.js';
import { contentKey, sameContent } from '../../src/state/intern.js';
import type { Snapshot } from '../../src/model/snapshot.js';
import { createBuildCache } from '../../src/store/build-cache.js';
import { createParseCache } from '../../src/store/parse-cache.js';

// Every file gets its own content id, as two git blobs with different bytes would: sharing can
// only come from equal content, never from a shared parse-cache entry.
const enc = new TextEncoder();
let blob = 0;
const file = (path: string, text: string): StateFile => ({ path, bytes: enc.encode(text), contentId: `blob-${++blob}` });

function loadOk(files: StateFile[], reference: string, buildCache?: BuildCache): Snapshot {
  const r = load(files, {
    reference,
    revision: `rev-${reference}`,
    now: new Date('2026-01-01T00:00:00.000Z'),
    ...(buildCache ? { buildCache, parseCache: createParseCache() } : {}),
  });
  if (!r.snapshot) throw new Error(JSON.stringify(r.problems));
  return r.snapshot;
}

const flags = (descriptionOfC: string, extra = '') => `namespace: prod
flags:
  - key: a
    name: A
    enabled: true
    variants: [{ key: on, default: true }, { key: off, attachment: { x: [1, 2], y: null } }]
    rules:
      - segment: beta
        distributions: [{ variant: on, rollout: 50 }, { variant: off, rollout: 50 }]
  - key: b
    name: B
    type: BOOLEAN_FLAG_TYPE
    enabled: true
    metadata: { team: core, tier: 1 }
    rollouts:
      - segment: { key: other, value: false }
      - threshold: { percentage: 30, value: true }
  - key: c
    name: C
    description: ${descriptionOfC}
    enabled: true
${extra}`;
const segments = (country: string) => `namespace: prod
segments:
  - key: beta
    name: Beta
    match_type: ALL_MATCH_TYPE
    constraints: [{ type: STRING_COMPARISON_TYPE, property: country, operator: eq, value: ${country} }]
  - key: other
    name: Other
    match_type: ANY_MATCH_TYPE
    constraints: [{ type: NUMBER_COMPARISON_TYPE, property: age, operator: gte, value: "18" }]
`;
const staging = `namespace: staging
flags:
  - key: s
    name: S
    enabled: true
`;
const prod = (s: Snapshot) => s.namespaces.get('prod')!;
const flagOf = (s: Snapshot, k: string) => prod(s).flags.get(k)!;

t.test('an equal flag from a different parsed document shares the built object', async (t) => {
  const cache = createBuildCache();
  const main = loadOk([file('f.yml', flags('one')), file('s.yml', segments('fr'))], 'main', cache);
  const dev = loadOk([file('f.yml', flags('two')), file('s.yml', segments('fr'))], 'dev', cache);
  t.equal(flagOf(dev, 'a'), flagOf(main, 'a'), 'flag a shared');
  t.equal(flagOf(dev, 'b'), flagOf(main, 'b'), 'flag b shared');
  t.not(flagOf(dev, 'c'), flagOf(main, 'c'), 'flag c changed: its own object');
  t.equal(flagOf(dev, 'c').description, 'two');
  t.equal(flagOf(main, 'c').description, 'one');
  t.equal(prod(dev).segments.get('beta'), prod(main).segments.get('beta'), 'segments shared');
  t.equal(flagOf(dev, 'a').compiled, flagOf(main, 'a').compiled, 'compiled data shared with the flag');
  t.not(prod(dev), prod(main), 'the namespace holds a changed flag: not shared');
  t.equal(prod(dev).rulesById.get(flagOf(main, 'a').rules[0].id), flagOf(main, 'a').rules[0]);
});

t.test('sharing changes no id and no value: cached builds equal plain builds', async (t) => {
  const cache = createBuildCache();
  const files = (d: string, c: string) => [file('f.yml', flags(d)), file('s.yml', segments(c))];
  loadOk(files('one', 'fr'), 'main', cache);
  loadOk(files('two', 'de'), 'x', cache);
  const shared = loadOk(files('two', 'fr'), 'dev', cache);
  const plain = loadOk(files('two', 'fr'), 'dev');
  t.same(shared, plain, 'same snapshot, ids included');
  for (const k of ['a', 'b', 'c']) {
    const ids = (s: Snapshot) => {
      const f = flagOf(s, k);
      return [...f.variants.map((v) => v.id), ...f.rules.flatMap((r) => [r.id, ...r.distributions.map((d) => d.id)]), ...f.rollouts.map((r) => r.id)];
    };
    t.strictSame(ids(shared), ids(plain), `ids of flag ${k}`);
  }
  t.strictSame(
    prod(shared).segments.get('beta')!.constraints.map((c) => c.id),
    prod(plain).segments.get('beta')!.constraints.map((c) => c.id),
  );
});

t.test('a flag whose referenced segment changed is not shared; one using only unchanged segments is', async (t) => {
  const cache = createBuildCache();
  const main = loadOk([file('f.yml', flags('one')), file('s.yml', segments('fr'))], 'main', cache);
  const dev = loadOk([file('f.yml', flags('one')), file('s.yml', segments('de'))], 'dev', cache);
  t.not(prod(dev).segments.get('beta'), prod(main).segments.get('beta'), 'segment beta changed');
  t.not(flagOf(dev, 'a'), flagOf(main, 'a'), 'flag a (uses beta) rebuilt');
  t.equal(flagOf(dev, 'a').compiled.variant!.rules[0].segments[0].constraints[0].str, 'de', 'and compiled with the new constraint');
  t.equal(flagOf(main, 'a').compiled.variant!.rules[0].segments[0].constraints[0].str, 'fr');
  t.equal(prod(dev).segments.get('other'), prod(main).segments.get('other'), 'segment other unchanged: shared');
  t.equal(flagOf(dev, 'b'), flagOf(main, 'b'), 'flag b (uses only other) shared');
  t.equal(flagOf(dev, 'c'), flagOf(main, 'c'), 'flag c (no segment) shared');
});

t.test('a namespace whose flags and segments are all shared is shared whole', async (t) => {
  const cache = createBuildCache();
  const main = loadOk([file('f.yml', flags('one')), file('s.yml', segments('fr')), file('st.yml', staging)], 'main', cache);
  const dev = loadOk([file('f.yml', flags('one')), file('s.yml', segments('fr')), file('st.yml', `${staging}    description: changed\n`)], 'dev', cache);
  t.equal(prod(dev), prod(main), 'prod: same namespace object');
  t.not(dev.namespaces.get('staging'), main.namespaces.get('staging'), 'staging changed');
  t.equal(dev.namespaces.get('staging')!.flags.get('s')!.description, 'changed');
  t.equal(main.namespaces.get('staging')!.flags.get('s')!.description, '');
  t.equal(dev.namespaces.get('default'), main.namespaces.get('default'), 'the implicit default namespace too');
});

t.test('only exactly equal content is shared', async (t) => {
  const cache = createBuildCache();
  const meta = (m: string) => `flags:\n  - key: m\n    name: M\n    type: BOOLEAN_FLAG_TYPE\n    metadata: ${m}\n    rollouts:\n      - threshold: { percentage: 0.0, value: true }\n`;
  const one = loadOk([file('m.yml', meta('{ team: core, tier: 1 }'))], 'one', cache);
  const two = loadOk([file('m.yml', meta('{ tier: 1, team: core }'))], 'two', cache);
  const fl = (s: Snapshot) => s.namespaces.get('default')!.flags.get('m')!;
  t.not(fl(two), fl(one), 'metadata in another order: not shared');
  t.strictSame(Object.keys(fl(two).metadata!), ['tier', 'team'], 'each keeps its declared order');
  t.strictSame(Object.keys(fl(one).metadata!), ['team', 'tier']);
  // -0 and 0 have the same JSON (the content key) but are not the same value.
  const zero = loadOk([file('m.yml', meta('{ team: core, tier: 1 }').replace('percentage: 0.0', 'percentage: -0.0'))], 'z', cache);
  t.not(fl(zero), fl(one));
  t.ok(Object.is(fl(zero).rollouts[0].threshold!.percentage, -0));
  t.ok(Object.is(fl(one).rollouts[0].threshold!.percentage, 0));
});

t.test('problems stay located in each file when its flags are shared with another file', async (t) => {
  const cache = createBuildCache();
  // rule.rank.ignored is a warning: the snapshot is built and the warning is located.
  const ranked = `flags:\n  - key: r\n    name: R\n    variants: [{ key: v }]\n    rules:\n      - segment: s\n        rank: 1\nsegments:\n  - key: s\n    name: S\n    match_type: ALL_MATCH_TYPE\n`;
  const a = load([file('a.yml', ranked)], { reference: 'a', revision: 'a', buildCache: cache, parseCache: createParseCache() });
  const b = load([file('a.yml', `# two\n# comment lines\n${ranked}`)], { reference: 'b', revision: 'b', buildCache: cache, parseCache: createParseCache() });
  const warning = (r: typeof a) => r.problems.find((p) => p.rule === 'rule.rank.ignored')!;
  t.match(warning(a), { file: 'a.yml', line: 7, column: 9 });
  t.match(warning(b), { file: 'a.yml', line: 9, column: 9 });
  t.equal(b.snapshot!.namespaces.get('default')!.flags.get('r'), a.snapshot!.namespaces.get('default')!.flags.get('r'), 'yet the flag is shared');
});

t.test('content is compared only between versions of the same file', async (t) => {
  const cache = createBuildCache();
  const one = loadOk([file('one.yml', staging)], 'one', cache);
  const two = loadOk([file('two.yml', staging)], 'two', cache);
  const s = (x: Snapshot) => x.namespaces.get('staging')!.flags.get('s');
  t.not(s(two), s(one), 'another file: not compared (the first version of a file costs nothing)');
  const three = loadOk([file('one.yml', `${staging}# edited\n`)], 'three', cache);
  t.equal(s(three), s(one), 'a new version of one.yml: shared');
  t.equal(three.namespaces.get('staging'), one.namespaces.get('staging'), 'and so is the namespace');
});

t.test('a document with findings is not shared, and its problems are reported at each load', async (t) => {
  const cache = createBuildCache();
  const bad = `flags:\n  - key: a\n    name: A\n    enabled: maybe\n`;
  for (const path of ['one.yml', 'two.yml']) {
    const r = load([file(path, bad)], { reference: path, revision: 'r', buildCache: cache });
    t.notOk(r.snapshot);
    t.ok(r.problems.some((p) => p.file === path && p.line === 4), `located in ${path}`);
  }
});

t.test('sameContent is exact', async (t) => {
  t.ok(sameContent({ a: [1, 'x', null, { b: true }] }, { a: [1, 'x', null, { b: true }] }));
  t.notOk(sameContent({ a: 1, b: 2 }, { b: 2, a: 1 }), 'key order');
  t.notOk(sameContent([0], [-0]));
  t.ok(sameContent([NaN], [NaN]));
  t.notOk(sameContent({ a: null }, { a: Infinity }), 'JSON would make both null');
  t.notOk(sameContent(['1'], [1]));
  t.notOk(sameContent([], {}));
  // Aliases that stand for a huge tree (2^40 leaves): bounded, answers false rather than hanging.
  const tree = () => {
    let v: unknown = ['x'];
    for (let i = 0; i < 40; i++) v = [v, v];
    return v;
  };
  t.notOk(sameContent(tree(), tree()), 'over the bound: not shared');
  t.equal(contentKey('f', tree()), undefined, 'and not even keyed');
  t.type(contentKey('f', { a: 1 }), 'string');
});
