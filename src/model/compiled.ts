/**
 * The compiled program: the shapes `evaluation/compile.ts` and `evaluation/compile-segments.ts`
 * build once per flag at snapshot build (held in `Flag.compiled`, see snapshot.ts), and the
 * interpreter and the generated matchers run per request. Numbers in `op` and `kind` are the
 * opcodes of `evaluation/opcodes.ts`. Types only (ground floor): the snapshot, the evaluators and
 * the store's matcher warm-up share them, so this file imports nothing above `model/`.
 */
import type { FlagType } from './enums.js';
import type { EvaluationContext } from './evaluation-request.js';
import type { BooleanResult, EvaluationReason, VariantResult } from './evaluation-result.js';

/** Every field is always present (unused ones hold a neutral value) so all constraints share one shape. */
export interface CompiledConstraint {
  readonly op: number;
  /** Context key read; ignored when `entity`. */
  readonly property: string;
  /** ENTITY_ID_COMPARISON_TYPE: compare the request's entityId instead of a context value. */
  readonly entity: boolean;
  /** String operand (eq/neq/prefix/suffix/contains/notcontains). */
  readonly str: string;
  /** Number operand (eq..gte); may be NaN/±Infinity, which Go also accepts and compares. */
  readonly num: number;
  /** Datetime operand as seconds since the epoch + nanoseconds. */
  readonly sec: number;
  readonly nsec: number;
  readonly strings: ReadonlySet<string> | null;
  /** Set membership uses SameValueZero: 0 and -0 are one member, as with Go's `==`. */
  readonly numbers: ReadonlySet<number> | null;
}

export interface CompiledSegment {
  readonly key: string;
  /** ALL_MATCH_TYPE (else ANY). */
  readonly all: boolean;
  readonly constraints: readonly CompiledConstraint[];
  /** Holds a constraint of a comparison type Flipt does not know: evaluating it fails the request. */
  readonly unknownType: boolean;
}

/** A set of segments combined with OR/AND, as rules and segment rollouts hold them. */
export interface CompiledSegmentSet {
  /** Distinct segments in declared order (Flipt keys them by segment key, so duplicates collapse). */
  readonly segments: readonly CompiledSegment[];
  readonly and: boolean;
  /** The keys of `segments`, frozen: the segmentKeys of a result where all of them matched. */
  readonly allKeys: readonly string[];
  readonly unknownType: boolean;
}

export interface CompiledRule extends CompiledSegmentSet {
  /** Cumulative upper bucket bounds of the distributions with rollout > 0, in declared order. */
  readonly bounds: readonly number[];
  /** Per bound: the result when every segment matched and the bucket fell in that distribution. */
  readonly hits: readonly VariantResult[];
  /**
   * Every segment matched and the bucket fell outside all distributions (match=false, no
   * fall-through); null when no bucket can (the last bound is 1000: buckets are 0..999).
   */
  readonly miss: VariantResult | null;
  /** Every segment matched and the rule has no distribution with rollout > 0 (match=true, default variant); null when it has some. */
  readonly noDistributions: VariantResult | null;
}

export interface CompiledRollout extends CompiledSegmentSet {
  readonly kind: number;
  /** float32 of the threshold percentage (compared with strict `<`). */
  readonly percentage: number;
  readonly value: boolean;
  /** The result when this rollout decides (threshold, or a segment rollout whose segments all matched). */
  readonly result: BooleanResult;
}

/** A flag's whole decision as one generated function (made by `evaluation/codegen.ts`). */
export type GeneratedMatcher<R> = (context: EvaluationContext, entityId: string) => R;

/**
 * The one mutable part of a compiled flag, invisible in results: the generated matcher
 * (evaluation/codegen.ts), made off the request path by prepareMatcher, which the store calls on
 * the flags of each snapshot it swaps in (store/matcher-warmup.ts). Until then, or where code
 * cannot be generated, the interpreter answers. Generating costs about as much as a few dozen interpreted
 * calls of a large flag: no request pays for it, and the CLI (`vexil evaluate`, `vexil test`),
 * which evaluates a flag a few times, never generates.
 */
export interface MatcherCell<R> {
  /** The generated matcher, once made. */
  fn: GeneratedMatcher<R> | null;
  /** Whether generation was attempted (once: on failure the interpreter stays in charge). */
  tried: boolean;
  /** Calls the interpreter answered for want of a generated matcher (observed by tests and benchmarks). */
  interpreted: number;
}

export interface CompiledVariantFlag {
  readonly rules: readonly CompiledRule[];
  /** Default variant's key/attachment, or "" when there is none. */
  readonly defaultKey: string;
  readonly defaultAttachment: string;
  /** DEFAULT_EVALUATION_REASON with a default variant, else UNKNOWN_EVALUATION_REASON. */
  readonly baseReason: EvaluationReason;
  readonly disabled: VariantResult;
  /** The answer of an enabled flag when no rule matches; null for a disabled one (never read). */
  readonly noMatch: VariantResult | null;
  /** Enabled flags only: the generated decision over `rules`. */
  readonly matcher: MatcherCell<VariantResult>;
}

export interface CompiledBooleanFlag {
  readonly rollouts: readonly CompiledRollout[];
  /** Fall-through: enabled = flag.enabled, DEFAULT_EVALUATION_REASON. */
  readonly fallThrough: BooleanResult;
  readonly matcher: MatcherCell<BooleanResult>;
}

export interface CompiledFlag {
  readonly key: string;
  readonly type: FlagType;
  readonly enabled: boolean;
  /** crc32 of the flag key's UTF-8 bytes: the seed for variant bucketing (flagKey ‖ entityId). */
  readonly keyCrc: number;
  /** Set for VARIANT_FLAG_TYPE. */
  readonly variant: CompiledVariantFlag | null;
  /** Set for BOOLEAN_FLAG_TYPE. */
  readonly boolean: CompiledBooleanFlag | null;
}
