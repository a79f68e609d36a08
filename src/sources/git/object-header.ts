/**
 * The type and size of a Git object, read from its header without inflating it: the first bytes
 * of a loose object (`blob 2147483648\0`), or the entry header of a packed one (found through the
 * pack's .idx) plus, for a delta, the few bytes that say its result size. isomorphic-git can only
 * inflate an object whole, so every read goes through here first and is refused when too large.
 *
 * `footprint` is the most isomorphic-git will inflate at once to read the object: the object,
 * or, for a delta, the largest of its chain (a small file stored as a delta of a huge base costs
 * the base).
 *
 * Parsed .idx files and answers are kept in the database's cache object (replaced with it after a
 * mirror compaction). Objects never change, so an answer stays true.
 */
import { open, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import zlib from 'node:zlib';
import type { ObjectDb } from './object-db.js';
import {
  MAX_ENTRY_HEADER,
  OFS_DELTA,
  PACK_TYPES,
  PackFormatError,
  REF_DELTA,
  parseDeltaSizes,
  parseEntryHeader,
  parseObjectHeader,
  type ObjectType,
} from './pack-format.js';

export interface StoredObject {
  readonly type: ObjectType;
  /** Bytes of the object's content. */
  readonly size: number;
  /** Most bytes inflated at once to read it (its own size unless it is a delta of something larger). */
  readonly footprint: number;
}

/** Git's id of the empty tree, which it (and isomorphic-git) knows without storing it. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** Deeper chains are refused (git's default pack.depth is 50). */
const MAX_CHAIN_DEPTH = 4096;
/** Compressed bytes read to find a header; doubled while the header is not complete. */
const FIRST_READ = 256;
const LAST_READ = 2048; // a deflate block header (Huffman tables) takes under 300 bytes
/** Answers kept per database (cleared when full). */
const MAX_CACHED_ANSWERS = 100_000;

const INDEXES = Symbol('vexil.packIndexes');
const ANSWERS = Symbol('vexil.objectHeaders');

interface Caches {
  [INDEXES]?: Map<string, Promise<PackIdx | undefined>>;
  [ANSWERS]?: Map<string, StoredObject>;
}

/** The object's type, size and footprint; undefined when the database does not hold it. */
export async function readObjectHeader(db: ObjectDb, oid: string): Promise<StoredObject | undefined> {
  return headerOf(db, oid, 0);
}

async function headerOf(db: ObjectDb, oid: string, depth: number): Promise<StoredObject | undefined> {
  if (oid === EMPTY_TREE) return { type: 'tree', size: 0, footprint: 0 };
  const answers = ((db.cache as Caches)[ANSWERS] ??= new Map());
  const known = answers.get(oid);
  if (known !== undefined) return known;
  const found = (await looseHeader(db, oid)) ?? (await packedHeader(db, oid, depth));
  if (found !== undefined) {
    if (answers.size >= MAX_CACHED_ANSWERS) answers.clear();
    answers.set(oid, found);
  }
  return found;
}

async function looseHeader(db: ObjectDb, oid: string): Promise<StoredObject | undefined> {
  const path = join(db.gitdir, 'objects', oid.slice(0, 2), oid.slice(2));
  const header = await readInflatedPrefix(path, 0, (bytes) => parseObjectHeader(bytes)).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  return header === undefined ? undefined : { ...header, footprint: header.size };
}

async function packedHeader(db: ObjectDb, oid: string, depth: number): Promise<StoredObject | undefined> {
  const packDir = join(db.gitdir, 'objects', 'pack');
  const names = await readdir(packDir).catch(() => [] as string[]);
  for (const name of names) {
    if (!name.endsWith('.idx')) continue;
    const idx = await packIndex(db, join(packDir, name));
    const offset = idx?.offsetOf(oid);
    if (offset === undefined) continue;
    return entryAt(db, join(packDir, `${name.slice(0, -4)}.pack`), offset, depth);
  }
  return undefined;
}

/** The object stored at `offset` of a pack, following a delta to its base. */
async function entryAt(db: ObjectDb, packPath: string, offset: number, depth: number): Promise<StoredObject> {
  if (depth > MAX_CHAIN_DEPTH) throw new PackFormatError(`a delta chain in ${packPath} is deeper than ${MAX_CHAIN_DEPTH}`);
  const head = await readAt(packPath, offset, MAX_ENTRY_HEADER);
  const entry = parseEntryHeader(head, 0);
  if (entry === undefined) throw new PackFormatError(`${packPath} ends inside the entry at offset ${offset}`);
  const type = PACK_TYPES[entry.type];
  if (type !== undefined) return { type, size: entry.size, footprint: entry.size };

  const sizes = await readInflatedPrefix(packPath, offset + entry.length, parseDeltaSizes);
  let base: StoredObject | undefined;
  if (entry.type === OFS_DELTA) {
    if (entry.baseDistance! > offset) throw new PackFormatError(`the delta at offset ${offset} of ${packPath} names a base before the pack`);
    base = await entryAt(db, packPath, offset - entry.baseDistance!, depth + 1);
  } else if (entry.type === REF_DELTA) {
    base = await headerOf(db, entry.baseOid!, depth + 1);
    if (base === undefined) throw new PackFormatError(`the delta at offset ${offset} of ${packPath} names a missing base ${entry.baseOid}`);
  }
  return { type: base!.type, size: sizes.resultSize, footprint: Math.max(base!.footprint, entry.size, sizes.resultSize) };
}

/**
 * Inflates the start of the zlib data at `position` of `path` until `parse` finds what it needs
 * in it: reads a few hundred bytes (more only if the header is not complete yet), so the output
 * is bounded by zlib's maximum ratio times that, whatever the object's size.
 */
async function readInflatedPrefix<T>(path: string, position: number, parse: (bytes: Uint8Array) => T | undefined): Promise<T> {
  for (let length = FIRST_READ; ; length *= 2) {
    const compressed = await readAt(path, position, length);
    let inflated: Buffer;
    try {
      inflated = zlib.inflateSync(compressed, { finishFlush: zlib.constants.Z_SYNC_FLUSH });
    } catch (err) {
      throw new PackFormatError(`${path} holds invalid zlib data at offset ${position} (${(err as Error).message})`);
    }
    const parsed = parse(inflated);
    if (parsed !== undefined) return parsed;
    if (compressed.length < length || length >= LAST_READ) throw new PackFormatError(`${path} holds an object header that does not end at offset ${position}`);
  }
}

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, position);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** An index file (version 2) kept whole; lookups are a binary search in it. */
interface PackIdx {
  offsetOf(oid: string): number | undefined;
}

