/**
 * The semantic diff of two snapshots: per namespace, the flags and segments added, removed and
 * changed, each change a typed item (types.ts), never text lines. Pure: no I/O, inputs untouched.
 *
 * Rule, rollout and constraint ids are positional, so they are paired by content and position
 * (match.ts); a rule that kept its content but changed place among the kept rules is `moved`.
 * Variants and distributions are paired by variant key, metadata by key.
 *
 * `diffSteps` is the computation in steps (steps.ts): it yields after every DIFF_STEP keys of flags
 * or segments looked at, so the server can answer other requests between them; `diff` runs it at once.
 */
import type { Constraint, Flag, Namespace, Rollout, Rule, Segment, Snapshot } from '../model/snapshot.js';
import { movedPairs, pairItems } from './match.js';
import { drain, type Steps } from './steps.js';
import type { Change, DiffOptions, DiffSummary, FlagDiff, JsonValue, NamespaceDiff, SegmentDiff, SnapshotDiff } from './types.js';

/** Flags (or segments) looked at between two yields of diffSteps: well under a millisecond of work. */
export const DIFF_STEP = 32;

export function diff(base: Snapshot, head: Snapshot, opts: DiffOptions = {}): SnapshotDiff {
  return drain(diffSteps(base, head, opts));
}

export function* diffSteps(base: Snapshot, head: Snapshot, opts: DiffOptions = {}): Steps<SnapshotDiff> {
  const keys = new Set([...base.namespaces.keys(), ...head.namespaces.keys()]);
  const namespaces: NamespaceDiff[] = [];
  for (const key of [...keys].sort(byteOrder)) {
    if (opts.namespace !== undefined && key !== opts.namespace) continue;
    const d = yield* diffNamespace(key, base.namespaces.get(key), head.namespaces.get(key));
    if (d !== undefined) namespaces.push(d);
  }
  return {
    base: { reference: base.reference, revision: base.revision },
    head: { reference: head.reference, revision: head.revision },
    changed: namespaces.length > 0,
    summary: summarize(namespaces),
    namespaces,
  };
}

export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function summarize(namespaces: readonly NamespaceDiff[]): DiffSummary {
  const count = <T extends { status: string }>(items: readonly T[], status: string) => items.filter((i) => i.status === status).length;
  const flags = namespaces.flatMap((n) => n.flags);
  const segments = namespaces.flatMap((n) => n.segments);
  return {
    namespacesAdded: count(namespaces, 'added'),
    namespacesRemoved: count(namespaces, 'removed'),
    namespacesChanged: count(namespaces, 'changed'),
    flagsAdded: count(flags, 'added'),
    flagsRemoved: count(flags, 'removed'),
    flagsChanged: count(flags, 'changed'),
    segmentsAdded: count(segments, 'added'),
    segmentsRemoved: count(segments, 'removed'),
    segmentsChanged: count(segments, 'changed'),
  };
}

const EMPTY_NAMESPACE: Pick<Namespace, 'flags' | 'segments'> = { flags: new Map(), segments: new Map() };

function* diffNamespace(key: string, base: Namespace | undefined, head: Namespace | undefined): Steps<NamespaceDiff | undefined> {
  const changes: Change[] = [];
  if (base !== undefined && head !== undefined) {
    valueChange(changes, 'namespace.name', base.name, head.name);
    valueChange(changes, 'namespace.description', base.description, head.description);
  }
  const b = base ?? EMPTY_NAMESPACE;
  const h = head ?? EMPTY_NAMESPACE;
  const flags = yield* diffKeyed(b.flags, h.flags, (key, x, y): FlagDiff | undefined => {
    if (x === undefined) return { key, status: 'added', type: y!.type, changes: [] };
    if (y === undefined) return { key, status: 'removed', type: x.type, changes: [] };
    if (sameFlag(x, y)) return undefined;
    const c = flagChanges(x, y);
    return c.length > 0 ? { key, status: 'changed', type: y.type, changes: c } : undefined;
  });
  const segments = yield* diffKeyed(b.segments, h.segments, (key, x, y): SegmentDiff | undefined => {
    if (x === undefined) return { key, status: 'added', changes: [] };
    if (y === undefined) return { key, status: 'removed', changes: [] };
    if (sameSegment(x, y)) return undefined;
    const c = segmentChanges(x, y);
    return c.length > 0 ? { key, status: 'changed', changes: c } : undefined;
  });
  if (base !== undefined && head !== undefined && changes.length === 0 && flags.length === 0 && segments.length === 0) return undefined;
  const status = base === undefined ? 'added' : head === undefined ? 'removed' : 'changed';
  return { key, status, changes, flags, segments };
}

