/**
 * The client snapshot document (src/server/client-snapshot/document.ts), field by field:
 * - against the files, read independently with the `yaml` package, for the examples/ state, the
 *   every-field fixture (every field the state format has) and the odd cases of the
 *   client-snapshot fixture; ids are checked to be the ones the management API serves;
 * - against the independent writer of the Flipt differential test (test/support/flipt-snapshot.ts)
 *   over 200 random states (test/support/random-state.ts);
 * - the float32 printing of rollouts and percentages.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { snapshotDocument, snapshotDocumentText, type SnapshotDocument } from '../../../src/server/client-snapshot/document.js';
import { float32Number } from '../../../src/server/client-snapshot/float32.js';
import { load, selectStateFiles } from '../../../src/state/load.js';
import type { Namespace, Snapshot } from '../../../src/model/snapshot.js';
import { toFliptSnapshot } from '../../support/flipt-snapshot.js';
import { mulberry32 } from '../../support/prng.js';
import { generateState, stateRng, toFeaturesYaml } from '../../support/random-state.js';
import { listFiles, stateFile } from '../../support/state-fixture.js';
import { FIXTURES } from '../support.js';

const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));
const BUILT_AT = '2026-01-02T03:04:05Z';

type Obj = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

/** The folder's state files, loaded as a source would hand them over. */
function loadDir(dir: string): { snapshot: Snapshot; docs: Obj[] } {
  const selection = selectStateFiles(listFiles(dir));
  const files = selection.paths.map((p) => stateFile(dir, p));
  const result = load(files, { reference: 'main', revision: 'r1', now: new Date(BUILT_AT) });
  if (!result.snapshot) throw new Error(`${dir}: ${JSON.stringify(result.problems)}`);
  const docs: Obj[] = [];
  for (const p of selection.paths) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, p), 'utf8'))) docs.push(doc.toJS() as Obj);
  }
  return { snapshot: result.snapshot, docs };
}

const MATCH: Record<string, string> = { ALL_MATCH_TYPE: 'ALL_SEGMENT_MATCH_TYPE', ANY_MATCH_TYPE: 'ANY_SEGMENT_MATCH_TYPE' };
const nsKeyOf = (doc: Obj) => (typeof doc.namespace === 'string' ? doc.namespace : isObj(doc.namespace) ? (doc.namespace.key as string) : 'default');

/**
 * The document the files call for, written from the YAML (not from vexil's model) except for the
 * ids, which come from the model: those are the management API's ids (checked in every-field.test.ts).
 */
