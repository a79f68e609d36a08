/**
 * Generated matchers (src/evaluation/codegen.ts) against the interpreter, which stays the
 * reference: over random valid states (the oracle's generator) both must give the same result
 * field for field (segmentKeys order included), and the public evaluators (which switch to the
 * generated code once prepareMatcher made it) must too. Then the cases random states do not reach: hostile
 * strings from an untrusted state, unknown constraint types, non-finite operands, OR sets too wide
 * for the bitmask, and a runtime that forbids code generation.
 */
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { interpretBoolean, runBoolean } from '../../src/evaluation/boolean.js';
import { CODEGEN_AVAILABLE, generateBooleanMatcher, generateVariantMatcher, literal, prepareMatcher } from '../../src/evaluation/codegen.js';
import { evaluateBoolean, evaluateVariant } from '../../src/evaluation/index.js';
import { interpretVariant, runVariant } from '../../src/evaluation/variant.js';
import type { BooleanResult, VariantResult } from '../../src/model/evaluation-result.js';
import type { EvaluationRequest } from '../../src/model/evaluation-request.js';
import type { Flag, Snapshot } from '../../src/model/snapshot.js';
import { loadIntoVexil, stateFor } from '../oracle/run.js';
import { evalRng, randomRequest, toFeaturesYaml } from '../support/random-state.js';
import { booleanFlag, req, segment, snapshot, variantFlag, type ConstraintSpec } from './fixture.js';

t.ok(CODEGEN_AVAILABLE, 'this runtime allows code generation (the tests below need it)');

type Outcome = { ok: VariantResult | BooleanResult } | { error: string };

function attempt(f: () => VariantResult | BooleanResult): string {
  let o: Outcome;
  try {
    o = { ok: f() };
  } catch (err) {
    o = { error: err instanceof Error ? `${err.constructor.name}: ${err.message}` : String(err) };
  }
  return JSON.stringify(o);
}

/** The three ways to decide one request: interpreter, generated matcher, public evaluator. */
function decideAllWays(flag: Flag, r: EvaluationRequest): [interpreted: string, generated: string] {
  const c = flag.compiled;
  if (c.variant !== null) {
    const v = c.variant;
    const gen = generateVariantMatcher(c, v)!;
    return [
      attempt(() => (c.enabled ? interpretVariant(c, v, r.entityId, r.context) : v.disabled)),
      attempt(() => (c.enabled ? gen(r.context, r.entityId) : v.disabled)),
    ];
  }
  const b = c.boolean!;
  const gen = generateBooleanMatcher(c, b)!;
  return [attempt(() => interpretBoolean(c, b, r.entityId, r.context)), attempt(() => gen(r.context, r.entityId))];
}

function flagOf(s: Snapshot, ns: string, key: string): Flag | undefined {
  return s.namespaces.get(ns === '' ? 'default' : ns)?.flags.get(key);
}

t.test('random valid states: interpreter == generated matcher == public evaluator', async (t) => {
  const SEED = 7_1126;
  const STATES = 150;
  const REQUESTS = 120;
  let compared = 0;
  let generatedUsed = 0;
  const mismatches: string[] = [];
  for (let i = 0; i < STATES && mismatches.length < 3; i++) {
    const state = stateFor(SEED, i);
    const loaded = loadIntoVexil(toFeaturesYaml(state));
    if (!loaded.snapshot) throw new Error(`state ${i} did not load: ${JSON.stringify(loaded.problems)}`);
    const s = loaded.snapshot;
    for (let j = 0; j < REQUESTS; j++) {
      const g = randomRequest(evalRng(SEED, i, j), state);
      const flag = flagOf(s, g.namespaceKey, g.flagKey);
      if (!flag) continue;
      const r: EvaluationRequest = { namespaceKey: g.namespaceKey, flagKey: g.flagKey, entityId: g.entityId, context: g.context };
      const [interpreted, generated] = decideAllWays(flag, r);
      // The public path, same request repeated: interpreted first, generated once prepared.
      const publicResults = new Set<string>();
      for (let k = 0; k < 3; k++) {
        if (k === 1) prepareMatcher(flag.compiled);
        publicResults.add(attempt(() => (flag.compiled.variant !== null ? evaluateVariant(s, r) : evaluateBoolean(s, r))));
      }
      compared++;
      const cell = flag.compiled.variant?.matcher ?? flag.compiled.boolean!.matcher;
      if (cell.fn !== null) generatedUsed++;
      if (interpreted !== generated || publicResults.size !== 1 || !publicResults.has(interpreted)) {
        mismatches.push(`state ${i} request ${j} ${JSON.stringify(r)}\n  interpreted ${interpreted}\n  generated   ${generated}\n  public      ${[...publicResults].join(' | ')}`);
      }
    }
  }
  t.same(mismatches, [], 'no difference');
  t.ok(compared > STATES * REQUESTS * 0.9, `compared ${compared} requests`);
  t.ok(generatedUsed > compared / 2, `the public evaluator ran generated code for most of them (${generatedUsed})`);
});