function* diffKeyed<V, D>(base: ReadonlyMap<string, V>, head: ReadonlyMap<string, V>, one: (key: string, b: V | undefined, h: V | undefined) => D | undefined): Steps<D[]> {
  const out: D[] = [];
  const keys = new Set([...base.keys(), ...head.keys()]);
  const sorted = [...keys].sort(byteOrder);
  yield;
  for (let i = 0; i < sorted.length; i++) {
    if (i > 0 && i % DIFF_STEP === 0) yield;
    const key = sorted[i]!;
    const b = base.get(key);
    const h = head.get(key);
    if (b === h) continue; // the same built object (shared across loads): nothing to compare
    const d = one(key, b, h);
    if (d !== undefined) out.push(d);
  }
  return out;
}

function valueChange(out: Change[], kind: Change['kind'], from: JsonValue, to: JsonValue, extra: Partial<Change> = {}): void {
  if (!sameJson(from, to)) out.push({ kind, action: 'changed', ...extra, from, to });
}

// ----- flags ---------------------------------------------------------------------------------------

function flagChanges(b: Flag, h: Flag): Change[] {
  const out: Change[] = [];
  valueChange(out, 'flag.type', b.type, h.type);
  valueChange(out, 'flag.enabled', b.enabled, h.enabled);
  valueChange(out, 'flag.name', b.name, h.name);
  valueChange(out, 'flag.description', b.description, h.description);
  metadataChanges(out, b.metadata ?? {}, h.metadata ?? {});
  variantChanges(out, b, h);
  valueChange(out, 'flag.defaultVariant', b.defaultVariant?.key ?? null, h.defaultVariant?.key ?? null);
  ruleChanges(out, b.rules, h.rules);
  rolloutChanges(out, b.rollouts, h.rollouts);
  return out;
}

function metadataChanges(out: Change[], b: Readonly<Record<string, JsonValue>>, h: Readonly<Record<string, JsonValue>>): void {
  const keys = new Set([...Object.keys(b), ...Object.keys(h)]);
  for (const key of [...keys].sort(byteOrder)) {
    const inB = Object.hasOwn(b, key);
    const inH = Object.hasOwn(h, key);
    if (!inB) out.push({ kind: 'flag.metadata', action: 'added', key, to: h[key]! });
    else if (!inH) out.push({ kind: 'flag.metadata', action: 'removed', key, from: b[key]! });
    else valueChange(out, 'flag.metadata', b[key]!, h[key]!, { key });
  }
}

function variantChanges(out: Change[], b: Flag, h: Flag): void {
  const bv = new Map(b.variants.map((v) => [v.key, v]));
  const hv = new Map(h.variants.map((v) => [v.key, v]));
  const keys = new Set([...bv.keys(), ...hv.keys()]);
  for (const key of [...keys].sort(byteOrder)) {
    const x = bv.get(key);
    const y = hv.get(key);
    if (x === undefined) out.push({ kind: 'variant', action: 'added', variant: key, to: variantJson(y!) });
    else if (y === undefined) out.push({ kind: 'variant', action: 'removed', variant: key, from: variantJson(x) });
    else {
      valueChange(out, 'variant.name', x.name, y.name, { variant: key });
      valueChange(out, 'variant.description', x.description, y.description, { variant: key });
      valueChange(out, 'variant.attachment', parseAttachment(x.attachment), parseAttachment(y.attachment), { variant: key });
    }
  }
}

function variantJson(v: Flag['variants'][number]): JsonValue {
  return { key: v.key, name: v.name, description: v.description, attachment: parseAttachment(v.attachment) };
}

