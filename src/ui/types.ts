/** The JSON shapes of vexil's public API the UI reads (see README and schemas/). */

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
