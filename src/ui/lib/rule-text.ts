/**
 * Rules' and rollouts' segment sets and outcomes as words, for the flag page (flipt-semantics
 * §2.2, §2.4): a rule or rollout names one segment (`segmentKey`) or several (`segmentKeys`)
 * joined by AND or OR; AND of no segment matches everyone, OR of none matches nobody.
 * Pure, no DOM.
 */
import { percentText } from './distribution-bars.js';

export interface SegmentSetLike {
  segmentKey: string;
  segmentKeys: readonly string[];
  segmentOperator: string;
}

export interface RolloutLike {
  type: string;
  segment?: SegmentSetLike & { value: boolean };
  threshold?: { percentage: number; value: boolean };
}

/** The segment keys of a rule or segment rollout, in declared order. */
export function segmentKeysOf(s: SegmentSetLike): string[] {
  if (s.segmentKeys.length > 0) return [...s.segmentKeys];
  return s.segmentKey === '' ? [] : [s.segmentKey];
}

/** `AND` / `OR`. */
export function operatorWord(segmentOperator: string): 'AND' | 'OR' {
  return segmentOperator === 'AND_SEGMENT_OPERATOR' ? 'AND' : 'OR';
}

/** Who a segment set selects, in words: `segment a`, `segments a AND b`, or what an empty set means. */
export function segmentSetText(s: SegmentSetLike): string {
  const keys = segmentKeysOf(s);
  const op = operatorWord(s.segmentOperator);
  if (keys.length === 0) return op === 'AND' ? 'no segments (AND of none: every entity)' : 'no segments (OR of none: no entity)';
  if (keys.length === 1) return `segment ${keys[0]}`;
  return `segments ${keys.join(` ${op} `)}`;
}

/**
 * One rollout as a sentence: `35% of entities → true`, `entities in segment beta → false`,
 * `entities in segments a AND b → true`.
 */
export function rolloutText(r: RolloutLike): string {
  if (r.threshold !== undefined) return `${percentText(r.threshold.percentage)} of entities → ${r.threshold.value}`;
  if (r.segment !== undefined) return `entities in ${segmentSetText(r.segment)} → ${r.segment.value}`;
  return 'empty rollout (skipped)';
}

/** The last line of a boolean flag's rollouts: what nobody above matched gets (the flag's `enabled`). */
export function everyoneElseText(enabled: boolean): string {
  return `everyone else → ${enabled}`;
}
