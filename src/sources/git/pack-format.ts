/**
 * The binary formats of Git's object database that vexil reads itself rather than through
 * isomorphic-git, because isomorphic-git only knows how to inflate an object whole: a pack entry's
 * header (type and inflated size, base of a delta), the two sizes that start a delta, applying a
 * delta, and the `<type> <size>\0` header of an object. Pure functions over buffers, no I/O.
 *
 * Sizes are decoded with arithmetic, not 32-bit bit operations: a 2 GiB object must read as
 * 2147483648, not as a negative number.
 */

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag';

/** Pack entry type numbers (6 and 7 are deltas). */
export const PACK_TYPES: Readonly<Record<number, ObjectType>> = { 1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag' };
export const OFS_DELTA = 6;
export const REF_DELTA = 7;

/** The longest entry header: a 64-bit size (10 bytes) and a ref-delta's base id (20 bytes). */
export const MAX_ENTRY_HEADER = 32;

/** Thrown for bytes that are not what the Git formats allow (a corrupt or hostile pack). */
export class PackFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackFormatError';
  }
}

export interface EntryHeader {
  /** 1-4 (an object) or 6/7 (a delta). */
  readonly type: number;
  /** Inflated size of the entry's data: the object, or the delta's instructions. */
  readonly size: number;
  /** Bytes of the header: the entry's zlib data starts there. */
  readonly length: number;
  /** OFS_DELTA: how far before this entry its base starts (the caller checks it stays in the pack). */
  readonly baseDistance?: number;
  /** REF_DELTA: the base's object id. */
  readonly baseOid?: string;
}

/** Largest size we accept in a header: beyond this, numbers lose precision (and no real object is that big). */
const MAX_SIZE = 2 ** 48;

/** The entry header at `pos`, or undefined when `buf` ends before it does. */
export function parseEntryHeader(buf: Uint8Array, pos: number): EntryHeader | undefined {
  let at = pos;
  if (at >= buf.length) return undefined;
  let byte = buf[at++]!;
  const type = (byte >> 4) & 7;
  let size = byte & 15;
  let scale = 16;
  while (byte & 0x80) {
    if (at >= buf.length) return undefined;
    byte = buf[at++]!;
    size += (byte & 0x7f) * scale;
    scale *= 128;
    if (size > MAX_SIZE) throw new PackFormatError(`pack entry at offset ${pos} declares an impossible size`);
  }
  if (type === OFS_DELTA) {
    if (at >= buf.length) return undefined;
    byte = buf[at++]!;
    let distance = byte & 0x7f;
    while (byte & 0x80) {
      if (at >= buf.length) return undefined;
      byte = buf[at++]!;
      distance = (distance + 1) * 128 + (byte & 0x7f);
      if (distance > MAX_SIZE) throw new PackFormatError(`pack entry at offset ${pos} names an impossible base offset`);
    }
    if (distance === 0) throw new PackFormatError(`pack entry at offset ${pos} names itself as its base`);
    return { type, size, length: at - pos, baseDistance: distance };
  }
  if (type === REF_DELTA) {
    if (at + 20 > buf.length) return undefined;
    const baseOid = Buffer.from(buf.buffer, buf.byteOffset + at, 20).toString('hex');
    return { type, size, length: at + 20 - pos, baseOid };
  }
  if (PACK_TYPES[type] === undefined) throw new PackFormatError(`pack entry at offset ${pos} has unknown type ${type}`);
  return { type, size, length: at - pos };
}

export interface DeltaSizes {
  readonly baseSize: number;
  readonly resultSize: number;
  /** Bytes the two sizes take: the instructions start there. */
  readonly length: number;
}

/** The base and result sizes a delta starts with, or undefined when `delta` ends before them. */
export function parseDeltaSizes(delta: Uint8Array): DeltaSizes | undefined {
  let at = 0;
  const varint = (): number | undefined => {
    let value = 0;
    let scale = 1;
    for (;;) {
      if (at >= delta.length) return undefined;
      const byte = delta[at++]!;
      value += (byte & 0x7f) * scale;
      if (value > MAX_SIZE) throw new PackFormatError('a delta declares an impossible size');
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
  };
  const baseSize = varint();
  if (baseSize === undefined) return undefined;
  const resultSize = varint();
  if (resultSize === undefined) return undefined;
  return { baseSize, resultSize, length: at };
}

/** Rebuilds an object from its base and a delta, checking every copy stays inside the base. */
export function applyDelta(delta: Uint8Array, base: Uint8Array): Buffer {
  const sizes = parseDeltaSizes(delta);
  if (sizes === undefined) throw new PackFormatError('a delta is truncated');
  if (sizes.baseSize !== base.length) {
    throw new PackFormatError(`a delta expects a base of ${sizes.baseSize} bytes, its base has ${base.length}`);
  }
  const out = Buffer.allocUnsafe(sizes.resultSize);
  let written = 0;
  let at = sizes.length;
  while (at < delta.length) {
    const op = delta[at++]!;
    if (op & 0x80) {
      // Copy from the base: which offset and size bytes follow is given by the op's low 7 bits.
      let offset = 0;
      let size = 0;
      const next = () => {
        if (at >= delta.length) throw new PackFormatError('a delta is truncated');
        return delta[at++]!;
      };
      for (let i = 0; i < 4; i++) if (op & (1 << i)) offset += next() * 2 ** (8 * i);
      for (let i = 0; i < 3; i++) if (op & (0x10 << i)) size += next() * 2 ** (8 * i);
      if (size === 0) size = 0x10000;
      if (offset + size > base.length || written + size > out.length) {
        throw new PackFormatError('a delta copies from outside its base or past its declared size');
      }
      out.set(base.subarray(offset, offset + size), written);
      written += size;
    } else if (op !== 0) {
      // Insert the next `op` bytes of the delta.
      if (at + op > delta.length || written + op > out.length) throw new PackFormatError('a delta inserts past its end');
      out.set(delta.subarray(at, at + op), written);
      written += op;
      at += op;
    } else {
      throw new PackFormatError('a delta holds the reserved instruction 0');
    }
  }
  if (written !== out.length) throw new PackFormatError(`a delta produced ${written} bytes, it declared ${out.length}`);
  return out;
}

/** `<type> <size>\0`: what a Git object id hashes before the content. */
export function objectHeader(type: ObjectType, size: number): Buffer {
  return Buffer.from(`${type} ${size}\0`, 'latin1');
}

/** Parses `<type> <size>\0` at the start of an inflated loose object; undefined when incomplete. */
export function parseObjectHeader(bytes: Uint8Array): { type: ObjectType; size: number } | undefined {
  const end = bytes.indexOf(0);
  if (end < 0) {
    if (bytes.length > 32) throw new PackFormatError('a loose object has no valid header');
    return undefined;
  }
  const match = /^(commit|tree|blob|tag) (\d{1,15})$/.exec(Buffer.from(bytes.subarray(0, end)).toString('latin1'));
  if (match === null) throw new PackFormatError('a loose object has no valid header');
  return { type: match[1] as ObjectType, size: Number(match[2]) };
}
