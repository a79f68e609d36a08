import { formatPercent } from './format.js';
/**
 * A rule's distributions as a bar: which variant (by key) gets how much, and what is left to no
 * variant. Widths follow how Flipt v1 buckets (flipt-semantics §2.3): distributions are laid out
 * in order, a rollout of 0 takes no room, and whatever lies beyond 100% is never reached, so a
 * sum above 100 shortens the later parts; a sum below 100 leaves a remainder that gets no variant.
 * Pure, no DOM: the flag page draws it, tap tests check the maths.
 */

export interface DistributionLike {
  variantId: string;
  rollout: number;
}

export interface VariantLike {
  id: string;
  key: string;
}

export interface BarPart {
  variantId: string;
  /** The variant's key; the id itself when the flag has no such variant. */
  variantKey: string;
  /** Index of the variant in the flag (-1 when unknown): gives a variant the same colour in every rule. */
  variantIndex: number;
  /** The rollout as declared, in percent. */
  rollout: number;
  /** The share of the bar it gets, 0..100. */
  width: number;
}

export interface Bar {
  parts: BarPart[];
  /** The declared rollouts added up. */
  total: number;
  /** Percent of entities that get no variant (100 − total, never negative). */
  remainder: number;
  /** Text equivalent of the bar: `blue 60%, green 40%`, plus `no variant 10%` when some is left. */
  text: string;
}

/** Rollouts are floats: round away float dust (33.33 × 3) to two decimals. */
function round2(n: number): number {
  return Math.round(n * 100) / 100;
}

/** `60%`, `33.33%`, `0.5%`: the one percentage style of the UI (format.ts). */
export function percentText(n: number): string {
  return formatPercent(round2(n));
}

export function distributionBar(distributions: readonly DistributionLike[], variants: readonly VariantLike[]): Bar {
  const indexById = new Map<string, number>();
  variants.forEach((v, i) => indexById.set(v.id, i));
  const parts: BarPart[] = [];
  let total = 0;
  for (const d of distributions) {
    const rollout = Number.isFinite(d.rollout) ? d.rollout : 0;
    // Clamp into the 0..100 line: what lies before `total` is taken, what lies after 100 is never reached.
    const start = Math.min(Math.max(total, 0), 100);
    total += rollout;
    const end = Math.min(Math.max(total, 0), 100);
    const index = indexById.get(d.variantId) ?? -1;
    parts.push({
      variantId: d.variantId,
      variantKey: index >= 0 ? variants[index]!.key : d.variantId,
      variantIndex: index,
      rollout,
      width: round2(Math.max(0, end - start)),
    });
  }
  total = round2(total);
  const remainder = round2(Math.max(0, 100 - total));
  // No distributions at all is not "no variant for everyone": Flipt then answers a match without a variant.
  if (parts.length === 0) return { parts, total, remainder, text: 'no distributions' };
  const items = parts.map((p) => `${p.variantKey} ${percentText(p.rollout)}`);
  if (remainder > 0) items.push(`no variant ${percentText(remainder)}`);
  return { parts, total, remainder, text: items.join(', ') };
}
