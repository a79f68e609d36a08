/** The JSON shapes of vexil's public API the UI reads (see docs/api/ and schemas/). */

export interface Namespace {
  key: string;
  name: string;
  description: string;
  protected: boolean;
}

export interface Variant {
  id: string;
  key: string;
  name: string;
  description: string;
  attachment: string;
}

export interface Flag {
  key: string;
  name: string;
  description: string;
  enabled: boolean;
  namespaceKey: string;
  type: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  variants: Variant[];
  defaultVariant?: Variant;
  metadata?: Record<string, string | number | boolean>;
}

export interface Constraint {
  id: string;
  type: string;
  property: string;
  operator: string;
  value: string;
  description: string;
}

export interface Segment {
  key: string;
  name: string;
  description: string;
  matchType: string;
  constraints: Constraint[];
}

export interface Distribution {
  id: string;
  variantId: string;
  rollout: number;
}

export interface Rule {
  id: string;
  rank: number;
  segmentKey: string;
  segmentKeys: string[];
  segmentOperator: string;
  distributions: Distribution[];
}

export interface Rollout {
  id: string;
  rank: number;
  type: string;
  description: string;
  segment?: { segmentKey: string; value: boolean; segmentKeys: string[]; segmentOperator: string };
  threshold?: { percentage: number; value: boolean };
}

export interface Page {
  nextPageToken: string;
  totalCount: number;
}

export interface Problem {
  severity: string;
  rule: string;
  file: string;
  line: number;
  column: number;
  message: string;
  hint?: string;
  excerpt?: { startLine: number; lines: string[] };
}

export interface RevisionInfo {
  id: string;
  ref: string;
  meta?: { author?: string; message?: string; at?: string };
}

export interface ReferenceStatus {
  reference: string;
  default: boolean;
  revision?: RevisionInfo;
  loadedAt?: string;
  lastRejected?: { revision: RevisionInfo; at: string; problems: Problem[] };
  lastError?: { at: string; message: string };
  checkedAt?: string;
  stale?: string;
}

export interface Snapshots {
  defaultReference: string;
  references: ReferenceStatus[];
}

export interface AuthMethodInfo {
  method: string;
  enabled: boolean;
  sessionCompatible: boolean;
  metadata?: Record<string, unknown>;
}

/* The evaluation console (pages/console.tsx): `POST /evaluate/v1/explain`, schemas/explain.schema.json. */

export type EvaluationReason = 'UNKNOWN_EVALUATION_REASON' | 'FLAG_DISABLED_EVALUATION_REASON' | 'MATCH_EVALUATION_REASON' | 'DEFAULT_EVALUATION_REASON';

// The explanation is the core's own shape (src/evaluation/explain.ts), served as JSON as it is.
export type {
  BooleanExplanation,
  BucketExplanation as ExplainedBucket,
  ConstraintExplanation as ExplainedConstraint,
  RolloutExplanation as ExplainedRollout,
  RuleExplanation as ExplainedRule,
  SegmentExplanation as ExplainedSegment,
  SegmentSetExplanation as ExplainedSegmentSet,
  VariantExplanation,
} from '../evaluation/explain.js';
import type { BooleanExplanation, VariantExplanation } from '../evaluation/explain.js';

export interface VariantEvaluation {
  match: boolean;
  segmentKeys: string[];
  reason: EvaluationReason;
  variantKey: string;
  variantAttachment: string;
  requestId: string;
  requestDurationMillis: number;
  timestamp: string;
  flagKey: string;
}

export interface BooleanEvaluation {
  enabled: boolean;
  reason: EvaluationReason;
  requestId: string;
  requestDurationMillis: number;
  timestamp: string;
  flagKey: string;
  segmentKeys: string[];
}

export type ExplainResponse =
  | { flagKey: string; namespaceKey: string; flagType: 'VARIANT_FLAG_TYPE'; result: VariantEvaluation; explanation: VariantExplanation }
  | { flagKey: string; namespaceKey: string; flagType: 'BOOLEAN_FLAG_TYPE'; result: BooleanEvaluation; explanation: BooleanExplanation };

/** One semantic check of `GET /api/v1/namespaces/{namespace}/checks` (docs/api/checks.md). */
export interface Check {
  rule: string;
  severity: 'error' | 'warning' | 'info';
  message: string;
  hint: string;
  file: string;
  line: number;
  column: number;
  namespaceKey: string;
  /** "" when the check is about a segment. */
  flagKey: string;
  /** "" when the check is about a flag. */
  segmentKey: string;
}

export interface ChecksPage extends Page {
  reference: string;
  revision: string;
  checkedAt: string;
  checks: Check[];
}

/** One entry of `GET /meta/history` (docs/history.md, docs/api/operations.md). */
export interface HistoryEntry {
  reference: string;
  revision: string;
  status: 'served' | 'rejected';
  /** Served only (null on rejections). */
  servedFrom: string | null;
  /** Null while the revision is still served, and on rejections. */
  servedUntil: string | null;
  replacedBy: string | null;
  /** Rejected only. */
  rejectedAt?: string;
  author: string;
  message: string;
  committedAt: string | null;
  /** Rejected only: the first problems (located, without quoted lines) and how many there were. */
  problems?: Array<Pick<Problem, 'severity' | 'rule' | 'file' | 'line' | 'column' | 'message'>>;
  problemCount?: number;
  /** The replica that recorded it, when replicas do not coordinate. */
  replica?: string;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  /** "" on the last page. */
  nextPageToken: string;
}

/** `GET /api/v1/namespaces/{ns}/outline` (src/server/outline/answer.ts). */
/** `GET .../flags/{key}/last-change`'s `lastChange`: the newest commit that changed the flag, or why it is not known. */
export type LastChange =
  | { revision: string; parent?: string; author: string; message: string; committedAt: string }
  | { revision: null; reason: string };

export interface NamespaceOutline {
  reference: string;
  revision: string;
  namespaceKey: string;
  flags: Array<{
    key: string;
    rules: Array<{ rank: number; segments: string[]; operator: 'AND' | 'OR' }>;
    rollouts: Array<{ rank: number; value: boolean; percentage?: number; segments?: string[]; operator?: 'AND' | 'OR' }>;
  }>;
  everyoneSegments: string[];
}

/** `GET /api/v1/namespaces/{ns}/segments/{key}/usage`. */
export interface SegmentUsage {
  reference: string;
  revision: string;
  segmentKey: string;
  flags: Array<{ key: string; name: string; rules: number[]; rollouts: number[] }>;
  totalCount: number;
}
