/**
 * Whether a flag serves one outcome to every entity, decided from its compiled form (what the
 * evaluators run, flipt-semantics.md §2.2 and §2.4), never from how the document reads:
 * - a disabled variant flag answers FLAG_DISABLED (and its default variant) to everyone;
 * - a variant flag: the first rule whose segments match decides (no fall-through); a rule gives
 *   each variant with a share over 0 to some entities, and the default variant to the share its
 *   distributions leave (or to all when it has none); entities no rule matches get the default;
 * - a boolean flag (enabled or not: `enabled` is only its fall-through value) answers the value of
 *   the first rollout that matches, else `enabled`.
 * A rule or rollout matches every entity when its segments have no constraints (AND: all of them;
 * OR: any) or, for a threshold, when its float32 percentage takes all of the 100 buckets; the rules
 * after it never decide. The outcomes of every rule or rollout that might decide are collected; one
 * outcome is uniform. Segments that may match no entity are counted as deciding (exactness there
 * needs the constraint solver), so a flag is reported only when its single outcome is certain.
 * Pure.
 */
import type { CompiledSegmentSet } from '../../model/compiled.js';
import type { Flag } from '../../model/snapshot.js';
import { ROLLOUT_SEGMENT, ROLLOUT_THRESHOLD } from '../../evaluation/opcodes.js';

export type UniformOutcome =
  /** A disabled variant flag. */
  | { readonly kind: 'disabled'; readonly variant: string }
  /** An enabled variant flag serving one variant key ("" = no variant) to everyone. */
  | { readonly kind: 'variant'; readonly variant: string }
  /** A boolean flag answering one value to everyone. */
  | { readonly kind: 'boolean'; readonly value: boolean };

/** The one outcome `flag` serves to every entity, or undefined when entities may get different ones. */
export function uniformOutcome(flag: Flag): UniformOutcome | undefined {
  const c = flag.compiled;
  if (c.variant !== null) {
    const v = c.variant;
    if (!c.enabled) return { kind: 'disabled', variant: v.defaultKey };
    const served = new Set<string>();
    let catchAll = false;
    for (const rule of v.rules) {
      if (rule.unknownType) return undefined; // reaching it fails the request: not one outcome
      if (neverMatches(rule)) continue;
      let prev = 0;
      for (let i = 0; i < rule.bounds.length; i++) {
        if (rule.bounds[i]! > prev) served.add(rule.hits[i]!.variantKey);
        prev = rule.bounds[i]!;
      }
      if (rule.bounds.length === 0 || prev < 1000) served.add(v.defaultKey);
      if (served.size > 1) return undefined;
      if (matchesEveryone(rule)) {
        catchAll = true;
        break;
      }
    }
    if (!catchAll) served.add(v.defaultKey);
    return served.size === 1 ? { kind: 'variant', variant: [...served][0]! } : undefined;
  }
  const b = c.boolean!;
  const values = new Set<boolean>();
  let catchAll = false;
  for (const r of b.rollouts) {
    if (r.kind === ROLLOUT_THRESHOLD) {
      if (!(r.percentage > 0)) continue; // takes no bucket: n < percentage never holds for n >= 0
      values.add(r.value);
      if (r.percentage > 99) {
        catchAll = true; // every n in 0..99 is below it
        break;
      }
    } else if (r.kind === ROLLOUT_SEGMENT) {
      if (r.unknownType) return undefined;
      if (neverMatches(r)) continue;
      values.add(r.value);
      if (matchesEveryone(r)) {
        catchAll = true;
        break;
      }
    }
    if (values.size > 1) return undefined;
  }
  if (!catchAll) values.add(b.fallThrough.enabled);
  return values.size === 1 ? { kind: 'boolean', value: [...values][0]! } : undefined;
}

/** Segments without constraints match every entity; AND over no segment matches everyone, OR over none no one. */
function matchesEveryone(set: CompiledSegmentSet): boolean {
  if (set.unknownType) return false;
  const empty = (i: number) => set.segments[i]!.constraints.length === 0;
  if (set.and) return set.segments.every((_, i) => empty(i));
  return set.segments.some((_, i) => empty(i));
}

function neverMatches(set: CompiledSegmentSet): boolean {
  return !set.and && set.segments.length === 0;
}

/** The outcome in words, finishing "serves ...": `variant red`, `no variant`, `true`, `false`, `FLAG_DISABLED (variant v2)`. */
export function describeOutcome(o: UniformOutcome): string {
  if (o.kind === 'disabled') return `FLAG_DISABLED (${o.variant === '' ? 'no variant' : `variant ${o.variant}`})`;
  if (o.kind === 'boolean') return String(o.value);
  return o.variant === '' ? 'no variant' : `variant ${o.variant}`;
}

/** Two outcomes are the same answer to every entity. */
export function sameOutcome(a: UniformOutcome, b: UniformOutcome): boolean {
  if (a.kind !== b.kind) return false;
  if (a.kind === 'boolean') return a.value === (b as typeof a).value;
  return a.variant === (b as typeof a).variant;
}