function parseAttachment(text: string): JsonValue {
  if (text === '') return null;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

// ----- rules ---------------------------------------------------------------------------------------

function ruleSegments(r: Rule): string[] {
  return r.segmentKey !== '' ? [r.segmentKey] : [...r.segmentKeys];
}

/** What decides a rule's identity when its distributions change: its segments and operator. */
function ruleIdentity(r: Rule): string {
  return JSON.stringify([ruleSegments(r), ruleSegments(r).length > 1 ? r.segmentOperator : '']);
}

function ruleContent(r: Rule): string {
  return JSON.stringify([ruleIdentity(r), r.distributions.map((d) => [d.variantKey, d.rollout])]);
}

function ruleJson(r: Rule): JsonValue {
  return {
    segments: ruleSegments(r),
    operator: r.segmentOperator,
    distributions: r.distributions.map((d) => ({ variant: d.variantKey, rollout: d.rollout })),
  };
}

function ruleChanges(out: Change[], base: readonly Rule[], head: readonly Rule[]): void {
  const p = pairItems(base, head, [ruleContent, ruleIdentity]);
  const moved = movedPairs(p.pairs);
  for (const b of p.removed) out.push({ kind: 'rule', action: 'removed', rule: { from: b + 1 }, from: ruleJson(base[b]!) });
  for (const h of p.added) out.push({ kind: 'rule', action: 'added', rule: { to: h + 1 }, to: ruleJson(head[h]!) });
  for (const [b, h] of p.pairs) {
    const x = base[b]!;
    const y = head[h]!;
    const rule = { from: b + 1, to: h + 1 };
    if (moved.has(b)) out.push({ kind: 'rule', action: 'moved', rule });
    valueChange(out, 'rule.segments', ruleSegments(x), ruleSegments(y), { rule });
    if (ruleSegments(x).length > 1 || ruleSegments(y).length > 1) valueChange(out, 'rule.operator', x.segmentOperator, y.segmentOperator, { rule });
    const bd = new Map(x.distributions.map((d) => [d.variantKey, d.rollout]));
    const hd = new Map(y.distributions.map((d) => [d.variantKey, d.rollout]));
    for (const variant of [...new Set([...bd.keys(), ...hd.keys()])].sort(byteOrder)) {
      const from = bd.get(variant);
      const to = hd.get(variant);
      if (from === undefined) out.push({ kind: 'distribution', action: 'added', rule, variant, to: to! });
      else if (to === undefined) out.push({ kind: 'distribution', action: 'removed', rule, variant, from });
      else valueChange(out, 'distribution', from, to, { rule, variant });
    }
  }
}

// ----- rollouts ------------------------------------------------------------------------------------

function rolloutSegments(r: Rollout): string[] {
  if (r.segment === undefined) return [];
  return r.segment.segmentKey !== '' ? [r.segment.segmentKey] : [...r.segment.segmentKeys];
}

function rolloutIdentity(r: Rollout): string {
  if (r.threshold !== undefined) return JSON.stringify(['threshold', r.threshold.value]);
  const segs = rolloutSegments(r);
  return JSON.stringify(['segment', segs, segs.length > 1 ? r.segment!.segmentOperator : '']);
}

function rolloutContent(r: Rollout): string {
  return JSON.stringify([r.type, rolloutIdentity(r), r.threshold?.percentage ?? null, r.segment?.value ?? null, r.description]);
}

function rolloutJson(r: Rollout): JsonValue {
  const out: Record<string, JsonValue> = { type: r.type, description: r.description };
  if (r.threshold !== undefined) out.threshold = { percentage: r.threshold.percentage, value: r.threshold.value };
  if (r.segment !== undefined) out.segment = { segments: rolloutSegments(r), operator: r.segment.segmentOperator, value: r.segment.value };
  return out;
}

function rolloutChanges(out: Change[], base: readonly Rollout[], head: readonly Rollout[]): void {
  // Identity by kind only as the last key pass: a threshold that moved 50 → 60 is the same rollout.
  const p = pairItems(base, head, [rolloutContent, rolloutIdentity]);
  const moved = movedPairs(p.pairs);
  for (const b of p.removed) out.push({ kind: 'rollout', action: 'removed', rollout: { from: b + 1 }, from: rolloutJson(base[b]!) });
  for (const h of p.added) out.push({ kind: 'rollout', action: 'added', rollout: { to: h + 1 }, to: rolloutJson(head[h]!) });
  for (const [b, h] of p.pairs) {
    const x = base[b]!;
    const y = head[h]!;
    const rollout = { from: b + 1, to: h + 1 };
    if (moved.has(b)) out.push({ kind: 'rollout', action: 'moved', rollout });
    if (x.type !== y.type) {
      // A segment rollout became a threshold one (or back): one change with both whole.
      out.push({ kind: 'rollout.type', action: 'changed', rollout, from: rolloutJson(x), to: rolloutJson(y) });
      continue;
    }
    if (x.threshold !== undefined && y.threshold !== undefined) {
      valueChange(out, 'rollout.threshold', x.threshold.percentage, y.threshold.percentage, { rollout });
      valueChange(out, 'rollout.value', x.threshold.value, y.threshold.value, { rollout });
    }
    if (x.segment !== undefined && y.segment !== undefined) {
      valueChange(out, 'rollout.segments', rolloutSegments(x), rolloutSegments(y), { rollout });
      if (rolloutSegments(x).length > 1 || rolloutSegments(y).length > 1) valueChange(out, 'rollout.operator', x.segment.segmentOperator, y.segment.segmentOperator, { rollout });
      valueChange(out, 'rollout.value', x.segment.value, y.segment.value, { rollout });
    }
    valueChange(out, 'rollout.description', x.description, y.description, { rollout });
  }
}

// ----- segments ------------------------------------------------------------------------------------

function segmentChanges(b: Segment, h: Segment): Change[] {
  const out: Change[] = [];
  valueChange(out, 'segment.name', b.name, h.name);
  valueChange(out, 'segment.description', b.description, h.description);
  valueChange(out, 'segment.matchType', b.matchType, h.matchType);
  // Constraint order does not change a match (all or any): only additions, removals and changes.
  const p = pairItems(b.constraints, h.constraints, [constraintContent, constraintIdentity]);
  for (const i of p.removed) out.push({ kind: 'constraint', action: 'removed', constraint: { from: i + 1 }, from: constraintJson(b.constraints[i]!) });
  for (const i of p.added) out.push({ kind: 'constraint', action: 'added', constraint: { to: i + 1 }, to: constraintJson(h.constraints[i]!) });
  for (const [i, j] of p.pairs) {
    const x = constraintJson(b.constraints[i]!);
    const y = constraintJson(h.constraints[j]!);
    if (!sameJson(x, y)) out.push({ kind: 'constraint', action: 'changed', constraint: { from: i + 1, to: j + 1 }, from: x, to: y });
  }
  return out;
}

function constraintJson(c: Constraint): JsonValue {
  return { type: c.type, property: c.property, operator: c.operator, value: c.value, description: c.description };
}

function constraintContent(c: Constraint): string {
  return JSON.stringify([c.type, c.property, c.operator, c.value, c.description]);
}

function constraintIdentity(c: Constraint): string {
  return JSON.stringify([c.type, c.property]);
}

// ----- equality fast path --------------------------------------------------------------------------
// Most flags of two references are equal: compared field by field, without building the change
// items (or the content keys the pairing needs), which keeps a 10k-flag diff cheap.

function sameList<T>(a: readonly T[], b: readonly T[], same: (x: T, y: T) => boolean): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (!same(a[i]!, b[i]!)) return false;
  return true;
}

