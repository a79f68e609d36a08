/**
 * Indexes a fetched pack (writes the `.idx` that maps object ids to offsets) without ever holding
 * an object whole in memory unless it must: isomorphic-git's own indexer inflates every object
 * whole, so a few MB of compressed zeros on any branch became gigabytes at the first fetch.
 *
 * - An object stored whole is inflated as a stream into its SHA-1: memory stays flat whatever its
 *   size (a 2 GiB blob costs CPU, not RAM); only small ones are kept, as possible delta bases.
 * - A delta needs its base and its result in memory: one whose base, instructions or result is
 *   over `maxObjectSize` fails the whole fetch (git itself never deltifies objects over
 *   core.bigFileThreshold, 512 MiB, so this is a hostile or very unusual pack).
 * - Every inflated size is checked against the size the entry declared, and the pack's trailing
 *   checksum against its content: what the mirror keeps is consistent, so later reads can trust
 *   the sizes in the headers (see object-header.ts).
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import {
  OFS_DELTA,
  PACK_TYPES,
  PackFormatError,
  REF_DELTA,
  applyDelta,
  objectHeader,
  parseDeltaSizes,
  parseEntryHeader,
  type ObjectType,
} from './pack-format.js';

export interface IndexPackOptions {
  /** Largest delta, delta base or delta result held in memory to resolve deltas. */
  readonly maxObjectSize: number;
  /** A ref-delta's base that is not in this pack (already in the repository), within maxObjectSize. */
  readonly externalBase?: (oid: string) => Promise<{ type: ObjectType; content: Uint8Array } | undefined>;
}

export interface PackIndex {
  /** Hex SHA-1 of the pack (its trailer): the pack and idx are named after it. */
  readonly packSha: string;
  readonly objects: number;
  /** The `.idx` file (version 2). */
  readonly idx: Buffer;
}

/** Objects up to this size are inflated in one call (and kept as delta bases); larger ones stream. */
const INLINE_SIZE = 1024 * 1024;
/** Bytes of inflated objects kept for delta resolution. */
const BASE_CACHE_BYTES = 32 * 1024 * 1024;
/** Deeper delta chains are refused (git's default pack.depth is 50). */
const MAX_CHAIN_DEPTH = 4096;
const STREAM_SLICE = 64 * 1024;

interface Entry {
  readonly offset: number;
  /** Where the entry's zlib data starts and ends. */
  readonly dataStart: number;
  dataEnd: number;
  readonly type: number;
  /** Inflated size of the entry's data. */
  readonly size: number;
  readonly baseOffset?: number;
  readonly baseOid?: string;
  crc: number;
  oid?: string;
}

