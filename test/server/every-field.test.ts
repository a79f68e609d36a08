/**
 * Nothing the state format allows is lost or altered on its way to the management API: the
 * fixture `every-field` sets every field of schemas/features.schema.json (checked below), in
 * document versions 1.0 to 1.4, and every management GET is compared, field by field, with the
 * files as the `yaml` package reads them (not with a hard-coded copy of the expected responses).
 *
 * Where the API's shape differs from the file's by Flipt's rules, the expectation says so: a
 * string namespace is named by its key, a rule's rank is its position, a rule's object-form
 * segment is served as `segmentKeys` (even with one key) while a rollout's single key is served as
 * `segmentKey`, attachments are re-encoded JSON (compared parsed), a variant's `flagKey` is "".
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { parseAllDocuments } from 'yaml';
import { FIXTURES, get, startTestServer } from './support.js';

const FIXTURE = 'every-field';
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

type Obj = Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);

interface FileDoc {
  readonly file: string;
  readonly data: Obj;
}

/** The fixture's documents in walk order, read by the `yaml` package (YAML 1.2 core schema). */
function readFixture(): FileDoc[] {
  const dir = join(FIXTURES, FIXTURE);
  const docs: FileDoc[] = [];
  for (const file of readdirSync(dir).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
      docs.push({ file, data: doc.toJS() as Obj });
    }
  }
  return docs;
}

interface ExpectedNamespace {
  key: string;
  name: string;
  description: string;
  flags: Map<string, Obj>;
  segments: Map<string, Obj>;
}

/** Namespaces as the files declare them; the first document naming one gives its name and description. */
function namespacesOf(docs: readonly FileDoc[]): Map<string, ExpectedNamespace> {
  const out = new Map<string, ExpectedNamespace>();
  out.set('default', { key: 'default', name: 'Default', description: '', flags: new Map(), segments: new Map() });
  for (const { data } of docs) {
    const raw = data.namespace;
    const key = typeof raw === 'string' ? raw : isObj(raw) ? (raw.key as string) : 'default';
    let ns = out.get(key);
    if (!ns) {
      ns = isObj(raw)
        ? { key, name: (raw.name as string | undefined) ?? '', description: (raw.description as string | undefined) ?? '', flags: new Map(), segments: new Map() }
        : { key, name: key, description: '', flags: new Map(), segments: new Map() };
      out.set(key, ns);
    }
    for (const f of list(data.flags)) ns.flags.set(f.key as string, f);
    for (const s of list(data.segments)) ns.segments.set(s.key as string, s);
  }
  return out;
}

/** Key order-independent, type-exact text of a JSON value (arrays stay arrays, objects objects). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (isObj(v)) return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

const byKey = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Which fields of each kind of object the fixture sets, to prove it sets every one the schema
 * allows; each comparison also asserts it handled every field the file sets.
 */
class Coverage {
  readonly seen = new Map<string, Set<string>>();
  fields(t: Test, kind: string, o: Obj, handled: readonly string[]): void {
    let set = this.seen.get(kind);
    if (!set) this.seen.set(kind, (set = new Set()));
    for (const k of Object.keys(o)) {
      set.add(k);
      if (!handled.includes(k)) t.fail(`${kind} field \`${k}\` is set in the fixture but not compared`);
    }
  }
  has(kind: string, field: string): boolean {
    return this.seen.get(kind)?.has(field) === true;
  }
}

const coverage = new Coverage();
/** `TYPE op` pairs of the fixture's constraints, attachment value types, metadata value types... */
const shapes = new Set<string>();

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  return typeof v;
}

function noteAttachment(v: unknown): void {
  shapes.add(`attachment ${jsonType(v)}`);
  if (Array.isArray(v)) v.forEach(noteAttachment);
  else if (isObj(v)) Object.values(v).forEach(noteAttachment);
}

function checkTimes(t: Test, served: Json, what: string): void {
  t.match(served.createdAt, RFC3339, `${what}: createdAt`);
  t.equal(served.updatedAt, served.createdAt, `${what}: updatedAt`);
}

