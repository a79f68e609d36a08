/**
 * Checks the pack files of a repository on disk (the mirror in `storage.git.cache_dir`) for
 * damage: what a disk, a full file system, a crash outside our atomic writes or a hand edit can
 * leave behind, and what isomorphic-git would otherwise trip over with errors that depend on the
 * order of file names. Every `.idx` must be a whole version-2 index (size consistent with its
 * object count, its own SHA-1 trailer right) naming a `.pack` that is a whole pack (header,
 * SHA-1 trailer over its content) with the checksum the index records, at least as many objects
 * and every indexed offset inside it.
 *
 * Bounds: reads every pack once, streamed (memory stays flat whatever their size); run when the
 * mirror is opened and when a read fails, never per request. A `.pack` without its `.idx` is not
 * damage (isomorphic-git finds packs by their index; a crash between the two writes leaves one).
 * Loose objects are not checked: the mirror's fetches write packs only.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

export interface CacheDamage {
  /** Path relative to the repository (`objects/pack/pack-<sha>.idx`). */
  readonly file: string;
  readonly problem: string;
}

const IDX_MAGIC = 0xff744f63;
const HEADER_AND_FANOUT = 8 + 256 * 4;

/** Every damaged pack or index file of the repository at `gitdir`; empty when all is whole. */
export async function checkPacks(gitdir: string): Promise<CacheDamage[]> {
  const dir = join(gitdir, 'objects', 'pack');
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw err;
  });
  const damage: CacheDamage[] = [];
  for (const name of names.filter((n) => n.endsWith('.idx')).sort()) {
    const base = name.slice(0, -4);
    const problem = await checkPair(join(dir, name), join(dir, `${base}.pack`));
    if (problem !== undefined) damage.push({ file: `objects/pack/${problem.file === 'idx' ? name : `${base}.pack`}`, problem: problem.text });
  }
  return damage;
}

async function checkPair(idxPath: string, packPath: string): Promise<{ file: 'idx' | 'pack'; text: string } | undefined> {
  const idx = await readFile(idxPath);
  const index = parseIndex(idx);
  if (typeof index === 'string') return { file: 'idx', text: index };

  let size: number;
  try {
    size = (await stat(packPath)).size;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { file: 'idx', text: 'its pack file is missing' };
    throw err;
  }
  if (size === 0) return { file: 'pack', text: 'the pack is empty (0 bytes)' };
  if (size < 32) return { file: 'pack', text: `the pack is truncated (${size} bytes)` };
  const head = await readHead(packPath, 12);
  if (head.toString('latin1', 0, 4) !== 'PACK') return { file: 'pack', text: 'the pack does not start with a pack header' };
  const version = head.readUInt32BE(4);
  if (version !== 2 && version !== 3) return { file: 'pack', text: `the pack declares version ${version}` };
  const count = head.readUInt32BE(8);
  if (count < index.count) return { file: 'pack', text: `the pack declares ${count} objects, its index names ${index.count}` };
  if (index.maxOffset >= size - 20) return { file: 'pack', text: `the pack is truncated (${size} bytes; its index names an object at offset ${index.maxOffset})` };
  const { computed, trailer } = await hashPack(packPath, size);
  if (trailer !== index.packSha) {
    return { file: 'pack', text: `the pack's checksum ${trailer} is not the one its index records (${index.packSha})` };
  }
  if (computed !== trailer) return { file: 'pack', text: `the pack's content does not match its checksum (SHA-1 ${computed}, recorded ${trailer})` };
  return undefined;
}

interface IndexFacts {
  readonly count: number;
  readonly packSha: string;
  readonly maxOffset: number;
}

/** The facts of a version-2 index, or what is wrong with it. */
function parseIndex(idx: Buffer): IndexFacts | string {
  if (idx.length === 0) return 'the index is empty (0 bytes)';
  if (idx.length < HEADER_AND_FANOUT + 40) return `the index is truncated (${idx.length} bytes)`;
  if (idx.readUInt32BE(0) !== IDX_MAGIC || idx.readUInt32BE(4) !== 2) return 'the index is not a version 2 pack index';
  const count = idx.readUInt32BE(8 + 255 * 4);
  const offsetsAt = HEADER_AND_FANOUT + count * 24;
  const largeAt = offsetsAt + count * 4;
  if (idx.length < largeAt + 40) return `the index is truncated (${idx.length} bytes for ${count} objects)`;
  const own = createHash('sha1').update(idx.subarray(0, idx.length - 20)).digest('hex');
  if (own !== idx.toString('hex', idx.length - 20)) return 'the index does not match its own checksum';
  let maxOffset = 0;
  let large = 0;
  for (let i = 0; i < count; i++) {
    const small = idx.readUInt32BE(offsetsAt + i * 4);
    if ((small & 0x80000000) === 0) {
      maxOffset = Math.max(maxOffset, small);
      continue;
    }
    const at = largeAt + (small & 0x7fffffff) * 8;
    if (at + 8 > idx.length - 40) return 'the index names a 64-bit offset outside its table';
    maxOffset = Math.max(maxOffset, idx.readUInt32BE(at) * 2 ** 32 + idx.readUInt32BE(at + 4));
    large++;
  }
  if (idx.length !== largeAt + large * 8 + 40) return `the index is ${idx.length} bytes, ${largeAt + large * 8 + 40} expected for ${count} objects`;
  return { count, packSha: idx.toString('hex', idx.length - 40, idx.length - 20), maxOffset };
}

async function readHead(path: string, length: number): Promise<Buffer> {
  const handle = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buf, 0, length, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}

/** The SHA-1 of the pack's content and the trailer it records, in one streamed read. */
async function hashPack(path: string, size: number): Promise<{ computed: string; trailer: string }> {
  const hash = createHash('sha1');
  const contentEnd = size - 20;
  const tail: Buffer[] = [];
  let at = 0;
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    const contentPart = Math.max(0, Math.min(chunk.length, contentEnd - at));
    if (contentPart > 0) hash.update(chunk.subarray(0, contentPart));
    if (contentPart < chunk.length) tail.push(chunk.subarray(contentPart));
    at += chunk.length;
  }
  return { computed: hash.digest('hex'), trailer: Buffer.concat(tail).toString('hex') };
}
