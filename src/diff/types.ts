/**
 * The shapes of a semantic diff between two snapshots and of its impact preview. These are the
 * API's JSON (schemas/diff.schema.json documents them) and what the CLI formats: data only, no
 * text; `describe.ts` turns a change into words.
 */

/** A JSON value as it appears in `from` / `to` (attachments parsed, rules and constraints as objects). */
export type JsonValue = null | boolean | number | string | readonly JsonValue[] | { readonly [key: string]: JsonValue };

/**
 * Where a positioned item (rule, rollout, constraint) sits: its 1-based rank in the base and in
 * the head. `from` is absent for an added item, `to` for a removed one.
 */
export interface Position {
  readonly from?: number;
  readonly to?: number;
}

export type ChangeKind =
  | 'namespace.name'
  | 'namespace.description'
  | 'flag.name'
  | 'flag.description'
  | 'flag.enabled'
  | 'flag.type'
  | 'flag.metadata'
  | 'flag.defaultVariant'
  | 'variant'
  | 'variant.name'
  | 'variant.description'
  | 'variant.attachment'
  | 'rule'
  | 'rule.segments'
  | 'rule.operator'
  | 'distribution'
  | 'rollout'
  | 'rollout.type'
  | 'rollout.segments'
  | 'rollout.operator'
  | 'rollout.value'
  | 'rollout.threshold'
  | 'rollout.description'
  | 'segment.name'
  | 'segment.description'
  | 'segment.matchType'
  | 'constraint';

/**
 * `added` / `removed`: the item exists on one side only (`to` / `from` holds it).
 * `changed`: a value differs (`from` → `to`). `moved`: a rule or rollout kept its content but its
 * place among the rules (rollouts) both sides have changed; `rule` / `rollout` give both ranks.
 */
export type ChangeAction = 'added' | 'removed' | 'changed' | 'moved';

export interface Change {
  readonly kind: ChangeKind;
  readonly action: ChangeAction;
  /** Variant key (variant.*, distribution). */
  readonly variant?: string;
  /** Metadata key (flag.metadata). */
  readonly key?: string;
  readonly rule?: Position;
  readonly rollout?: Position;
  readonly constraint?: Position;
  readonly from?: JsonValue;
  readonly to?: JsonValue;
}

export type EntryStatus = 'added' | 'removed' | 'changed';

export interface FlagDiff {
  readonly key: string;
  readonly status: EntryStatus;
  /** The head's type (the base's for a removed flag). */
  readonly type: 'VARIANT_FLAG_TYPE' | 'BOOLEAN_FLAG_TYPE';
  /** Empty for added and removed flags. */
  readonly changes: readonly Change[];
}

export interface SegmentDiff {
  readonly key: string;
  readonly status: EntryStatus;
  readonly changes: readonly Change[];
}

export interface NamespaceDiff {
  readonly key: string;
  readonly status: EntryStatus;
  /** The namespace's own name and description. */
  readonly changes: readonly Change[];
  /** By key, ascending; only flags that differ. */
  readonly flags: readonly FlagDiff[];
  readonly segments: readonly SegmentDiff[];
}

export interface DiffSummary {
  readonly namespacesAdded: number;
  readonly namespacesRemoved: number;
  readonly namespacesChanged: number;
  readonly flagsAdded: number;
  readonly flagsRemoved: number;
  readonly flagsChanged: number;
  readonly segmentsAdded: number;
  readonly segmentsRemoved: number;
  readonly segmentsChanged: number;
}

export interface SideInfo {
  readonly reference: string;
  readonly revision: string;
}

export interface SnapshotDiff {
  readonly base: SideInfo;
  readonly head: SideInfo;
  /** Whether anything differs. */
  readonly changed: boolean;
  readonly summary: DiffSummary;
  /** By key, ascending; only namespaces that differ. */
  readonly namespaces: readonly NamespaceDiff[];
}

export interface DiffOptions {
  /** Only this namespace (absent: all). */
  readonly namespace?: string;
}

/** One evaluation input of the impact sample. */
export interface SampleContext {
  readonly entityId: string;
  readonly context: Readonly<Record<string, string>>;
}

export interface Transition {
  /** Outcome on the base: a variant key, `true` / `false`, or `(none)` / `(absent)`. */
  readonly from: string;
  readonly to: string;
  readonly count: number;
}

export interface FlagImpact {
  readonly namespace: string;
  readonly flag: string;
  /** Entities evaluated (the sample size). */
  readonly evaluated: number;
  /** Entities whose outcome differs between base and head. */
  readonly changed: number;
  /** changed / evaluated, 0..1. */
  readonly ratio: number;
  /** By count, descending (then from, to). */
  readonly transitions: readonly Transition[];
}

export interface ImpactReport {
  /** Where the sample came from. */
  readonly sample: { readonly source: 'synthetic' | 'contexts-file'; readonly entities: number; readonly contexts: number };
  /** Flags evaluated (changed ones and those reading a changed segment), by namespace then key. */
  readonly flags: readonly FlagImpact[];
  /** Flags that would have been evaluated beyond the limits (1,000 flags, 2,000,000 flag × entity pairs; see impact.ts). */
  readonly omittedFlags: number;
}

/**
 * One finding of the policy's guards on the change (guards.ts), as a problem: located at the flag's
 * declaration by the CLI (`file` '' and `line`/`column` 0 when it has no place, and always in the
 * API's answer, which has snapshots and no files), with the namespace and flag it is about.
 */
export interface GuardProblem {
  readonly severity: 'error' | 'warning' | 'info';
  readonly rule: string;
  readonly namespace?: string;
  readonly flag?: string;
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly message: string;
  readonly hint?: string;
}

export interface GuardReport {
  /** The policy file whose guards were evaluated, as shown (`.vexil/policy.yml` of a side, or the file given). */
  readonly policy: string;
  /** Which side's policy file governs (`option`: the file given to the CLI). */
  readonly from: 'base' | 'head' | 'option';
  /** Whether a finding is an error: the change fails its guards. */
  readonly failed: boolean;
  readonly findings: readonly GuardProblem[];
}

/** What the API answers and `vexil diff --format json` prints: the diff, the impact and the guards when asked. */
export interface DiffReport extends SnapshotDiff {
  readonly impact?: ImpactReport;
  readonly guards?: GuardReport;
}