function expectedDocument(docs: readonly Obj[], ns: Namespace): SnapshotDocument {
  const segments = new Map<string, Obj>();
  const flags = new Map<string, Obj>();
  for (const doc of docs) {
    if (nsKeyOf(doc) !== ns.key) continue;
    for (const s of list(doc.segments)) segments.set(s.key as string, s);
    for (const f of list(doc.flags)) flags.set(f.key as string, f);
  }
  const segmentJson = (key: string) => {
    const s = segments.get(key)!;
    const model = ns.segments.get(key)!;
    return {
      key,
      name: s.name as string,
      description: (s.description as string | undefined) ?? '',
      matchType: MATCH[s.match_type as string]!,
      constraints: list(s.constraints).map((c, i) => ({
        id: model.constraints[i]!.id,
        type: (c.type as string).replace('_COMPARISON_TYPE', '_CONSTRAINT_COMPARISON_TYPE'),
        property: c.property as string,
        operator: c.operator as string,
        value: c.value === undefined ? '' : String(c.value),
      })),
    };
  };
  const segmentsOf = (keys: readonly string[]) => [...new Set(keys)].map(segmentJson);
  const out: SnapshotDocument = { namespace: { key: ns.key }, flags: [] };
  for (const key of [...flags.keys()].sort()) {
    const f = flags.get(key)!;
    const model = ns.flags.get(key)!;
    const type = (f.type as 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE' | undefined) ?? 'VARIANT_FLAG_TYPE';
    const variants = list(f.variants);
    const variantId = (k: string) => model.variants.find((v) => v.key === k)!.id;
    const attachment = (k: string) => JSON.stringify(variants.find((v) => v.key === k)?.attachment ?? null);
    const flag: Json = {
      key,
      name: f.name,
      description: f.description ?? '',
      enabled: f.enabled === true,
      type,
      createdAt: BUILT_AT,
      updatedAt: BUILT_AT,
      rules:
        type === 'VARIANT_FLAG_TYPE'
          ? list(f.rules).map((r, i) => ({
              id: model.rules[i]!.id,
              segments: segmentsOf(typeof r.segment === 'string' ? [r.segment] : ((r.segment as Obj).keys as string[])),
              rank: i + 1,
              segmentOperator: (isObj(r.segment) ? (r.segment.operator as string | undefined) : undefined) ?? 'OR_SEGMENT_OPERATOR',
              distributions: list(r.distributions).map((d) => ({
                id: '',
                ruleId: '',
                variantId: variantId(d.variant as string),
                variantKey: d.variant,
                variantAttachment: attachment(d.variant as string),
                rollout: Math.fround(d.rollout as number),
              })),
            }))
          : [],
      rollouts:
        type === 'BOOLEAN_FLAG_TYPE'
          ? list(f.rollouts).map((r, i) => {
              if (isObj(r.segment)) {
                const s = r.segment;
                return {
                  type: 'SEGMENT_ROLLOUT_TYPE',
                  rank: i + 1,
                  segment: {
                    value: s.value === true,
                    segmentOperator: (s.operator as string | undefined) ?? 'OR_SEGMENT_OPERATOR',
                    segments: segmentsOf(s.key !== undefined ? [s.key as string] : (s.keys as string[])),
                  },
                };
              }
              if (isObj(r.threshold)) {
                return { type: 'THRESHOLD_ROLLOUT_TYPE', rank: i + 1, threshold: { percentage: Math.fround(r.threshold.percentage as number), value: r.threshold.value === true } };
              }
              return { type: 'UNKNOWN_ROLLOUT_TYPE', rank: i + 1 };
            })
          : [],
    };
    const dv = variants.filter((v) => v.default === true).at(-1);
    if (dv !== undefined && type === 'VARIANT_FLAG_TYPE') flag.defaultVariant = { id: variantId(dv.key as string), key: dv.key, attachment: attachment(dv.key as string) };
    out.flags.push(flag);
  }
  return out;
}

/**
 * The served document with what the expectation cannot spell as text made comparable: attachments
 * parsed (Go's re-encoding is attachment.ts's business, tested there) and float32 numbers widened
 * (the text is checked by the float32 tests below and the odd-cases test).
 */
function comparable(doc: SnapshotDocument): Json {
  const d: Json = JSON.parse(JSON.stringify(doc));
  for (const f of d.flags) {
    for (const r of f.rules) {
      for (const x of r.distributions) {
        x.variantAttachment = JSON.parse(x.variantAttachment);
        x.rollout = Math.fround(x.rollout);
      }
    }
    for (const r of f.rollouts) if (r.threshold) r.threshold.percentage = Math.fround(r.threshold.percentage);
    if (f.defaultVariant) f.defaultVariant.attachment = JSON.parse(f.defaultVariant.attachment);
  }
  return d;
}

function compareWithFiles(t: Test, dir: string): Snapshot {
  const { snapshot, docs } = loadDir(dir);
  for (const ns of snapshot.namespaces.values()) {
    const served = comparable(JSON.parse(snapshotDocumentText(ns, BUILT_AT)) as SnapshotDocument);
    const expected = comparable(expectedDocument(docs, ns));
    t.equal(served.flags.length, expected.flags.length, `${ns.key}: every flag`);
    for (let i = 0; i < expected.flags.length; i++) t.same(served.flags[i], expected.flags[i], `${ns.key}/${expected.flags[i].key}`);
    t.same(served.namespace, { key: ns.key });
    t.same(Object.keys(served), ['namespace', 'flags']);
  }
  return snapshot;
}

t.test('examples/: every flag of every namespace, field by field', async (t) => {
  const snapshot = compareWithFiles(t, EXAMPLES);
  t.same([...snapshot.namespaces.keys()], ['checkout', 'default']);
  // One flag spelled out in full, so the shape is on the page.
  const doc = snapshotDocument(snapshot.namespaces.get('default')!, BUILT_AT);
  const search = doc.flags.find((f) => f.key === 'new-search')!;
  const staff = snapshot.namespaces.get('default')!.segments.get('internal-users')!;
  t.same(search, {
    key: 'new-search',
    name: 'New search',
    description: 'The rewritten search page',
    enabled: false,
    type: 'BOOLEAN_FLAG_TYPE',
    createdAt: BUILT_AT,
    updatedAt: BUILT_AT,
    rules: [],
    rollouts: [
      {
        type: 'SEGMENT_ROLLOUT_TYPE',
        rank: 1,
        segment: {
          value: true,
          segmentOperator: 'OR_SEGMENT_OPERATOR',
          segments: [
            {
              key: 'internal-users',
              name: 'Internal users',
              description: 'Staff, recognised by their e-mail address as entity id, and the QA robots',
              matchType: 'ANY_SEGMENT_MATCH_TYPE',
              constraints: [
                { id: staff.constraints[0]!.id, type: 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE', property: 'entityId', operator: 'suffix', value: '@example.com' },
                { id: staff.constraints[1]!.id, type: 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE', property: 'entityId', operator: 'isoneof', value: '["qa-bot-1", "qa-bot-2"]' },
              ],
            },
          ],
        },
      },
      { type: 'THRESHOLD_ROLLOUT_TYPE', rank: 2, threshold: { percentage: 25, value: true } },
    ],
  });
  const text = snapshotDocumentText(snapshot.namespaces.get('default')!, BUILT_AT);
  t.match(text, /^\{"namespace":\{"key":"default"\},"flags":\[\{"key":"color-theme","name":"Color theme","description":"Which theme the web app renders","enabled":true,"type":"VARIANT_FLAG_TYPE","createdAt":"2026-01-02T03:04:05Z","updatedAt":"2026-01-02T03:04:05Z","rules":\[\{"id":"[0-9a-f-]{36}","segments":\[\{"key":"internal-users"/, 'field order as Flipt writes it');
});

t.test('every-field fixture: every field of every version, field by field', async (t) => {
  compareWithFiles(t, join(FIXTURES, 'every-field'));
});

t.test('odd cases: float32 texts, repeated and absent segment keys, no constraints, no variants', async (t) => {
  const { snapshot } = loadDir(join(FIXTURES, 'client-snapshot'));
  compareWithFiles(t, join(FIXTURES, 'client-snapshot'));
  const text = snapshotDocumentText(snapshot.namespaces.get('odd')!);
  t.match(text, /"rollout":33\.333332\}/, 'a rollout printed as Flipt prints its float32');
  t.notMatch(text, /33\.3333333/);
  t.match(text, /"percentage":12\.345679,/, 'a percentage too');
  t.match(text, /"rollout":0\.1\}/, 'a short one as written');
  const doc = snapshotDocument(snapshot.namespaces.get('odd')!);
  const thirds = doc.flags.find((f) => f.key === 'thirds')!;
  t.same(thirds.rules[0]!.segments.map((s) => s.key), ['pro', 'everyone'], 'a key named twice is inlined once, in first-named order');
  t.equal(thirds.rules.length, 2, 'a multi-segment rule is written once (Flipt v1.61.1 repeats it per segment)');
  t.equal(thirds.rules[0]!.distributions.length, 3, 'with its distributions once');
  t.same(thirds.rules[1]!.segments, [], '`keys: []`: no segments');
  t.same(thirds.rules[0]!.segments[1]!.constraints, [], 'a segment without constraints: []');
  const off = doc.flags.find((f) => f.key === 'off')!;
  t.same(off, { key: 'off', name: 'Off', description: '', enabled: false, type: 'VARIANT_FLAG_TYPE', rules: [], rollouts: [] }, 'no timestamps without `at`; no defaultVariant');
  const threshold = doc.flags.find((f) => f.key === 'long-threshold')!;
  t.same(threshold.rollouts[0], { type: 'SEGMENT_ROLLOUT_TYPE', rank: 1, segment: { value: true, segmentOperator: 'OR_SEGMENT_OPERATOR', segments: [thirds.rules[0]!.segments[1]] } });
  t.notOk('defaultVariant' in threshold);
});

t.test('200 random states: the same document as the Flipt differential test writes', async (t) => {
  let flags = 0;
  for (let i = 0; i < 200; i++) {
    const state = generateState(stateRng(7, i));
    const enc = new TextEncoder();
    const result = load(toFeaturesYaml(state).map((f) => ({ path: f.path, bytes: enc.encode(f.text) })), { reference: 'main', revision: 'r' });
    if (!result.snapshot) {
      t.fail(`state ${i} refused: ${JSON.stringify(result.problems)}`);
      continue;
    }
    for (const genNs of state.namespaces) {
      const ns = result.snapshot.namespaces.get(genNs.key)!;
      const ours = normalize(snapshotDocument(ns), ns);
      const theirs = normalize(toFliptSnapshot(genNs), ns);
      flags += theirs.flags.length;
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) t.same(ours, theirs, `state ${i} namespace ${genNs.key}`);
    }
  }
  t.ok(flags > 500, `${flags} flags compared`);
});

/**
 * The two writers agree on everything but what they cannot know alike: ids (flipt-snapshot.ts
 * makes up its own; vexil's are checked against the management API above), segment names and
 * descriptions (Flipt writes "", vexil what is declared), timestamps, and flag order (vexil:
 * key order; the generator: its own). Those are set aside here.
 */
function normalize(doc: SnapshotDocument, ns: Namespace): Json {
  const d: Json = JSON.parse(JSON.stringify(doc));
  const segment = (s: Json) => {
    s.name = '';
    s.description = '';
    for (const c of s.constraints) c.id = '';
  };
  for (const f of d.flags) {
    delete f.createdAt;
    delete f.updatedAt;
    const model = ns.flags.get(f.key)!;
    for (const r of f.rules) {
      r.id = '';
      r.segments.forEach(segment);
      for (const x of r.distributions) {
        // Each names its variant by key; the id must be that variant's.
        x.variantId = model.variants.find((v) => v.key === x.variantKey) !== undefined ? 'id' : 'missing';
        x.rollout = float32Number(x.rollout);
      }
    }
    for (const r of f.rollouts) {
      if (r.segment) r.segment.segments.forEach(segment);
      if (r.threshold) r.threshold.percentage = float32Number(r.threshold.percentage);
    }
    if (f.defaultVariant) f.defaultVariant.id = '';
  }
  d.flags.sort((a: Json, b: Json) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return d;
}

t.test('float32Number: the shortest text that reads back as the same float32 (Go strconv, bitSize 32)', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '0'],
    [100, '100'],
    [50, '50'],
    [33.3, '33.3'],
    [66.7, '66.7'],
    [12.75, '12.75'],
    [0.1, '0.1'],
    [0.05, '0.05'],
    [99.99, '99.99'],
    [33.333333333, '33.333332'],
    [33.333333334, '33.333332'],
    [12.3456789012, '12.345679'],
    [1 / 3, '0.33333334'],
    [16777217, '16777216'],
    [0.000001, '0.000001'],
  ];
  for (const [n, text] of cases) t.equal(JSON.stringify(float32Number(n)), text, String(n));
  // Property: the text reads back as the same float32, and no shorter text does.
  const rng = mulberry32(12);
  for (let i = 0; i < 10_000; i++) {
    const n = Math.round(rng() * 1e9) / 1e7;
    const out = float32Number(n);
    if (Math.fround(out) !== Math.fround(n)) t.fail(`${n}: ${out} is another float32`);
    const digits = String(out).replace('.', '').replace(/^0+/, '').length;
    if (digits > 1) {
      const shorter = Number(Math.fround(n).toPrecision(digits - 1));
      if (Math.fround(shorter) === Math.fround(n)) t.fail(`${n}: ${out} is not the shortest (${shorter})`);
    }
  }
  t.pass('10,000 random percentages');
});