export async function indexPack(pack: Buffer, opts: IndexPackOptions): Promise<PackIndex> {
  if (pack.length < 32 || pack.toString('latin1', 0, 4) !== 'PACK') throw new PackFormatError('the server sent something that is not a pack');
  const version = pack.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new PackFormatError(`pack version ${version} is not supported`);
  const count = pack.readUInt32BE(8);
  const trailerAt = pack.length - 20;
  const packSha = pack.toString('hex', trailerAt);
  if (createHash('sha1').update(pack.subarray(0, trailerAt)).digest('hex') !== packSha) {
    throw new PackFormatError('the pack does not match its checksum (corrupted in transfer)');
  }
  // isomorphic-git reads 32-bit offsets only.
  if (trailerAt > 0x7fffffff) throw new PackFormatError('packs over 2 GiB are not supported');
  if (count > trailerAt / 2) throw new PackFormatError(`the pack declares ${count} objects, more than it can hold`);

  const entries: Entry[] = [];
  const indexAtOffset = new Map<number, number>();
  const cache = new ByteLru(BASE_CACHE_BYTES);
  let pos = 12;
  for (let i = 0; i < count; i++) {
    const header = parseEntryHeader(pack.subarray(0, trailerAt), pos);
    if (header === undefined) throw new PackFormatError(`the pack ends inside entry ${i + 1} of ${count}`);
    if (header.baseDistance !== undefined && header.baseDistance > pos) throw new PackFormatError(`the delta at offset ${pos} names a base before the pack`);
    const entry: Entry = {
      offset: pos,
      dataStart: pos + header.length,
      dataEnd: 0,
      type: header.type,
      size: header.size,
      ...(header.baseDistance !== undefined ? { baseOffset: pos - header.baseDistance } : {}),
      ...(header.baseOid !== undefined ? { baseOid: header.baseOid } : {}),
      crc: 0,
    };
    const type = PACK_TYPES[entry.type];
    if (type !== undefined && entry.size > INLINE_SIZE) {
      // Stream it into its object id; it is never kept.
      const hash = createHash('sha1').update(objectHeader(type, entry.size));
      const consumed = await inflateStreaming(pack.subarray(entry.dataStart, trailerAt), entry.size, (chunk) => hash.update(chunk), entry.offset);
      entry.dataEnd = entry.dataStart + consumed;
      entry.oid = hash.digest('hex');
    } else if (type !== undefined) {
      const { content, consumed } = inflateEntry(pack, entry, trailerAt);
      entry.dataEnd = entry.dataStart + consumed;
      entry.oid = createHash('sha1').update(objectHeader(type, entry.size)).update(content).digest('hex');
      cache.set(i, { type, content });
    } else {
      // A delta: check its sizes now (before any base is inflated); resolved below.
      if (entry.size > opts.maxObjectSize) throw tooLarge('a delta', entry.size, opts.maxObjectSize);
      const { content, consumed } = inflateEntry(pack, entry, trailerAt);
      entry.dataEnd = entry.dataStart + consumed;
      const sizes = parseDeltaSizes(content);
      if (sizes === undefined) throw new PackFormatError(`the delta at offset ${entry.offset} is truncated`);
      if (sizes.resultSize > opts.maxObjectSize) throw tooLarge('an object stored as a delta', sizes.resultSize, opts.maxObjectSize);
      if (sizes.baseSize > opts.maxObjectSize) throw tooLarge('the base of a delta', sizes.baseSize, opts.maxObjectSize);
    }
    entry.crc = zlib.crc32(pack.subarray(entry.offset, entry.dataEnd));
    indexAtOffset.set(entry.offset, i);
    entries.push(entry);
    pos = entry.dataEnd;
  }
  if (pos !== trailerAt) throw new PackFormatError('the pack holds bytes after its last object');

  const indexOfOid = new Map<string, number>();
  entries.forEach((e, i) => {
    if (e.oid !== undefined && !indexOfOid.has(e.oid)) indexOfOid.set(e.oid, i);
  });

  /** The type and content of entry `i` (a delta is resolved through its chain). */
  const contentOf = async (i: number, depth: number): Promise<{ type: ObjectType; content: Uint8Array }> => {
    const hit = cache.get(i);
    if (hit !== undefined) return hit;
    if (depth > MAX_CHAIN_DEPTH) throw new PackFormatError('a delta chain is too deep');
    const e = entries[i]!;
    const wholeType = PACK_TYPES[e.type];
    let resolved: { type: ObjectType; content: Uint8Array };
    if (wholeType !== undefined) {
      if (e.size > opts.maxObjectSize) throw tooLarge('the base of a delta', e.size, opts.maxObjectSize);
      resolved = { type: wholeType, content: inflateEntry(pack, e, trailerAt).content };
    } else {
      const base = await baseOf(e, depth);
      resolved = { type: base.type, content: applyDelta(inflateEntry(pack, e, trailerAt).content, base.content) };
    }
    cache.set(i, resolved);
    return resolved;
  };
  const baseOf = async (e: Entry, depth: number) => {
    if (e.baseOffset !== undefined) {
      const at = indexAtOffset.get(e.baseOffset);
      if (at === undefined) throw new PackFormatError(`the delta at offset ${e.offset} names a base that is not an entry`);
      return contentOf(at, depth + 1);
    }
    const at = indexOfOid.get(e.baseOid!);
    if (at !== undefined) return contentOf(at, depth + 1);
    const external = await opts.externalBase?.(e.baseOid!);
    if (external === undefined) throw new PackFormatError(`the delta at offset ${e.offset} names a base object the pack does not hold`);
    return external;
  };

  // Offset deltas point backwards, so one pass in pack order resolves them; a ref-delta whose base
  // is itself a delta resolved later waits for the next pass (git sends bases first, so rarely).
  // When a pass makes no progress, the bases left are outside the pack (or missing: an error).
  const resolve = async (i: number) => {
    const e = entries[i]!;
    const { type, content } = await contentOf(i, 0);
    e.oid = createHash('sha1').update(objectHeader(type, content.length)).update(content).digest('hex');
    if (!indexOfOid.has(e.oid)) indexOfOid.set(e.oid, i);
  };
  let pending = entries.flatMap((e, i) => (e.oid === undefined ? [i] : []));
  while (pending.length > 0) {
    const waiting: number[] = [];
    for (const i of pending) {
      const e = entries[i]!;
      if (e.baseOid !== undefined && !indexOfOid.has(e.baseOid)) waiting.push(i);
      else await resolve(i);
    }
    if (waiting.length === pending.length) {
      for (const i of waiting) await resolve(i);
      break;
    }
    pending = waiting;
  }

  return { packSha, objects: count, idx: idxV2(entries, packSha) };
}

function tooLarge(what: string, size: number, limit: number): PackFormatError {
  return new PackFormatError(
    `the pack holds ${what} of ${size} bytes, over the ${limit} bytes vexil inflates in memory to resolve deltas`,
  );
}