t.test('the public evaluators interpret until prepareMatcher, then run the generated code, with the same results', async (t) => {
  const segs = [segment('s', 'ALL_MATCH_TYPE', [['NUMBER_COMPARISON_TYPE', 'age', 'gte', '18']])];
  const v = variantFlag({ key: 'v', variants: ['a', 'b'], rules: [{ segment: 's', distributions: [['a', 50], ['b', 50]] }] });
  const b = booleanFlag({ key: 'b', enabled: true, rollouts: [{ segment: 's', value: false }, { threshold: 30, value: true }] });
  const s = snapshot({ default: { segments: segs, flags: [v, b] } });
  const fv = flagOf(s, 'default', 'v')!.compiled;
  const fb = flagOf(s, 'default', 'b')!.compiled;
  const seen: string[] = [];
  const CALLS = 20;
  for (let i = 0; i < CALLS; i++) {
    if (i === CALLS / 2) {
      t.equal(fv.variant!.matcher.fn, null, 'no request generates code');
      t.same([fv.variant!.matcher.interpreted, fb.boolean!.matcher.interpreted], [CALLS / 2, CALLS / 2], 'interpreted until then');
      t.equal(prepareMatcher(fv), true);
      t.equal(prepareMatcher(fb), true);
      t.equal(prepareMatcher(fv), false, 'generated once');
    }
    const r = req('x', `user-${i}`, { age: i % 2 === 0 ? '20' : '3' });
    seen.push(JSON.stringify([runVariant(fv, fv.variant!, { ...r, flagKey: 'v' }), interpretVariant(fv, fv.variant!, r.entityId, r.context)]));
    seen.push(JSON.stringify([runBoolean(fb, fb.boolean!, { ...r, flagKey: 'b' }), interpretBoolean(fb, fb.boolean!, r.entityId, r.context)]));
  }
  t.type(fv.variant!.matcher.fn, 'function', 'variant flag: generated');
  t.type(fb.boolean!.matcher.fn, 'function', 'boolean flag: generated');
  t.same([fv.variant!.matcher.interpreted, fb.boolean!.matcher.interpreted], [CALLS / 2, CALLS / 2], 'the later calls ran the generated code');
  for (const pair of seen) {
    const [a, b2] = JSON.parse(pair) as [unknown, unknown];
    t.same(a, b2);
  }
});

// ----- untrusted strings -------------------------------------------------------------------------

const HOSTILE = [
  '"',
  "'",
  '\\',
  '\\"',
  '`${globalThis.__vexilPwned = 1}`',
  '${globalThis.__vexilPwned = 2}',
  '"; globalThis.__vexilPwned = 3; "',
  "'); globalThis.__vexilPwned = 4; ('",
  '*/ globalThis.__vexilPwned = 5; /*',
  '// x\nglobalThis.__vexilPwned = 6',
  'a\u2028globalThis.__vexilPwned = 7\u2029b',
  '</script><script>globalThis.__vexilPwned = 8</script>',
  '\u0000\r\n\t',
  '\ud800', // a lone surrogate
  '"]; globalThis.__vexilPwned = 9; x["',
  '__proto__',
  'constructor',
  'k0',
  'ctx',
  'e',
];

