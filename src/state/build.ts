/**
 * Builds the immutable Snapshot (model/snapshot.ts) from documents that passed every check. Each object
 * is frozen as it is created; maps are FrozenMaps in ascending key order (keys are ASCII by the
 * key pattern, so `<` is byte order). `Flag.compiled` comes from evaluation's compileFlag and is
 * owned by it: it is attached as returned, not frozen here (it may hold typed arrays, which
 * Object.freeze refuses).
 *
 * `Flag.compiled` is computed here, once per snapshot build, for every flag: evaluation never
 * compiles on the request path. (Its generated matcher, evaluation/codegen.ts, is added after the
 * build, in the background, by the store: store/matcher-warmup.ts.)
 */
import { compileFlag } from '../evaluation/compile.js';
import type { CompiledFlag } from '../model/compiled.js';
import { AttachmentError, serializeAttachment } from './attachment.js';
import type { DocConstraint, DocFlag, DocRollout, DocRule, DocSegment } from './document.js';
import type { FindingsByFile } from './finding.js';
import { addFinding } from './finding.js';
import { FrozenMap } from '../model/freeze.js';
import { FlagIds, SegmentIds } from './ids.js';
import type { ContentTable } from './intern.js';
import { textKey } from './intern.js';
import type { Constraint, Distribution, Flag, Namespace, Rollout, Rule, Segment, Snapshot, Variant } from '../model/snapshot.js';
import type { SegmentOperator } from '../model/enums.js';
import type { Problem } from '../model/problem.js';
import type { Declared, NamespaceIndex } from './semantic.js';

export interface BuildOptions {
  readonly reference: string;
  readonly revision: string;
  readonly builtAt: string;
  readonly warnings: readonly Problem[];
  /** Reuse of built segments and flags across builds that share parsed documents (see BuildCache). */
  readonly cache?: BuildCache;
}

/**
 * Built objects keyed by the identity of the parsed document object they were built from. Parsed
 * documents are shared between references and reloads through the parse cache (by content id),
 * so a file common to two references yields the same Segment and Flag objects in both. Values are
 * owned by build.ts (tagged entries); the store only holds the map (a WeakMap, so entries go
 * when the parsed documents do).
 */
export interface BuildCache {
  get(doc: object): unknown;
  set(doc: object, built: unknown): void;
  /**
   * Sharing by equal content (intern.ts): when a file is parsed in a new version, its flags and
   * segments equal to ones already held are replaced by those, and built namespaces made of the
   * same Flag and Segment objects are shared. Absent: reuse by parsed-object identity only.
   */
  readonly contents?: ContentTable;
}

export type BuildResult = { readonly snapshot: Snapshot } | { readonly findings: FindingsByFile };

const EMPTY: readonly never[] = Object.freeze([]);

const byKey = <T>(m: Map<string, T>) => [...m.keys()].sort();

export function buildSnapshot(index: Map<string, NamespaceIndex>, opts: BuildOptions): BuildResult {
  const findings: FindingsByFile = new Map();
  const namespaces = new Map<string, Namespace>();
  for (const nsKey of byKey(index)) {
    const ns = index.get(nsKey)!;
    const segmentMap = new Map<string, Segment>();
    for (const k of byKey(ns.segments)) segmentMap.set(k, segmentOf(nsKey, ns.segments.get(k)!.data, opts.cache));
    const segments = FrozenMap.seal(segmentMap);
    const flags = new Map<string, Flag>();
    for (const flagKey of byKey(ns.flags)) flags.set(flagKey, flagOf(nsKey, ns.flags.get(flagKey)!, segments, findings, opts.cache));
    const contents = opts.cache?.contents;
    const held = contents !== undefined && findings.size === 0 ? heldNamespace(nsKey, ns, flags, segments, contents) : NOT_HELD;
    if (held.namespace !== undefined) {
      namespaces.set(nsKey, held.namespace);
      continue;
    }
    const rulesById = new Map<string, Rule>();
    const rolloutsById = new Map<string, Rollout>();
    for (const flag of flags.values()) {
      for (const r of flag.rules) rulesById.set(r.id, r);
      for (const r of flag.rollouts) rolloutsById.set(r.id, r);
    }
    const namespace: Namespace = Object.freeze({
      key: nsKey,
      name: ns.name,
      description: ns.description,
      flags: FrozenMap.seal(flags),
      segments,
      rulesById: FrozenMap.seal(rulesById),
      rolloutsById: FrozenMap.seal(rolloutsById),
    });
    if (held.key !== undefined) contents!.remember(held.key, namespace);
    namespaces.set(nsKey, namespace);
  }
  if (findings.size > 0) return { findings };
  const snapshot: Snapshot = Object.freeze({
    reference: opts.reference,
    revision: opts.revision,
    builtAt: opts.builtAt,
    namespaces: FrozenMap.seal(namespaces),
    warnings: Object.freeze([...opts.warnings]),
  });
  return { snapshot };
}