/** Inflates an entry's data whole (it was checked to be small enough), checking its declared size. */
function inflateEntry(pack: Buffer, e: Entry, end: number): { content: Buffer; consumed: number } {
  let result: { buffer: Buffer; engine: zlib.Inflate };
  try {
    result = zlib.inflateSync(pack.subarray(e.dataStart, end), { info: true, maxOutputLength: Math.max(e.size, 1) }) as unknown as {
      buffer: Buffer;
      engine: zlib.Inflate;
    };
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE') throw new PackFormatError(`the pack entry at offset ${e.offset} inflates to more than the ${e.size} bytes it declares`);
    throw new PackFormatError(`the pack entry at offset ${e.offset} is not valid zlib data (${(err as Error).message})`);
  }
  if (result.buffer.length !== e.size) {
    throw new PackFormatError(`the pack entry at offset ${e.offset} inflates to ${result.buffer.length} bytes, it declares ${e.size}`);
  }
  return { content: result.buffer, consumed: result.engine.bytesWritten };
}

/**
 * Inflates zlib data at the start of `input` as a stream, handing each piece to `onChunk`; fails
 * as soon as it produces more than `size` bytes. Returns how many input bytes the stream took.
 */
async function inflateStreaming(input: Buffer, size: number, onChunk: (chunk: Buffer) => void, offset: number): Promise<number> {
  const inflater = zlib.createInflate();
  let produced = 0;
  let failure: Error | undefined;
  const fail = (err: Error) => {
    failure ??= err;
    inflater.destroy();
  };
  inflater.on('data', (chunk: Buffer) => {
    produced += chunk.length;
    if (produced > size) fail(new PackFormatError(`the pack entry at offset ${offset} inflates to more than the ${size} bytes it declares`));
    else onChunk(chunk);
  });
  const closed = new Promise<void>((resolve) => {
    inflater.on('close', resolve);
    inflater.on('end', resolve);
    inflater.on('error', (err) => fail(new PackFormatError(`the pack entry at offset ${offset} is not valid zlib data (${err.message})`)));
  });
  for (let at = 0; at < input.length && failure === undefined; at += STREAM_SLICE) {
    const slice = input.subarray(at, at + STREAM_SLICE);
    await new Promise<void>((resolve) => inflater.write(slice, () => resolve()));
    // Fewer bytes taken than given: the zlib stream ended inside this slice.
    if (inflater.bytesWritten < at + slice.length) break;
  }
  if (failure === undefined) inflater.end();
  await closed;
  if (failure !== undefined) throw failure;
  if (produced !== size) throw new PackFormatError(`the pack entry at offset ${offset} inflates to ${produced} bytes, it declares ${size}`);
  return inflater.bytesWritten;
}

/** Index file version 2: fanout, sorted ids, CRC-32s, offsets, pack checksum, own checksum. */
function idxV2(entries: readonly Entry[], packSha: string): Buffer {
  // A pack may hold an object twice: the index names it once.
  const byOid = new Map<string, Entry>();
  for (const e of entries) if (!byOid.has(e.oid!)) byOid.set(e.oid!, e);
  const unique = [...byOid.values()];
  unique.sort((a, b) => (a.oid! < b.oid! ? -1 : 1));
  const n = unique.length;
  const out = Buffer.alloc(8 + 256 * 4 + n * (20 + 4 + 4) + 40);
  out.writeUInt32BE(0xff744f63, 0);
  out.writeUInt32BE(2, 4);
  const fanout = new Array<number>(256).fill(0);
  for (const e of unique) fanout[parseInt(e.oid!.slice(0, 2), 16)]!++;
  let at = 8;
  let total = 0;
  for (let b = 0; b < 256; b++) {
    total += fanout[b]!;
    out.writeUInt32BE(total, at);
    at += 4;
  }
  for (const e of unique) at += out.write(e.oid!, at, 'hex');
  for (const e of unique) at = out.writeUInt32BE(e.crc >>> 0, at);
  for (const e of unique) at = out.writeUInt32BE(e.offset, at);
  at += out.write(packSha, at, 'hex');
  createHash('sha1').update(out.subarray(0, at)).digest().copy(out, at);
  return out;
}

/** Least recently used entries dropped beyond a byte budget; an entry over a quarter of it is not kept. */
class ByteLru {
  private readonly map = new Map<number, { type: ObjectType; content: Uint8Array }>();
  private bytes = 0;
  constructor(private readonly budget: number) {}

  get(key: number) {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: number, value: { type: ObjectType; content: Uint8Array }) {
    if (value.content.length > this.budget / 4 || this.map.has(key)) return;
    this.map.set(key, value);
    this.bytes += value.content.length;
    for (const [oldKey, old] of this.map) {
      if (this.bytes <= this.budget) break;
      this.map.delete(oldKey);
      this.bytes -= old.content.length;
    }
  }
}
