/**
 * A blob of N zero bytes (gigabytes) put into a test repository in seconds: its zlib stream is
 * written directly (one deflate block of 1 MiB of zeros, fully flushed so that copies of it can
 * follow each other, ~1 KB each), wrapped as the single entry of a pack, and indexed by the real
 * `git index-pack` (which checks it and computes the blob's id). `git fast-import` or
 * `hash-object` would compress the gigabytes for minutes instead. The result is what a hostile
 * push of "a few MB of compressed zeros" leaves on a git server.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import zlib from 'node:zlib';
import { git } from './git-repo.js';

const MiB = 1024 * 1024;

/** zlib data that inflates to `size` zero bytes. */
export function zeroZlib(size: number): Buffer {
  const flushed = (n: number) => zlib.deflateRawSync(Buffer.alloc(n), { level: 9, finishFlush: zlib.constants.Z_FULL_FLUSH });
  const block = flushed(MiB);
  const parts = [Buffer.from([0x78, 0xda])]; // zlib header: deflate, best compression
  let left = size;
  for (; left >= MiB; left -= MiB) parts.push(block);
  if (left > 0) parts.push(flushed(left));
  parts.push(Buffer.from([0x03, 0x00])); // an empty final block
  // Adler-32 of n zeros: a stays 1, b adds a (1) per byte.
  const adler = Buffer.alloc(4);
  adler.writeUInt32BE((((size % 65521) << 16) | 1) >>> 0);
  parts.push(adler);
  return Buffer.concat(parts);
}

/** A pack entry header: type (3 = blob) and size as Git's little-endian 7-bit groups. */
function entryHeader(type: number, size: number): Buffer {
  const bytes = [(type << 4) | (size % 16)];
  for (let rest = Math.floor(size / 16); rest > 0; rest = Math.floor(rest / 128)) {
    bytes[bytes.length - 1]! |= 0x80;
    bytes.push(rest % 128);
  }
  return Buffer.from(bytes);
}

/** Adds a blob of `size` zero bytes to the bare repository `gitdir` (as a pack); returns its id. */
export async function addZeroBlob(gitdir: string, size: number): Promise<string> {
  const body = Buffer.concat([Buffer.from('PACK'), Buffer.from([0, 0, 0, 2, 0, 0, 0, 1]), entryHeader(3, size), zeroZlib(size)]);
  const packPath = join(gitdir, 'objects', 'pack', 'zero-blob.pack');
  writeFileSync(packPath, Buffer.concat([body, createHash('sha1').update(body).digest()]));
  await git(['--git-dir', gitdir, 'index-pack', packPath]);
  // show-index prints "<offset> <oid> (<crc>)" for each object of the index.
  const listed = await git(['--git-dir', gitdir, 'show-index'], { input: readFileSync(packPath.replace(/\.pack$/, '.idx')) });
  return listed.split(' ')[1]!;
}

/** Commits on `branch` (from its tip) the files of `blobs`: path → blob id already in the repository. */
export async function commitBlobs(gitdir: string, branch: string, blobs: Readonly<Record<string, string>>, message: string): Promise<string> {
  const indexFile = `${gitdir}.index-${branch.replace(/\W/g, '_')}.tmp`;
  const env = { GIT_INDEX_FILE: indexFile };
  const inRepo = (args: string[], opts: { input?: string } = {}) => git(['--git-dir', gitdir, ...args], { ...opts, env: { ...env, ...identity } });
  const parent = await inRepo(['rev-parse', '--verify', '-q', `refs/heads/${branch}`]).catch(() => undefined);
  if (parent !== undefined) await inRepo(['read-tree', parent]);
  for (const [path, oid] of Object.entries(blobs)) await inRepo(['update-index', '--add', '--cacheinfo', `100644,${oid},${path}`]);
  const tree = await inRepo(['write-tree']);
  const commit = await inRepo(['commit-tree', tree, ...(parent !== undefined ? ['-p', parent] : [])], { input: `${message}\n` });
  await inRepo(['update-ref', `refs/heads/${branch}`, commit]);
  return commit;
}

const identity = {
  GIT_AUTHOR_NAME: 'Mallory',
  GIT_AUTHOR_EMAIL: 'mallory@example.com',
  GIT_COMMITTER_NAME: 'Mallory',
  GIT_COMMITTER_EMAIL: 'mallory@example.com',
  GIT_AUTHOR_DATE: '1700000500 +0000',
  GIT_COMMITTER_DATE: '1700000500 +0000',
};
