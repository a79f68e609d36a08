/**
 * Writes a generated state (test/support/random-state.ts) as the JSON of Flipt v1's client
 * snapshot endpoint, `GET /internal/v1/evaluation/snapshot/namespace/{ns}`
 * (flipt-auth-and-clients.md §4a), which is what Flipt's WASM engine consumes.
 *
 * Built from the abstract state, never from vexil's snapshot, and with its own reading of the
 * declarative format (flipt-semantics.md §1.4, §1.5, §1.8): defaults for left-out keys, segment
 * inlining, variant attachments re-encoded the way Go's encoding/json does it, `"null"` for a
 * variant without attachment. Distribution rollouts are written raw, as Flipt v1 serves them;
 * adapting them to the engine's own bucketing is the oracle's business (test/oracle/flipt-engine.ts).
 *
 * Not copied from Flipt v1.61.1's endpoint on purpose: its quirk of repeating a rule with N > 1
 * segments N times (§4a) is left out; duplicate segment keys of one rule are written once, as Flipt
 * holds a rule's segments in a map keyed by segment key.
 */
import type { SnapshotDocument, SnapshotFlag, SnapshotRollout, SnapshotSegment } from '../../src/server/client-snapshot/document.js';
import type { GenFlag, GenNamespace, GenSegment, GenSegmentRef, GenState } from './random-state.js';

const AT = '2026-01-01T00:00:00Z';

// The document's types are the server's own (src/server/client-snapshot/document.ts): what this
// file writes and what vexil serves are compared as the same shape (client-snapshot/document.test.ts).
export type {
  SnapshotConstraint,
  SnapshotDistribution,
  SnapshotDocument,
  SnapshotFlag,
  SnapshotRollout,
  SnapshotRule,
  SnapshotSegment,
} from '../../src/server/client-snapshot/document.js';

const COMPARISON: Record<string, string> = {
  STRING_COMPARISON_TYPE: 'STRING_CONSTRAINT_COMPARISON_TYPE',
  NUMBER_COMPARISON_TYPE: 'NUMBER_CONSTRAINT_COMPARISON_TYPE',
  BOOLEAN_COMPARISON_TYPE: 'BOOLEAN_CONSTRAINT_COMPARISON_TYPE',
  DATETIME_COMPARISON_TYPE: 'DATETIME_CONSTRAINT_COMPARISON_TYPE',
  ENTITY_ID_COMPARISON_TYPE: 'ENTITY_ID_CONSTRAINT_COMPARISON_TYPE',
};

/** The snapshot documents of a state, one per namespace key. */
export function toFliptSnapshots(state: GenState): Map<string, SnapshotDocument> {
  const out = new Map<string, SnapshotDocument>();
  for (const ns of state.namespaces) out.set(ns.key, toFliptSnapshot(ns));
  return out;
}

export function toFliptSnapshot(ns: GenNamespace): SnapshotDocument {
  const segments = new Map<string, SnapshotSegment>();
  for (const s of ns.segments) segments.set(s.key, segmentJson(ns.key, s));
  return { namespace: { key: ns.key }, flags: ns.flags.map((f) => flagJson(ns.key, f, segments)) };
}

function segmentJson(nsKey: string, s: GenSegment): SnapshotSegment {
  return {
    key: s.key,
    name: '',
    description: '',
    matchType: s.matchType === 'ALL_MATCH_TYPE' ? 'ALL_SEGMENT_MATCH_TYPE' : 'ANY_SEGMENT_MATCH_TYPE',
    constraints: s.constraints.map((c, i) => ({
      id: `${nsKey}/${s.key}/c${i}`,
      type: COMPARISON[c.type],
      property: c.property,
      operator: c.operator,
      value: c.value ?? '',
    })),
  };
}

function inlineSegments(ref: GenSegmentRef, segments: Map<string, SnapshotSegment>): SnapshotSegment[] {
  const keys = [...new Set(ref.keys)];
  return keys.map((k) => {
    const s = segments.get(k);
    if (!s) throw new Error(`generated state references unknown segment ${k}`);
    return s;
  });
}

function flagJson(nsKey: string, f: GenFlag, segments: Map<string, SnapshotSegment>): SnapshotFlag {
  // The last `default: true` wins in Flipt; the generator marks at most one.
  const defaults = f.variants.filter((v) => v.default === true);
  const dv = defaults.length > 0 ? defaults[defaults.length - 1] : undefined;
  const variantId = (key: string) => `${nsKey}/${f.key}/${key}`;
  const attachmentOf = (key: string) => goJson(f.variants.find((v) => v.key === key)?.attachment);

  const flag: SnapshotFlag = {
    key: f.key,
    name: f.name,
    description: '',
    enabled: f.enabled ?? false,
    type: f.type,
    createdAt: AT,
    updatedAt: AT,
    rules:
      f.type === 'VARIANT_FLAG_TYPE'
        ? f.rules.map((r, i) => ({
            id: `${nsKey}/${f.key}/rule${i + 1}`,
            rank: i + 1,
            segmentOperator: r.segment.operator ?? 'OR_SEGMENT_OPERATOR',
            segments: inlineSegments(r.segment, segments),
            distributions: r.distributions.map((d) => ({
              id: '',
              ruleId: '',
              variantId: variantId(d.variant),
              variantKey: d.variant,
              variantAttachment: attachmentOf(d.variant),
              rollout: d.rollout,
            })),
          }))
        : [],
    rollouts:
      f.type === 'BOOLEAN_FLAG_TYPE'
        ? f.rollouts.map((r, i): SnapshotRollout =>
            r.kind === 'empty'
              ? { type: 'UNKNOWN_ROLLOUT_TYPE', rank: i + 1 }
              : r.kind === 'threshold'
              ? { type: 'THRESHOLD_ROLLOUT_TYPE', rank: i + 1, threshold: { percentage: r.percentage, value: r.value ?? false } }
              : {
                  type: 'SEGMENT_ROLLOUT_TYPE',
                  rank: i + 1,
                  segment: { value: r.value ?? false, segmentOperator: r.segment.operator ?? 'OR_SEGMENT_OPERATOR', segments: inlineSegments(r.segment, segments) },
                },
          )
        : [],
  };
  if (dv && f.type === 'VARIANT_FLAG_TYPE') flag.defaultVariant = { id: variantId(dv.key), key: dv.key, attachment: goJson(dv.attachment) };
  return flag;
}

/**
 * Go's encoding/json of a decoded YAML value: compact, object keys sorted bytewise, `<` `>` `&`
 * U+2028 U+2029 escaped; a missing attachment is the string "null". Written here independently
 * of vexil's state/attachment.ts (the generator only produces integers, strings, booleans, null).
 */
export function goJson(v: unknown): string {
  if (v === undefined || v === null) return 'null';
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  if (typeof v === 'object') {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort((a, b) => (Buffer.compare(Buffer.from(a), Buffer.from(b))));
    return `{${keys.map((k) => `${goString(k)}:${goJson(o[k])}`).join(',')}}`;
  }
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number' && Number.isInteger(v)) return String(v);
  if (typeof v === 'boolean') return String(v);
  throw new Error(`goJson: the generator does not produce ${typeof v} ${String(v)}`);
}

function goString(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '<' || ch === '>' || ch === '&' || cp === 0x2028 || cp === 0x2029) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (cp < 0x20) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return out + '"';
}