const sameString = (a: string, b: string) => a === b;

function sameFlag(x: Flag, y: Flag): boolean {
  if (x.type !== y.type || x.enabled !== y.enabled || x.name !== y.name || x.description !== y.description) return false;
  if ((x.defaultVariant?.key ?? null) !== (y.defaultVariant?.key ?? null)) return false;
  const xm = x.metadata ?? {};
  const ym = y.metadata ?? {};
  const xk = Object.keys(xm);
  if (xk.length !== Object.keys(ym).length || !xk.every((k) => Object.hasOwn(ym, k) && xm[k] === ym[k])) return false;
  return (
    sameList(x.variants, y.variants, (a, b) => a.key === b.key && a.name === b.name && a.description === b.description && a.attachment === b.attachment) &&
    sameList(x.rules, y.rules, sameRule) &&
    sameList(x.rollouts, y.rollouts, sameRollout)
  );
}

function sameRule(a: Rule, b: Rule): boolean {
  return (
    a.segmentKey === b.segmentKey &&
    a.segmentOperator === b.segmentOperator &&
    sameList(a.segmentKeys, b.segmentKeys, sameString) &&
    sameList(a.distributions, b.distributions, (p, q) => p.variantKey === q.variantKey && p.rollout === q.rollout)
  );
}

function sameRollout(a: Rollout, b: Rollout): boolean {
  if (a.type !== b.type || a.description !== b.description) return false;
  if (a.threshold?.percentage !== b.threshold?.percentage || a.threshold?.value !== b.threshold?.value) return false;
  const s = a.segment;
  const t = b.segment;
  if (s === undefined || t === undefined) return s === t;
  return s.segmentKey === t.segmentKey && s.segmentOperator === t.segmentOperator && s.value === t.value && sameList(s.segmentKeys, t.segmentKeys, sameString);
}

function sameSegment(x: Segment, y: Segment): boolean {
  return (
    x.name === y.name &&
    x.description === y.description &&
    x.matchType === y.matchType &&
    sameList(x.constraints, y.constraints, (a, b) => a.type === b.type && a.property === b.property && a.operator === b.operator && a.value === b.value && a.description === b.description)
  );
}

// ----- values --------------------------------------------------------------------------------------

/** Structural equality of JSON values (object key order ignored). */
export function sameJson(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as readonly JsonValue[];
    return a.length === bb.length && a.every((x, i) => sameJson(x, bb[i]));
  }
  const ao = a as Record<string, JsonValue>;
  const bo = b as Record<string, JsonValue>;
  const ak = Object.keys(ao);
  if (ak.length !== Object.keys(bo).length) return false;
  return ak.every((k) => Object.hasOwn(bo, k) && sameJson(ao[k], bo[k]));
}