function checkVariant(t: Test, file: Obj, served: Json, nsKey: string, what: string): void {
  coverage.fields(t, 'variant', file, ['key', 'name', 'description', 'attachment', 'default']);
  t.equal(served.key, file.key, `${what}: key`);
  t.equal(served.name, file.name ?? '', `${what}: name`);
  t.equal(served.description, file.description ?? '', `${what}: description`);
  t.equal(served.namespaceKey, nsKey, `${what}: namespaceKey`);
  t.equal(served.flagKey, '', `${what}: flagKey is "" as Flipt serves it`);
  t.equal(typeof served.id, 'string');
  t.not(served.id, '');
  if (file.attachment === undefined || file.attachment === null) {
    t.equal(served.attachment, 'null', `${what}: no attachment`);
    shapes.add(file.attachment === null ? 'attachment explicit null' : 'attachment absent');
  } else {
    noteAttachment(file.attachment);
    t.equal(canonical(JSON.parse(served.attachment)), canonical(file.attachment), `${what}: attachment`);
  }
  checkTimes(t, served, what);
}

function checkFlag(t: Test, file: Obj, served: Json, nsKey: string): void {
  const what = `flag ${nsKey}/${String(file.key)}`;
  coverage.fields(t, 'flag', file, ['key', 'name', 'description', 'enabled', 'type', 'metadata', 'variants', 'rules', 'rollouts']);
  t.equal(served.key, file.key, `${what}: key`);
  t.equal(served.name, file.name, `${what}: name`);
  t.equal(served.description, file.description ?? '', `${what}: description`);
  t.equal(served.enabled, file.enabled ?? false, `${what}: enabled`);
  t.equal(served.type, file.type ?? 'VARIANT_FLAG_TYPE', `${what}: type`);
  t.equal(served.namespaceKey, nsKey, `${what}: namespaceKey`);
  checkTimes(t, served, what);
  if (file.metadata === undefined) {
    t.notOk('metadata' in served, `${what}: no metadata`);
  } else {
    const metadata = file.metadata as Obj;
    for (const v of Object.values(metadata)) shapes.add(`metadata ${jsonType(v)}`);
    t.same(served.metadata, metadata, `${what}: metadata`);
    t.same(Object.keys(served.metadata), Object.keys(metadata), `${what}: metadata in declared order`);
    for (const [k, v] of Object.entries(metadata)) t.equal(jsonType(served.metadata[k]), jsonType(v), `${what}: metadata ${k} keeps its type`);
  }
  const variants = list(file.variants);
  t.equal(served.variants.length, variants.length, `${what}: variant count`);
  variants.forEach((v, i) => checkVariant(t, v, served.variants[i], nsKey, `${what} variant ${i}`));
  const defaultIndex = variants.findIndex((v) => v.default === true);
  if (defaultIndex >= 0) {
    shapes.add('default variant');
    t.same(served.defaultVariant, served.variants[defaultIndex], `${what}: defaultVariant`);
  } else {
    t.notOk('defaultVariant' in served, `${what}: no defaultVariant`);
  }
}

function checkRule(t: Test, file: Obj, served: Json, rank: number, flag: Json, what: string): void {
  coverage.fields(t, 'rule', file, ['segment', 'rank', 'distributions']);
  t.equal(served.rank, rank, `${what}: rank is the position`);
  if (file.rank !== undefined) t.equal(served.rank, file.rank, `${what}: rank as written`);
  t.equal(served.flagKey, flag.key, `${what}: flagKey`);
  t.equal(served.namespaceKey, flag.namespaceKey, `${what}: namespaceKey`);
  checkTimes(t, served, what);
  if (typeof file.segment === 'string') {
    shapes.add('rule segment key');
    t.same([served.segmentKey, served.segmentKeys, served.segmentOperator], [file.segment, [], 'OR_SEGMENT_OPERATOR'], `${what}: segment`);
  } else {
    const seg = file.segment as Obj;
    coverage.fields(t, 'rule.segment', seg, ['keys', 'operator']);
    shapes.add(`rule segment keys ${String(seg.operator ?? 'no operator')}`);
    t.same([served.segmentKey, served.segmentKeys, served.segmentOperator], ['', seg.keys, seg.operator ?? 'OR_SEGMENT_OPERATOR'], `${what}: segments`);
  }
  const distributions = list(file.distributions);
  t.equal(served.distributions.length, distributions.length, `${what}: distribution count`);
  distributions.forEach((d, i) => {
    coverage.fields(t, 'distribution', d, ['variant', 'rollout']);
    const s = served.distributions[i];
    const variant = flag.variants.find((v: Json) => v.key === d.variant);
    t.ok(variant, `${what}: distribution ${i} names a served variant`);
    t.same([s.ruleId, s.variantId, s.rollout], [served.id, variant?.id, d.rollout], `${what}: distribution ${i}`);
    t.not(s.id, '');
    checkTimes(t, s, `${what} distribution ${i}`);
  });
}