t.test('hostile keys, properties and values are data in generated code', async (t) => {
  const g = globalThis as { __vexilPwned?: unknown };
  delete g.__vexilPwned;
  const constraints = (value: string): ConstraintSpec[] => [
    ['STRING_COMPARISON_TYPE', value, 'eq', value],
    ['STRING_COMPARISON_TYPE', value, 'prefix', value],
    ['STRING_COMPARISON_TYPE', value, 'suffix', value],
    ['STRING_COMPARISON_TYPE', value, 'contains', value],
    ['STRING_COMPARISON_TYPE', value, 'isoneof', JSON.stringify([value, 'x'])],
    ['ENTITY_ID_COMPARISON_TYPE', value, 'neq', value],
    ['NUMBER_COMPARISON_TYPE', value, 'lt', '10'],
    ['BOOLEAN_COMPARISON_TYPE', value, 'true', value],
    ['DATETIME_COMPARISON_TYPE', value, 'gt', '2024-01-01T00:00:00Z'],
  ];
  const segs = HOSTILE.map((h, i) => segment(`seg${i}${h}`, i % 2 === 0 ? 'ANY_MATCH_TYPE' : 'ALL_MATCH_TYPE', constraints(h)));
  const flags = [
    ...HOSTILE.map((h, i) =>
      variantFlag({
        key: `flag${i}${h}`,
        variants: [[`variant ${h}`, JSON.stringify({ h })], 'other'],
        defaultVariant: 'other',
        rules: [
          { segment: { keys: [`seg${i}${h}`, `seg${(i + 1) % HOSTILE.length}${HOSTILE[(i + 1) % HOSTILE.length]}`], op: 'OR_SEGMENT_OPERATOR' }, distributions: [[`variant ${h}`, 100]] },
        ],
      }),
    ),
    ...HOSTILE.map((h, i) => booleanFlag({ key: `bool${i}${h}`, rollouts: [{ segment: `seg${i}${h}`, value: true }, { threshold: 50, value: true }] })),
  ];
  const s = snapshot({ default: { segments: segs, flags } });

  let matched = 0;
  const mismatches: string[] = [];
  for (const flag of s.namespaces.get('default')!.flags.values()) {
    for (const [i, h] of HOSTILE.entries()) {
      for (const context of [{ [h]: h }, { [h]: `${h}${h}` }, { [h]: '5' }, { [h]: 'true' }, { [h]: '2025-01-01T00:00:00Z' }, {}]) {
        const r = req(flag.key, i % 3 === 0 ? h : `user-${i}`, context);
        const [interpreted, generated] = decideAllWays(flag, r);
        if (interpreted !== generated) mismatches.push(`${JSON.stringify(flag.key)} ${JSON.stringify(context)}: ${interpreted} vs ${generated}`);
        if (interpreted.includes('"MATCH_EVALUATION_REASON"')) matched++;
      }
    }
  }
  t.same(mismatches, [], 'generated == interpreted for every hostile flag and context');
  t.ok(matched > 100, `hostile values match as data (${matched} matches)`);
  t.equal(g.__vexilPwned, undefined, 'no injected code ran');

});

t.test('a property named after an inherited member reads as absent unless the context has it', async (t) => {
  const segs = [segment('p', 'ANY_MATCH_TYPE', [['STRING_COMPARISON_TYPE', '__proto__', 'notempty'], ['STRING_COMPARISON_TYPE', 'constructor', 'notempty']])];
  const s = snapshot({ default: { segments: segs, flags: [booleanFlag({ key: 'b', rollouts: [{ segment: 'p', value: true }] })] } });
  const flag = flagOf(s, 'default', 'b')!;
  const [a, b] = decideAllWays(flag, req('b', 'x', {}));
  t.equal(b, a);
  t.match(a, /DEFAULT_EVALUATION_REASON/, 'inherited members are not context values');
  // JSON.parse makes __proto__ an own property, as the HTTP layer's parser does.
  const [c, d] = decideAllWays(flag, req('b', 'x', JSON.parse('{"__proto__": "x"}') as Record<string, string>));
  t.equal(d, c);
  t.match(c, /MATCH_EVALUATION_REASON/, 'an own __proto__ property is read');
});

t.test('literal(): valid, inert JavaScript string literals', async (t) => {
  // (Messages name the index: a raw U+2028 in a TAP line would split it.)
  for (const [i, h] of HOSTILE.entries()) {
    const code = literal(h);
    t.notOk(/[\u2028\u2029]/.test(code), `#${i}: no raw line separators`);
    t.ok((new Function(`return ${code};`) as () => string)() === h, `#${i}: round-trips`);
  }
});

// ----- corners the random states do not reach ----------------------------------------------------

