/**
 * A set of names with a size cap, in names and in characters: once full, adding a name forgets the
 * oldest ones. The store's admission (admission.ts) remembers the reference names it answered 404
 * for in one (until the next poll), so a client repeating an unknown name costs nothing upstream;
 * the caps keep a flood of made-up (or megabyte-long) names from growing it without bound. A
 * forgotten name only costs one more look, never a wrong answer; a name longer than the character
 * cap is not remembered.
 */
export class BoundedNameSet {
  readonly #names = new Set<string>();
  #chars = 0;

  constructor(
    readonly maxNames: number,
    readonly maxChars: number,
  ) {}

  has(name: string): boolean {
    return this.#names.has(name);
  }

  add(name: string): void {
    if (this.#names.has(name) || name.length > this.maxChars) return;
    // A Set iterates in insertion order: the first names are the oldest.
    for (const oldest of this.#names) {
      if (this.#names.size < this.maxNames && this.#chars + name.length <= this.maxChars) break;
      this.#names.delete(oldest);
      this.#chars -= oldest.length;
    }
    this.#names.add(name);
    this.#chars += name.length;
  }

  clear(): void {
    this.#names.clear();
    this.#chars = 0;
  }

  get size(): number {
    return this.#names.size;
  }
}
