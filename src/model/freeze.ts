/**
 * Immutability of the snapshot at run time, not only in the types. Plain objects and arrays are
 * frozen with Object.freeze as they are built (each object when created, which is cheaper than a
 * deep walk afterwards). Maps cannot be frozen by Object.freeze (set/delete still work), so the
 * snapshot's maps are FrozenMaps: ordinary Maps (same speed for get and iteration, `instanceof
 * Map` holds) whose prototype makes set/delete/clear throw.
 */

export class FrozenMap<K, V> extends Map<K, V> {
  /** Not constructible: use FrozenMap.of. */
  private constructor() {
    super();
  }

  /** A frozen map holding `entries` in their order. */
  static of<K, V>(entries: Iterable<readonly [K, V]>): FrozenMap<K, V> {
    return FrozenMap.seal(new Map(entries as Iterable<[K, V]>));
  }

  /**
   * Turns `map` itself (which the caller must not keep using) into a FrozenMap. Re-prototyping a
   * Map keeps its native storage: no copy, no per-entry cost, unlike a subclass constructor.
   */
  static seal<K, V>(map: Map<K, V>): FrozenMap<K, V> {
    Object.setPrototypeOf(map, FrozenMap.prototype);
    return Object.freeze(map) as FrozenMap<K, V>;
  }

  override set(key: K): this {
    throw new TypeError(`cannot set ${String(key)}: the snapshot is immutable`);
  }

  override delete(key: K): boolean {
    throw new TypeError(`cannot delete ${String(key)}: the snapshot is immutable`);
  }

  override clear(): void {
    throw new TypeError('cannot clear: the snapshot is immutable');
  }
}
