/**
 * The entity id of an evaluation as the console and the entity page take it: required (an empty
 * id is hashed like any other, so evaluating it silently answers for an entity nobody meant), and
 * generated on request as a random UUID (version 4 layout) from bytes the page draws with
 * `crypto.getRandomValues`, which, unlike `crypto.randomUUID`, also works on a page served over
 * plain HTTP. Pure, no DOM.
 */

/** Why the id cannot be evaluated, or undefined when it can. */
export function entityIdProblem(id: string): string | undefined {
  if (id === '') return 'Type an entity id, or generate one: every evaluation is for one entity.';
  if (id.trim() === '') return 'The entity id is only spaces: type an entity id, or generate one.';
  return undefined;
}

/** A UUID (version 4, variant 1 bits set) from 16 random bytes. */
export function entityIdFromBytes(bytes: Uint8Array): string {
  if (bytes.length < 16) throw new RangeError('16 random bytes are needed');
  const b = Array.from(bytes.subarray(0, 16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = b.map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}