function checkRollout(t: Test, file: Obj, served: Json, rank: number, flag: Json, what: string): void {
  coverage.fields(t, 'rollout', file, ['description', 'segment', 'threshold']);
  t.equal(served.rank, rank, `${what}: rank is the position`);
  t.equal(served.description, file.description ?? '', `${what}: description`);
  t.equal(served.flagKey, flag.key, `${what}: flagKey`);
  t.equal(served.namespaceKey, flag.namespaceKey, `${what}: namespaceKey`);
  checkTimes(t, served, what);
  if (isObj(file.segment)) {
    const seg = file.segment;
    coverage.fields(t, 'rollout.segment', seg, ['key', 'keys', 'operator', 'value']);
    const keys = seg.key !== undefined ? [seg.key as string] : (seg.keys as string[]);
    shapes.add(`rollout segment ${seg.key !== undefined ? 'key' : `keys ${String(seg.operator ?? 'no operator')}`}`);
    t.equal(served.type, 'SEGMENT_ROLLOUT_TYPE', `${what}: type`);
    t.same(served.segment, {
      segmentKey: keys.length === 1 ? keys[0] : '',
      value: seg.value ?? false,
      segmentKeys: keys.length === 1 ? [] : keys,
      segmentOperator: seg.operator ?? 'OR_SEGMENT_OPERATOR',
    }, `${what}: segment`);
    t.notOk('threshold' in served);
  } else if (isObj(file.threshold)) {
    const th = file.threshold;
    coverage.fields(t, 'rollout.threshold', th, ['percentage', 'value']);
    shapes.add(`rollout threshold ${jsonType(th.percentage)}`);
    t.equal(served.type, 'THRESHOLD_ROLLOUT_TYPE', `${what}: type`);
    t.same(served.threshold, { percentage: th.percentage, value: th.value ?? false }, `${what}: threshold`);
    t.notOk('segment' in served);
  } else {
    shapes.add('rollout empty');
    t.equal(served.type, 'UNKNOWN_ROLLOUT_TYPE', `${what}: type`);
    t.notOk('segment' in served || 'threshold' in served);
  }
}

function checkSegment(t: Test, file: Obj, served: Json, nsKey: string): void {
  const what = `segment ${nsKey}/${String(file.key)}`;
  coverage.fields(t, 'segment', file, ['key', 'name', 'description', 'match_type', 'constraints']);
  t.equal(served.key, file.key, `${what}: key`);
  t.equal(served.name, file.name, `${what}: name`);
  t.equal(served.description, file.description ?? '', `${what}: description`);
  t.equal(served.matchType, file.match_type, `${what}: matchType`);
  t.equal(served.namespaceKey, nsKey, `${what}: namespaceKey`);
  checkTimes(t, served, what);
  const constraints = list(file.constraints);
  t.equal(served.constraints.length, constraints.length, `${what}: constraint count`);
  constraints.forEach((c, i) => {
    coverage.fields(t, 'constraint', c, ['type', 'property', 'operator', 'value', 'description']);
    shapes.add(`${String(c.type)} ${String(c.operator)}`);
    const s = served.constraints[i];
    t.same(
      [s.type, s.property, s.operator, s.value, s.description, s.segmentKey, s.namespaceKey],
      [c.type, c.property, c.operator, c.value ?? '', c.description ?? '', file.key, nsKey],
      `${what}: constraint ${i}`,
    );
    t.not(s.id, '');
    checkTimes(t, s, `${what} constraint ${i}`);
  });
}

/** Every property of every object kind the schema defines, by the coverage kind that records it. */
function schemaFields(): Map<string, string[]> {
  const schema = JSON.parse(readFileSync(new URL('../../schemas/features.schema.json', import.meta.url), 'utf8'));
  const defs = schema.definitions;
  const props = (o: Json) => Object.keys(o.properties);
  const namespaceObject = schema.properties.namespace.anyOf.find((a: Json) => a.type === 'object');
  const ruleSegmentObject = defs.rule.properties.segment.anyOf.find((a: Json) => a.type === 'object');
  return new Map([
    ['document', props(schema)],
    ['namespace', props(namespaceObject)],
    ['flag', props(defs.flag)],
    ['variant', props(defs.variant)],
    ['rule', props(defs.rule)],
    ['rule.segment', props(ruleSegmentObject)],
    ['distribution', props(defs.distribution)],
    ['rollout', props(defs.rollout)],
    ['rollout.segment', props(defs.rollout.properties.segment)],
    ['rollout.threshold', props(defs.rollout.properties.threshold)],
    ['segment', props(defs.segment)],
    ['constraint', props(defs.constraint)],
  ]);
}