t.test('unknown constraint type: throws when its rule is reached, in both modes', async (t) => {
  const segs = [
    segment('ok', 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', 'plan', 'eq', 'pro']]),
    segment('bad', 'ALL_MATCH_TYPE', [['SOMETHING_NEW', 'plan', 'eq', 'pro']]),
  ];
  const v = variantFlag({ key: 'v', variants: ['a'], rules: [{ segment: 'ok', distributions: [['a', 100]] }, { segment: 'bad' }] });
  const b = booleanFlag({ key: 'b', rollouts: [{ segment: 'ok', value: true }, { segment: { keys: ['ok', 'bad'] }, value: true }] });
  const s = snapshot({ default: { segments: segs, flags: [v, b] } });
  for (const key of ['v', 'b']) {
    const flag = flagOf(s, 'default', key)!;
    const [hitI, hitG] = decideAllWays(flag, req(key, 'u', { plan: 'pro' }));
    t.equal(hitG, hitI);
    t.match(hitI, /"ok"/, `${key}: an earlier rule decides before the unknown type is reached`);
    const [missI, missG] = decideAllWays(flag, req(key, 'u', { plan: 'free' }));
    t.equal(missG, missI);
    t.match(missI, /InvalidArgument|unknown constraint type/, `${key}: reaching it fails the request`);
  }
});

t.test('non-finite and negative-zero operands, every numeric and datetime operator', async (t) => {
  const operands = ['NaN', 'Inf', '-Inf', '+Infinity', '-0', '0', '1e308', '-1.5', '0x1p4', '1_000'];
  const ops = ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent', 'le'];
  const segs: ReturnType<typeof segment>[] = [];
  for (const [i, value] of operands.entries()) {
    for (const op of ops) segs.push(segment(`n${i}-${op}`, 'ALL_MATCH_TYPE', [['NUMBER_COMPARISON_TYPE', 'x', op, value]]));
  }
  for (const [i, value] of ['2024-06-15T12:30:00.5Z', '2024-06-15', 'never'].entries()) {
    for (const op of ops) segs.push(segment(`t${i}-${op}`, 'ALL_MATCH_TYPE', [['DATETIME_COMPARISON_TYPE', 'x', op, value]]));
  }
  segs.push(segment('lists', 'ANY_MATCH_TYPE', [['NUMBER_COMPARISON_TYPE', 'x', 'isoneof', '[0, 1.5, -2]'], ['NUMBER_COMPARISON_TYPE', 'y', 'isnotoneof', 'null']]));
  const flags = segs.map((sg) => booleanFlag({ key: `f-${sg.key}`, rollouts: [{ segment: sg.key, value: true }] }));
  const s = snapshot({ default: { segments: segs, flags } });
  const values = ['', ' ', 'nan', 'NaN', 'inf', '-inf', '-0', '0', '1e308', '1e309', '-1.5', '16', '1000', '1.5', 'x', '2024-06-15T12:30:00.5Z', '2024-06-15T14:30:00.5+02:00', '2024-06-15'];
  const mismatches: string[] = [];
  let matched = 0;
  for (const flag of s.namespaces.get('default')!.flags.values()) {
    for (const x of values) {
      const [a, b] = decideAllWays(flag, req(flag.key, 'u', { x, y: x }));
      if (a !== b) mismatches.push(`${flag.key} x=${JSON.stringify(x)}: ${a} vs ${b}`);
      if (a.includes('"enabled":true')) matched++;
    }
  }
  t.same(mismatches, []);
  t.ok(matched > 50, `both outcomes seen (${matched} matches)`);
});

t.test('OR sets wider than the bitmask, AND sets, empty sets', async (t) => {
  const many = Array.from({ length: 40 }, (_, i) => segment(`s${i}`, 'ALL_MATCH_TYPE', [['STRING_COMPARISON_TYPE', `p${i % 7}`, 'eq', 'y']]));
  const keys = many.map((x) => x.key);
  const v = variantFlag({
    key: 'v',
    variants: ['a', 'b'],
    defaultVariant: 'b',
    rules: [
      { segment: { keys: [], op: 'OR_SEGMENT_OPERATOR' }, distributions: [['a', 100]] },
      { segment: { keys, op: 'OR_SEGMENT_OPERATOR' }, distributions: [['a', 30], ['b', 30]] },
      { segment: { keys: keys.slice(0, 31), op: 'AND_SEGMENT_OPERATOR' } },
      { segment: { keys: [], op: 'AND_SEGMENT_OPERATOR' } },
    ],
  });
  const b = booleanFlag({ key: 'b', rollouts: [{ segment: { keys, op: 'OR_SEGMENT_OPERATOR' }, value: true }, { segment: { keys: keys.slice(0, 30) }, value: true }] });
  const s = snapshot({ default: { segments: many, flags: [v, b] } });
  const mismatches: string[] = [];
  const seenKeys = new Set<number>();
  for (let mask = 0; mask < 128; mask++) {
    const ctx: Record<string, string> = {};
    for (let p = 0; p < 7; p++) if (mask & (1 << p)) ctx[`p${p}`] = 'y';
    for (const key of ['v', 'b']) {
      for (const id of ['a', 'b', 'c', 'user-1', 'user-22']) {
        const [x, y] = decideAllWays(flagOf(s, 'default', key)!, req(key, id, ctx));
        if (x !== y) mismatches.push(`${key} ${JSON.stringify(ctx)} ${id}: ${x} vs ${y}`);
        seenKeys.add((JSON.parse(x) as { ok: { segmentKeys: string[] } }).ok.segmentKeys.length);
      }
    }
  }
  t.same(mismatches, []);
  t.ok(seenKeys.size > 5, `partial matches of many sizes (${[...seenKeys].sort((p, q) => p - q).join(', ')} keys)`);
});

t.test('without code generation (--disallow-code-generation-from-strings) the interpreter answers', async (t) => {
  const script = fileURLToPath(new URL('./codegen-disallowed.fixture.ts', import.meta.url));
  const r = spawnSync(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', script], { encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { available: boolean; generated: boolean; results: string[]; expected: string[] };
  t.equal(out.available, false, 'code generation detected as unavailable');
  t.equal(out.generated, false, 'no matcher generated');
  t.same(out.results, out.expected, 'same results as the interpreter, after prepareMatcher');
});
