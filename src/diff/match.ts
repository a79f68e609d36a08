/**
 * Pairs the items of two ordered lists (rules, rollouts, constraints) whose ids are positional and
 * so say nothing about identity. Three passes, each symmetric (swapping the lists swaps the pairs):
 * 1. same content: the k-th base item with key c pairs with the k-th head item with key c;
 * 2. same identity (e.g. a rule's segments), among the rest, the same way;
 * 3. same position, among the rest: what is left at one rank on both sides is that item changed.
 * Whatever stays unpaired was added or removed.
 */
export interface Pairing {
  /** [base index, head index], by base index. */
  readonly pairs: readonly (readonly [number, number])[];
  readonly removed: readonly number[];
  readonly added: readonly number[];
}

export function pairItems<T>(base: readonly T[], head: readonly T[], keys: readonly ((item: T) => string)[]): Pairing {
  const baseTo = new Array<number>(base.length).fill(-1);
  const headTo = new Array<number>(head.length).fill(-1);
  for (const keyOf of keys) pairByKey(base, head, keyOf, baseTo, headTo);
  for (let i = 0; i < Math.min(base.length, head.length); i++) {
    if (baseTo[i] === -1 && headTo[i] === -1) {
      baseTo[i] = i;
      headTo[i] = i;
    }
  }
  const pairs: [number, number][] = [];
  const removed: number[] = [];
  const added: number[] = [];
  baseTo.forEach((h, b) => (h === -1 ? removed.push(b) : pairs.push([b, h])));
  headTo.forEach((b, h) => {
    if (b === -1) added.push(h);
  });
  return { pairs, removed, added };
}

function pairByKey<T>(base: readonly T[], head: readonly T[], keyOf: (item: T) => string, baseTo: number[], headTo: number[]): void {
  const waiting = new Map<string, number[]>();
  head.forEach((item, h) => {
    if (headTo[h] !== -1) return;
    const k = keyOf(item);
    const list = waiting.get(k);
    if (list === undefined) waiting.set(k, [h]);
    else list.push(h);
  });
  base.forEach((item, b) => {
    if (baseTo[b] !== -1) return;
    const list = waiting.get(keyOf(item));
    if (list === undefined || list.length === 0) return;
    const h = list.shift()!;
    baseTo[b] = h;
    headTo[h] = b;
  });
}

/**
 * The pairs whose place among the paired items changed: an item's rank among the paired items of
 * the base differs from its rank among those of the head. Symmetric by construction (an
 * insertion or removal elsewhere shifts ranks but moves nothing).
 */
export function movedPairs(pairs: readonly (readonly [number, number])[]): Set<number> {
  const byHead = [...pairs].sort((x, y) => x[1] - y[1]);
  const headRank = new Map<number, number>();
  byHead.forEach(([b], rank) => headRank.set(b, rank));
  const moved = new Set<number>();
  pairs.forEach(([b], rank) => {
    if (headRank.get(b) !== rank) moved.add(b);
  });
  return moved;
}