function packIndex(db: ObjectDb, path: string): Promise<PackIdx | undefined> {
  const indexes = ((db.cache as Caches)[INDEXES] ??= new Map());
  let p = indexes.get(path);
  if (p === undefined) {
    p = readFile(path).then(parseIdx, (err: NodeJS.ErrnoException) => {
      indexes.delete(path); // removed meanwhile (a repack): look again next time
      if (err.code === 'ENOENT') return undefined;
      throw err;
    });
    indexes.set(path, p);
  }
  return p;
}

function parseIdx(idx: Buffer): PackIdx | undefined {
  // Version 1 indexes (no magic) are not read by isomorphic-git either.
  if (idx.length < 8 + 1024 || idx.readUInt32BE(0) !== 0xff744f63 || idx.readUInt32BE(4) !== 2) return undefined;
  const fanoutAt = 8;
  const count = idx.readUInt32BE(fanoutAt + 255 * 4);
  const oidsAt = fanoutAt + 1024;
  const offsetsAt = oidsAt + count * 24;
  const largeAt = offsetsAt + count * 4;
  if (idx.length < largeAt + 40) throw new PackFormatError('a pack index is truncated');
  return {
    offsetOf(oid) {
      if (!/^[0-9a-f]{40}$/.test(oid)) return undefined;
      const target = Buffer.from(oid, 'hex');
      const first = target[0]!;
      let lo = first === 0 ? 0 : idx.readUInt32BE(fanoutAt + (first - 1) * 4);
      let hi = idx.readUInt32BE(fanoutAt + first * 4);
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        const at = oidsAt + mid * 20;
        const cmp = idx.compare(target, 0, 20, at, at + 20);
        if (cmp === 0) {
          const small = idx.readUInt32BE(offsetsAt + mid * 4);
          if ((small & 0x80000000) === 0) return small;
          // Packs over 2 GiB (written by git): the high bit points into the 64-bit table.
          const at64 = largeAt + (small & 0x7fffffff) * 8;
          return idx.readUInt32BE(at64) * 2 ** 32 + idx.readUInt32BE(at64 + 4);
        }
        if (cmp > 0) hi = mid;
        else lo = mid + 1;
      }
      return undefined;
    },
  };
}
