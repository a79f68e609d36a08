/**
 * Converts a Flipt-format state (parsed documents) into one flagd flag-definition JSON with the same
 * flags and targeting, for the load benchmark's flagd-core `setConfigurations` figure.
 *
 * Segments are inlined into each flag's json-logic (flagd has no segments; its `$evaluators` are
 * expanded by string substitution at load, which with thousands of them would make flagd-core look
 * slower than its typical use; inlining is the conservative choice). Rules become `if` branches;
 * distributions and boolean thresholds become `fractional`; constraints map to json-logic and
 * flagd's own operators (`starts_with`, `ends_with`). Flag keys are unique across namespaces in the
 * generated states, so one flagd flag set holds them all.
 */

interface FliptConstraint {
  type: string;
  property: string;
  operator: string;
  value?: string;
}
interface FliptSegment {
  key: string;
  match_type: string;
  constraints?: FliptConstraint[];
}
type SegmentRef = string | { keys?: string[]; key?: string; operator?: string; value?: boolean };
interface FliptFlag {
  key: string;
  type?: string;
  enabled?: boolean;
  variants?: Array<{ key: string; default?: boolean; attachment?: unknown }>;
  rules?: Array<{ segment: SegmentRef; distributions?: Array<{ variant: string; rollout: number }> }>;
  rollouts?: Array<{ segment?: SegmentRef & object; threshold?: { percentage: number; value?: boolean } }>;
}
interface FliptDocument {
  namespace?: string | { key: string };
  flags?: FliptFlag[];
  segments?: FliptSegment[];
}

const nsOf = (d: FliptDocument) => (typeof d.namespace === 'string' ? d.namespace : (d.namespace?.key ?? 'default'));

function constraintLogic(c: FliptConstraint): unknown {
  const v = { var: c.type === 'ENTITY_ID_COMPARISON_TYPE' ? 'targetingKey' : c.property };
  const value = c.value ?? '';
  const num = c.type === 'NUMBER_COMPARISON_TYPE';
  const operand = num ? Number(value) : value;
  switch (c.operator) {
    case 'eq':
      return { '==': [v, operand] };
    case 'neq':
      return { '!=': [v, operand] };
    case 'lt':
      return { '<': [v, operand] };
    case 'lte':
      return { '<=': [v, operand] };
    case 'gt':
      return { '>': [v, operand] };
    case 'gte':
      return { '>=': [v, operand] };
    case 'prefix':
      return { starts_with: [v, value] };
    case 'suffix':
      return { ends_with: [v, value] };
    case 'contains':
      return { in: [value, v] };
    case 'notcontains':
      return { '!': { in: [value, v] } };
    case 'isoneof':
      return { in: [v, JSON.parse(value) as unknown[]] };
    case 'isnotoneof':
      return { '!': { in: [v, JSON.parse(value) as unknown[]] } };
    case 'true':
      return { '==': [v, 'true'] };
    case 'false':
      return { '==': [v, 'false'] };
    case 'empty':
    case 'notpresent':
      return { '!': v };
    default:
      return { '!!': v }; // notempty, present
  }
}

function segmentLogic(s: FliptSegment): unknown {
  const cs = (s.constraints ?? []).map(constraintLogic);
  if (cs.length === 0) return true;
  return { [s.match_type === 'ALL_MATCH_TYPE' ? 'and' : 'or']: cs };
}

function setLogic(ref: SegmentRef, segments: Map<string, unknown>): unknown {
  const keys = typeof ref === 'string' ? [ref] : ref.key ? [ref.key] : (ref.keys ?? []);
  const parts = keys.map((k) => {
    const logic = segments.get(k);
    if (logic === undefined) throw new Error(`flagd conversion: unknown segment ${k}`);
    return logic;
  });
  if (parts.length === 1) return parts[0];
  return { [typeof ref !== 'string' && ref.operator === 'AND_SEGMENT_OPERATOR' ? 'and' : 'or']: parts };
}

function flagdFlag(f: FliptFlag, segments: Map<string, unknown>): unknown {
  const branches: unknown[] = [];
  if (f.type === 'BOOLEAN_FLAG_TYPE') {
    for (const r of f.rollouts ?? []) {
      if (r.threshold) {
        const p = Math.max(0, Math.min(100, Math.round(r.threshold.percentage)));
        const hit = r.threshold.value ? 'on' : 'off';
        const miss = r.threshold.value ? 'off' : 'on';
        branches.push({ fractional: [[hit, p], [miss, 100 - p]] });
        break; // a threshold always decides in flagd's form; nothing after it is reachable
      }
      if (r.segment) {
        branches.push(setLogic(r.segment, segments), r.segment.value ? 'on' : 'off');
      }
    }
    if (branches.length % 2 === 0) branches.push(f.enabled ? 'on' : 'off');
    return { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: f.enabled ? 'on' : 'off', targeting: { if: branches } };
  }
  const variants = f.variants ?? [];
  for (const r of f.rules ?? []) {
    const ds = (r.distributions ?? []).filter((d) => d.rollout > 0);
    branches.push(
      setLogic(r.segment, segments),
      ds.length === 1 && ds[0].rollout === 100 ? ds[0].variant : { fractional: ds.map((d) => [d.variant, Math.round(d.rollout)]) },
    );
  }
  branches.push(null);
  const dflt = variants.find((v) => v.default)?.key ?? variants[0]?.key ?? 'off';
  return {
    state: f.enabled ? 'ENABLED' : 'DISABLED',
    // flagd wants one value type per flag: objects (the attachment, or {} without one).
    variants: Object.fromEntries(variants.map((v) => [v.key, v.attachment ?? {}])),
    defaultVariant: dflt,
    targeting: { if: branches },
  };
}

export function toFlagdJson(docs: readonly FliptDocument[]): string {
  const segmentsByNs = new Map<string, Map<string, unknown>>();
  for (const d of docs) {
    const ns = nsOf(d);
    let m = segmentsByNs.get(ns);
    if (!m) segmentsByNs.set(ns, (m = new Map()));
    for (const s of d.segments ?? []) m.set(s.key, segmentLogic(s));
  }
  const flags: Record<string, unknown> = {};
  for (const d of docs) {
    const segs = segmentsByNs.get(nsOf(d))!;
    for (const f of d.flags ?? []) flags[f.key] = flagdFlag(f, segs);
  }
  return JSON.stringify({ $schema: 'https://flagd.dev/schema/v0/flags.json', flags });
}
