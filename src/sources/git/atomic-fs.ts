/**
 * The file system handed to isomorphic-git for the mirror: node's, except that every file is
 * written to a temporary name and renamed into place. A crash (or a second vexil process sharing
 * the cache) then never leaves a half-written pack index or ref behind: readers see the old file
 * or the whole new one. Leftover temporary files are removed when the mirror is opened.
 */
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';

/** Suffix of in-flight writes; `<name>.vexil-tmp-<random>`. */
export const TEMP_MARKER = '.vexil-tmp-';

async function atomicWriteFile(file: string, data: string | Uint8Array, options?: unknown): Promise<void> {
  const temp = `${file}${TEMP_MARKER}${randomBytes(6).toString('hex')}`;
  try {
    await fsp.writeFile(temp, data, options as Parameters<typeof fsp.writeFile>[2]);
    await fsp.rename(temp, file);
  } catch (err) {
    await fsp.rm(temp, { force: true }).catch(() => {});
    throw err;
  }
}

/** An isomorphic-git `FsClient` (promise flavour). */
export const atomicFs = {
  promises: {
    readFile: fsp.readFile,
    writeFile: atomicWriteFile,
    mkdir: fsp.mkdir,
    rmdir: fsp.rmdir,
    rm: fsp.rm,
    unlink: fsp.unlink,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readdir: fsp.readdir,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  },
};