/** Operators per comparison type (schemas/features.schema.json lists them in the operator's description). */
const OPERATORS: Record<string, readonly string[]> = {
  STRING_COMPARISON_TYPE: ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'],
  ENTITY_ID_COMPARISON_TYPE: ['eq', 'neq', 'empty', 'notempty', 'prefix', 'suffix', 'contains', 'notcontains', 'isoneof', 'isnotoneof'],
  NUMBER_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent', 'isoneof', 'isnotoneof'],
  DATETIME_COMPARISON_TYPE: ['eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'present', 'notpresent'],
  BOOLEAN_COMPARISON_TYPE: ['true', 'false', 'present', 'notpresent'],
};

t.test('every field of the state format, read back through every management GET', async (t) => {
  const docs = readFixture();
  const expected = namespacesOf(docs);
  const { url, store } = await startTestServer(t, { fixture: FIXTURE });
  t.ok(store.get(), 'the fixture loads');
  const api = `${url}/api/v1`;

  for (const { data } of docs) {
    coverage.fields(t, 'document', data, ['version', 'namespace', 'flags', 'segments']);
    shapes.add(`version ${String(data.version ?? 'absent')}`);
    if (isObj(data.namespace)) coverage.fields(t, 'namespace', data.namespace, ['key', 'name', 'description']);
    shapes.add(`namespace ${data.namespace === undefined ? 'absent' : isObj(data.namespace) ? 'object' : 'key'}`);
  }

  t.test('namespaces: list and get', async (t) => {
    const r = await get(`${api}/namespaces`);
    t.equal(r.status, 200);
    const keys = [...expected.keys()].sort(byKey);
    t.same(r.body.namespaces.map((n: Json) => n.key), keys);
    t.same([r.body.totalCount, r.body.nextPageToken], [keys.length, '']);
    for (const [i, key] of keys.entries()) {
      const ns = expected.get(key)!;
      const listed = r.body.namespaces[i];
      t.same([listed.key, listed.name, listed.description, listed.protected], [ns.key, ns.name, ns.description, false], `namespace ${key}`);
      checkTimes(t, listed, `namespace ${key}`);
      const one = await get(`${api}/namespaces/${key}`);
      t.equal(one.status, 200);
      t.same(one.body, listed, `namespace ${key}: get = list item`);
    }
  });

  for (const ns of expected.values()) {
    const base = `${api}/namespaces/${ns.key}`;

    t.test(`namespace ${ns.key}: flags with their variants, rules and rollouts (list and get)`, async (t) => {
      const r = await get(`${base}/flags`);
      t.equal(r.status, 200);
      const keys = [...ns.flags.keys()].sort(byKey);
      t.same(r.body.flags.map((f: Json) => f.key), keys);
      t.same([r.body.totalCount, r.body.nextPageToken], [keys.length, '']);
      for (const [i, key] of keys.entries()) {
        const file = ns.flags.get(key)!;
        const one = await get(`${base}/flags/${encodeURIComponent(key)}`);
        t.equal(one.status, 200);
        t.same(r.body.flags[i], one.body, `flag ${key}: list item = get`);
        const flag = one.body;
        checkFlag(t, file, flag, ns.key);

        const rules = await get(`${base}/flags/${encodeURIComponent(key)}/rules`);
        t.equal(rules.status, 200);
        const fileRules = list(file.rules);
        t.same([rules.body.rules.length, rules.body.totalCount, rules.body.nextPageToken], [fileRules.length, fileRules.length, '']);
        for (const [j, rule] of fileRules.entries()) {
          const listed = rules.body.rules[j];
          checkRule(t, rule, listed, j + 1, flag, `flag ${key} rule ${j + 1}`);
          const byId = await get(`${base}/flags/${encodeURIComponent(key)}/rules/${listed.id}`);
          t.equal(byId.status, 200);
          t.same(byId.body, listed, `flag ${key} rule ${j + 1}: get = list item`);
        }

        const rollouts = await get(`${base}/flags/${encodeURIComponent(key)}/rollouts`);
        t.equal(rollouts.status, 200);
        const fileRollouts = list(file.rollouts);
        t.same([rollouts.body.rollouts.length, rollouts.body.totalCount, rollouts.body.nextPageToken], [fileRollouts.length, fileRollouts.length, '']);
        t.same(rollouts.body.rules, rollouts.body.rollouts, 'the same items under rules (Flipt clients) and rollouts (interface)');
        for (const [j, rollout] of fileRollouts.entries()) {
          const listed = rollouts.body.rollouts[j];
          checkRollout(t, rollout, listed, j + 1, flag, `flag ${key} rollout ${j + 1}`);
          const byId = await get(`${base}/flags/${encodeURIComponent(key)}/rollouts/${listed.id}`);
          t.equal(byId.status, 200);
          t.same(byId.body, listed, `flag ${key} rollout ${j + 1}: get = list item`);
        }
      }
    });

    t.test(`namespace ${ns.key}: segments with their constraints (list and get)`, async (t) => {
      const r = await get(`${base}/segments`);
      t.equal(r.status, 200);
      const keys = [...ns.segments.keys()].sort(byKey);
      t.same(r.body.segments.map((s: Json) => s.key), keys);
      t.same([r.body.totalCount, r.body.nextPageToken], [keys.length, '']);
      for (const [i, key] of keys.entries()) {
        const one = await get(`${base}/segments/${encodeURIComponent(key)}`);
        t.equal(one.status, 200);
        t.same(r.body.segments[i], one.body, `segment ${key}: list item = get`);
        checkSegment(t, ns.segments.get(key)!, one.body, ns.key);
      }
    });
  }

  t.test('the legacy unnamespaced routes serve namespace default unchanged', async (t) => {
    const ns = expected.get('default')!;
    t.ok(ns.flags.size > 0 && ns.segments.size > 0, 'the fixture has flags and segments in default');
    const base = `${api}/namespaces/default`;
    for (const path of ['/flags', '/segments']) {
      const [legacy, namespaced] = await Promise.all([get(`${api}${path}`), get(`${base}${path}`)]);
      t.equal(legacy.status, 200);
      t.same(legacy.body, namespaced.body, `${path}`);
    }
    for (const key of ns.flags.keys()) {
      for (const path of [`/flags/${key}`, `/flags/${key}/rules`]) {
        const [legacy, namespaced] = await Promise.all([get(`${api}${path}`), get(`${base}${path}`)]);
        t.equal(legacy.status, 200);
        t.same(legacy.body, namespaced.body, path);
      }
      const rules = (await get(`${base}/flags/${key}/rules`)).body.rules;
      for (const rule of rules) t.same((await get(`${api}/flags/${key}/rules/${rule.id}`)).body, rule);
    }
    for (const key of ns.segments.keys()) t.same((await get(`${api}/segments/${key}`)).body, (await get(`${base}/segments/${key}`)).body);
  });

  t.test('the fixture sets every field the format allows, in every form', async (t) => {
    for (const [kind, fields] of schemaFields()) {
      for (const field of fields) t.ok(coverage.has(kind, field), `${kind} field \`${field}\` is set somewhere in the fixture`);
    }
    const wanted = [
      'version 1.0', 'version 1.1', 'version 1.2', 'version 1.3', 'version 1.4',
      'namespace key', 'namespace object', 'namespace absent',
      'attachment string', 'attachment int', 'attachment float', 'attachment boolean', 'attachment null',
      'attachment array', 'attachment object', 'attachment absent', 'attachment explicit null',
      'metadata string', 'metadata int', 'metadata float', 'metadata boolean',
      'default variant',
      'rule segment key', 'rule segment keys AND_SEGMENT_OPERATOR', 'rule segment keys OR_SEGMENT_OPERATOR', 'rule segment keys no operator',
      'rollout segment key', 'rollout segment keys AND_SEGMENT_OPERATOR', 'rollout segment keys OR_SEGMENT_OPERATOR',
      'rollout segment keys no operator', 'rollout threshold int', 'rollout threshold float', 'rollout empty',
      ...Object.entries(OPERATORS).flatMap(([type, ops]) => ops.map((op) => `${type} ${op}`)),
    ];
    for (const shape of wanted) t.ok(shapes.has(shape), `the fixture has: ${shape}`);
  });
});