const NOT_HELD: { readonly key?: string; readonly namespace?: Namespace } = Object.freeze({});

/**
 * Serial numbers of built flags and segments, so that a namespace can be keyed by which objects
 * it holds (only with a content table; reused objects keep their number).
 */
const serials = new WeakMap<object, number>();
let nextSerial = 1;
function serialOf(o: object): number {
  let n = serials.get(o);
  if (n === undefined) {
    n = nextSerial++;
    serials.set(o, n);
  }
  return n;
}

/**
 * A namespace already built from the same Flag and Segment objects (and the same name and
 * description), or the key under which to remember the one about to be built. Two references
 * whose files differ only in another namespace then share the whole namespace, maps included.
 */
function heldNamespace(
  nsKey: string,
  ns: NamespaceIndex,
  flags: ReadonlyMap<string, Flag>,
  segments: ReadonlyMap<string, Segment>,
  contents: ContentTable,
): { readonly key?: string; readonly namespace?: Namespace } {
  let text = `${nsKey}\0${ns.name}\0${ns.description}\0`;
  for (const f of flags.values()) text += `${serialOf(f)},`;
  text += ';';
  for (const sg of segments.values()) text += `${serialOf(sg)},`;
  const key = textKey('n', text);
  const held = contents.lookup(key) as Namespace | undefined;
  if (held !== undefined && held.key === nsKey && held.name === ns.name && held.description === ns.description && sameEntries(held.flags, flags) && sameEntries(held.segments, segments)) {
    return { namespace: held };
  }
  return held === undefined ? { key } : NOT_HELD;
}

function sameEntries<V>(a: ReadonlyMap<string, V>, b: ReadonlyMap<string, V>): boolean {
  if (a.size !== b.size) return false;
  const ia = a.entries();
  for (const [k, v] of b) {
    const e = ia.next().value as [string, V];
    if (e[0] !== k || e[1] !== v) return false;
  }
  return true;
}

const SEGMENT_TAG = 'vexil.built.segment.v1';
const FLAG_TAG = 'vexil.built.flag.v1';
/** A Segment depends on its document and namespace only. */
interface SegmentEntry {
  readonly tag: typeof SEGMENT_TAG;
  readonly byNamespace: Map<string, Segment>;
}
/**
 * A Flag depends on its document, its namespace and the Segment objects it references (their
 * constraints are compiled into it); ids derive from namespace, flag key and position, and
 * timestamps live on the Snapshot, so nothing else shapes it. A few variants per document are
 * kept (the same flag file beside different segment files), the oldest dropped first.
 */
interface FlagEntry {
  readonly tag: typeof FLAG_TAG;
  readonly built: { readonly ns: string; readonly segments: readonly (Segment | undefined)[]; readonly flag: Flag }[];
}
const MAX_FLAG_VARIANTS = 4;

function segmentOf(ns: string, s: DocSegment, cache: BuildCache | undefined): Segment {
  if (cache === undefined || typeof s !== 'object' || s === null) return buildSegment(ns, s);
  let entry = cache.get(s) as SegmentEntry | undefined;
  if (entry === undefined || entry.tag !== SEGMENT_TAG) {
    entry = { tag: SEGMENT_TAG, byNamespace: new Map() };
    cache.set(s, entry);
  }
  let segment = entry.byNamespace.get(ns);
  if (segment === undefined) {
    segment = buildSegment(ns, s);
    entry.byNamespace.set(ns, segment);
  }
  return segment;
}

/** Every segment key the flag's rules and rollouts name (a superset of what compileFlag looks up). */
function referencedSegments(f: DocFlag, segments: ReadonlyMap<string, Segment>): (Segment | undefined)[] {
  const out: (Segment | undefined)[] = [];
  if (f.rules) {
    for (const r of f.rules) {
      if (typeof r.segment === 'string') out.push(segments.get(r.segment));
      else if (r.segment) for (const k of r.segment.keys ?? EMPTY) out.push(segments.get(k));
    }
  }
  if (f.rollouts) {
    for (const r of f.rollouts) {
      if (!r.segment) continue;
      if (r.segment.key !== undefined) out.push(segments.get(r.segment.key));
      if (r.segment.keys) for (const k of r.segment.keys) out.push(segments.get(k));
    }
  }
  return out;
}

function sameSegments(a: readonly (Segment | undefined)[], b: readonly (Segment | undefined)[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function flagOf(
  ns: string,
  declared: Declared<DocFlag>,
  segments: ReadonlyMap<string, Segment>,
  findings: FindingsByFile,
  cache: BuildCache | undefined,
): Flag {
  const f = declared.data;
  if (cache === undefined || typeof f !== 'object' || f === null) return buildFlag(ns, declared, segments, findings);
  const refs = referencedSegments(f, segments);
  let entry = cache.get(f) as FlagEntry | undefined;
  if (entry !== undefined && entry.tag === FLAG_TAG) {
    for (const b of entry.built) if (b.ns === ns && sameSegments(b.segments, refs)) return b.flag;
  }
  const before = findings.get(declared.doc.file)?.length ?? 0;
  const flag = buildFlag(ns, declared, segments, findings);
  // A flag that produced findings is never cached: the findings carry this build's file and path.
  if ((findings.get(declared.doc.file)?.length ?? 0) !== before) return flag;
  if (entry === undefined || entry.tag !== FLAG_TAG) {
    entry = { tag: FLAG_TAG, built: [] };
    cache.set(f, entry);
  }
  if (entry.built.length >= MAX_FLAG_VARIANTS) entry.built.shift();
  entry.built.push({ ns, segments: refs, flag });
  return flag;
}

function buildSegment(ns: string, s: DocSegment): Segment {
  let constraints: readonly Constraint[] = EMPTY;
  if (s.constraints && s.constraints.length > 0) {
    const ids = new SegmentIds(ns, s.key);
    constraints = Object.freeze(s.constraints.map((c, i) => buildConstraint(ns, s.key, c, ids.constraint(i))));
  }
  return Object.freeze({
    namespaceKey: ns,
    key: s.key,
    name: s.name,
    description: s.description ?? '',
    matchType: s.match_type,
    constraints,
  });
}

function buildConstraint(ns: string, segmentKey: string, c: DocConstraint, id: string): Constraint {
  return Object.freeze({
    id,
    namespaceKey: ns,
    segmentKey,
    type: c.type,
    property: c.property,
    operator: c.operator,
    value: c.value ?? '',
    description: c.description ?? '',
  });
}

// Plain loops and no per-flag helper maps: this runs for every flag of the state.
function buildFlag(ns: string, declared: Declared<DocFlag>, segments: ReadonlyMap<string, Segment>, findings: FindingsByFile): Flag {
  const f = declared.data;
  const ids = new FlagIds(ns, f.key);
  let defaultVariant: Variant | undefined;
  const docVariants = f.variants ?? EMPTY;
  // Arrays at their final length (map, or new Array(n)): `[]` grown by push reserves 17 slots.
  const variants = new Array<Variant>(docVariants.length);
  for (let j = 0; j < docVariants.length; j++) {
    const v = docVariants[j];
    let attachment = 'null';
    if (v.attachment !== undefined && v.attachment !== null) {
      try {
        attachment = serializeAttachment(v.attachment);
      } catch (err) {
        if (!(err instanceof AttachmentError)) throw err;
        addFinding(findings, declared.doc.file, {
          severity: 'error',
          rule: 'variant.attachment.invalid',
          message: `the attachment of variant \`${v.key}\` of flag \`${f.key}\` cannot be encoded as JSON: ${err.message}`,
          hint: 'use plain JSON values (no .nan/.inf, no extreme nesting)',
          doc: declared.doc.index,
          path: ['flags', declared.index, 'variants', j, 'attachment'],
        });
      }
    }
    const variant: Variant = Object.freeze({
      id: ids.variant(v.key),
      namespaceKey: ns,
      key: v.key,
      name: v.name ?? '',
      description: v.description ?? '',
      attachment,
      default: v.default === true,
    });
    if (variant.default) defaultVariant = variant;
    variants[j] = variant;
  }
  let rules: readonly Rule[] = EMPTY;
  const docRules = f.rules;
  if (docRules) {
    const out = new Array<Rule>(docRules.length);
    for (let i = 0; i < docRules.length; i++) out[i] = buildRule(ns, f.key, docRules[i], i + 1, variants, ids);
    rules = Object.freeze(out);
  }
  let rollouts: readonly Rollout[] = EMPTY;
  const docRollouts = f.rollouts;
  if (docRollouts) {
    const out = new Array<Rollout>(docRollouts.length);
    for (let i = 0; i < docRollouts.length; i++) out[i] = buildRollout(ns, f.key, docRollouts[i], i + 1, ids);
    rollouts = Object.freeze(out);
  }
  const flag = flagObject(ns, f, f.variants ? Object.freeze(variants) : EMPTY, rules, rollouts, defaultVariant);
  flag.compiled = compileFlag(flag, segments);
  return Object.freeze(flag);
}

type Building = { -readonly [K in keyof Flag]: Flag[K] };

/**
 * The flag with `compiled` still to fill in. One literal per combination of the optional fields
 * (they exist only when declared: the API omits them otherwise), so that every flag gets all its
 * fields in the object itself rather than in an extra property array, and flags of the same
 * combination share one hidden class. The document's metadata object is frozen and kept as is
 * (it holds only scalars, by the schema).
 */
function flagObject(
  ns: string,
  f: DocFlag,
  variants: readonly Variant[],
  rules: readonly Rule[],
  rollouts: readonly Rollout[],
  defaultVariant: Variant | undefined,
): Building {
  const description = f.description ?? '';
  const enabled = f.enabled === true;
  const type = f.type ?? 'VARIANT_FLAG_TYPE';
  const compiled = null as unknown as CompiledFlag;
  const metadata = f.metadata === undefined ? undefined : Object.freeze(f.metadata);
  if (metadata !== undefined) {
    return defaultVariant
      ? { namespaceKey: ns, key: f.key, name: f.name, description, enabled, type, variants, rules, rollouts, metadata, defaultVariant, compiled }
      : { namespaceKey: ns, key: f.key, name: f.name, description, enabled, type, variants, rules, rollouts, metadata, compiled };
  }
  return defaultVariant
    ? { namespaceKey: ns, key: f.key, name: f.name, description, enabled, type, variants, rules, rollouts, defaultVariant, compiled }
    : { namespaceKey: ns, key: f.key, name: f.name, description, enabled, type, variants, rules, rollouts, compiled };
}

function variantIdOf(variants: readonly Variant[], key: string): string {
  for (const v of variants) if (v.key === key) return v.id;
  return '';
}

function segmentOperator(op: SegmentOperator | undefined): SegmentOperator {
  return op ?? 'OR_SEGMENT_OPERATOR';
}

function buildRule(ns: string, flagKey: string, r: DocRule, rank: number, variants: readonly Variant[], ids: FlagIds): Rule {
  const id = ids.rule(rank);
  let distributions: readonly Distribution[] = EMPTY;
  const docDistributions = r.distributions;
  if (docDistributions) {
    const out = new Array<Distribution>(docDistributions.length);
    for (let i = 0; i < docDistributions.length; i++) {
      const d = docDistributions[i];
      out[i] = Object.freeze({
        id: ids.distribution(rank, i),
        ruleId: id,
        variantId: variantIdOf(variants, d.variant),
        variantKey: d.variant,
        rollout: d.rollout,
      });
    }
    distributions = Object.freeze(out);
  }
  const object = typeof r.segment === 'string' ? undefined : r.segment;
  return Object.freeze({
    id,
    namespaceKey: ns,
    flagKey,
    segmentKey: object ? '' : (r.segment as string),
    // The document's own list, frozen (parsed documents are never written to once loaded).
    segmentKeys: object ? Object.freeze(object.keys) : EMPTY,
    segmentOperator: segmentOperator(object?.operator),
    distributions,
    rank,
  });
}

function buildRollout(ns: string, flagKey: string, r: DocRollout, rank: number, ids: FlagIds): Rollout {
  const id = ids.rollout(rank);
  // Served as written. (Flipt's declarative loader drops it and serves "": a defect we do not copy.)
  const description = r.description ?? '';
  // Literal objects of fixed shape (no spread): this runs for every rollout of a large state.
  if (r.segment) {
    const one = r.segment.key;
    const keys = r.segment.keys ?? EMPTY;
    const segment = Object.freeze({
      segmentKey: one !== undefined ? one : keys.length === 1 ? keys[0] : '',
      segmentKeys: one === undefined && keys.length >= 2 ? Object.freeze(keys) : EMPTY,
      segmentOperator: segmentOperator(r.segment.operator),
      value: r.segment.value === true,
    });
    return Object.freeze({ id, namespaceKey: ns, flagKey, type: 'SEGMENT_ROLLOUT_TYPE', rank, description, segment });
  }
  if (r.threshold) {
    const threshold = Object.freeze({ percentage: r.threshold.percentage, value: r.threshold.value === true });
    return Object.freeze({ id, namespaceKey: ns, flagKey, type: 'THRESHOLD_ROLLOUT_TYPE', rank, description, threshold });
  }
  return Object.freeze({ id, namespaceKey: ns, flagKey, type: 'UNKNOWN_ROLLOUT_TYPE', rank, description });
}

