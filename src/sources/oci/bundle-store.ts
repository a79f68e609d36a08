/**
 * The local bundle store: an OCI image layout on disk (image-spec image-layout.md), so other
 * tools (skopeo `oci:DIR:tag`, oras) can read it.
 *
 *   <dir>/oci-layout              {"imageLayoutVersion":"1.0.0"}
 *   <dir>/index.json              one manifest descriptor per name (org.opencontainers.image.ref.name)
 *   <dir>/blobs/sha256/<hex>      content-addressed blobs
 *
 * Several processes may use one store (cluster workers, `vexil bundle` beside `vexil serve`):
 * every file is written to a temp file and renamed into place, so a reader sees an old or a new
 * file, never half of one; blobs are immutable by name; index.json updates take a lock file so
 * two writers tagging different names do not lose each other's entry (a stale lock is broken).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ANNOTATION_CREATED, ANNOTATION_REF_NAME, OCI_INDEX_MEDIA_TYPE, OCI_MANIFEST_MEDIA_TYPE, isDigest, sha256Digest } from './bundle-format.js';
import type { BundleStore, Descriptor, StoredBundle } from './types.js';

interface IndexFile {
  schemaVersion: 2;
  mediaType?: string;
  manifests: Descriptor[];
  [key: string]: unknown;
}

/** A lock older than this is from a crashed writer. */
const STALE_LOCK_MS = 10_000;
const LOCK_WAIT_MS = 15_000;

export class BundleStoreError extends Error {
  override readonly name = 'BundleStoreError';
}

export async function openBundleStore(dir: string): Promise<BundleStore> {
  const blobDir = join(dir, 'blobs', 'sha256');
  const indexPath = join(dir, 'index.json');
  const layoutPath = join(dir, 'oci-layout');
  await mkdir(blobDir, { recursive: true });
  if (!(await exists(layoutPath))) await atomicWrite(layoutPath, JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  else {
    const layout = await readJson(layoutPath);
    if (typeof layout !== 'object' || layout === null || (layout as { imageLayoutVersion?: unknown }).imageLayoutVersion !== '1.0.0') {
      throw new BundleStoreError(`${layoutPath}: not an OCI image layout 1.0.0`);
    }
  }
  if (!(await exists(indexPath))) {
    await withIndexLock(indexPath, async () => {
      if (!(await exists(indexPath))) await atomicWrite(indexPath, serializeIndex(emptyIndex()));
    });
  }

  const blobPath = (digest: string) => {
    if (!isDigest(digest)) throw new BundleStoreError(`"${digest}" is not a sha256 digest`);
    return join(blobDir, digest.slice('sha256:'.length));
  };

  async function readIndex(): Promise<IndexFile> {
    const raw = await readJson(indexPath);
    if (typeof raw !== 'object' || raw === null || !Array.isArray((raw as IndexFile).manifests)) {
      throw new BundleStoreError(`${indexPath}: not an OCI image index`);
    }
    return raw as IndexFile;
  }

  async function writeBlob(bytes: Uint8Array): Promise<string> {
    const digest = sha256Digest(bytes);
    const path = blobPath(digest);
    const existing = await stat(path).catch(() => undefined);
    if (existing?.size === bytes.byteLength) return digest;
    await atomicWrite(path, bytes);
    return digest;
  }

  const store: BundleStore = {
    dir,

    async hasBlob(digest) {
      const s = await stat(blobPath(digest)).catch(() => undefined);
      return s !== undefined && s.isFile();
    },

    async readBlob(digest) {
      const path = blobPath(digest);
      let bytes: Uint8Array;
      try {
        bytes = await readFile(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new BundleStoreError(`blob ${digest} is not in the bundle store ${dir}`);
        throw err;
      }
      const actual = sha256Digest(bytes);
      if (actual !== digest) {
        // A corrupt blob would fail every later read: remove it so it is fetched again.
        await unlink(path).catch(() => undefined);
        throw new BundleStoreError(`blob ${digest} in the bundle store ${dir} is corrupt (its content hashes to ${actual}); removed`);
      }
      return bytes;
    },

    writeBlob,

    async tag(name, manifestBytes) {
      if (name === '') throw new BundleStoreError('a bundle name cannot be empty');
      let parsed: { mediaType?: unknown; artifactType?: unknown; annotations?: Record<string, unknown> };
      try {
        parsed = JSON.parse(new TextDecoder().decode(manifestBytes)) as typeof parsed;
      } catch {
        throw new BundleStoreError(`cannot tag "${name}": the manifest is not JSON`);
      }
      const digest = await writeBlob(manifestBytes);
      const created = parsed.annotations?.[ANNOTATION_CREATED];
      const descriptor: Descriptor = {
        mediaType: typeof parsed.mediaType === 'string' ? parsed.mediaType : OCI_MANIFEST_MEDIA_TYPE,
        digest,
        size: manifestBytes.byteLength,
        ...(typeof parsed.artifactType === 'string' ? { artifactType: parsed.artifactType } : {}),
        annotations: { [ANNOTATION_REF_NAME]: name, ...(typeof created === 'string' ? { [ANNOTATION_CREATED]: created } : {}) },
      };
      await withIndexLock(indexPath, async () => {
        const index = await readIndex();
        index.manifests = index.manifests.filter((m) => m.annotations?.[ANNOTATION_REF_NAME] !== name);
        index.manifests.push(descriptor);
        index.manifests.sort((a, b) => compare(a.annotations?.[ANNOTATION_REF_NAME] ?? '', b.annotations?.[ANNOTATION_REF_NAME] ?? ''));
        await atomicWrite(indexPath, serializeIndex(index));
      });
      return digest;
    },

    async resolve(name) {
      const index = await readIndex();
      return index.manifests.find((m) => m.annotations?.[ANNOTATION_REF_NAME] === name)?.digest;
    },

    async list() {
      const index = await readIndex();
      const out: StoredBundle[] = [];
      for (const m of index.manifests) {
        const name = m.annotations?.[ANNOTATION_REF_NAME];
        if (name === undefined) continue;
        const created = m.annotations?.[ANNOTATION_CREATED];
        out.push({ name, digest: m.digest, size: m.size, ...(created !== undefined ? { created } : {}) });
      }
      return out.sort((a, b) => compare(a.name, b.name));
    },
  };
  return store;
}

function emptyIndex(): IndexFile {
  return { schemaVersion: 2, mediaType: OCI_INDEX_MEDIA_TYPE, manifests: [] };
}

function serializeIndex(index: IndexFile): string {
  return `${JSON.stringify(index, null, 2)}\n`;
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

async function readJson(path: string): Promise<unknown> {
  const text = await readFile(path, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BundleStoreError(`${path}: not valid JSON`);
  }
}

/** Temp file in the same folder (same file system), fsync'd, then renamed over the target. */
async function atomicWrite(path: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(6).toString('hex')}`;
  try {
    const fh = await open(tmp, 'wx');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** In-process queue per index file, plus a lock file across processes. */
const inProcess = new Map<string, Promise<unknown>>();

async function withIndexLock<T>(indexPath: string, fn: () => Promise<T>): Promise<T> {
  const prev = inProcess.get(indexPath) ?? Promise.resolve();
  const run = prev.then(
    () => withLockFile(`${indexPath}.lock`, fn),
    () => withLockFile(`${indexPath}.lock`, fn),
  );
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  inProcess.set(indexPath, settled);
  void settled.then(() => {
    if (inProcess.get(indexPath) === settled) inProcess.delete(indexPath);
  });
  return run;
}

async function withLockFile<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + LOCK_WAIT_MS;
  let delay = 5;
  for (;;) {
    try {
      await writeFile(lockPath, `${process.pid}\n`, { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const s = await stat(lockPath).catch(() => undefined);
      if (s !== undefined && Date.now() - s.mtimeMs > STALE_LOCK_MS) {
        await unlink(lockPath).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) throw new BundleStoreError(`${lockPath} is held by another process (remove it if no vexil process is running)`);
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 100);
    }
  }
  try {
    return await fn();
  } finally {
    await unlink(lockPath).catch(() => undefined);
  }
}

/**
 * A BundleStore opened on first use: lets a synchronous config step (`vexil serve` wiring) hand
 * out a store whose folder is created only when the source first needs it. A failed open is
 * retried on the next call.
 */
export function lazyBundleStore(dir: string): BundleStore {
  let opening: Promise<BundleStore> | undefined;
  const get = () => {
    opening ??= openBundleStore(dir).catch((err: unknown) => {
      opening = undefined;
      throw err;
    });
    return opening;
  };
  return {
    dir,
    hasBlob: async (digest) => (await get()).hasBlob(digest),
    readBlob: async (digest) => (await get()).readBlob(digest),
    writeBlob: async (bytes) => (await get()).writeBlob(bytes),
    tag: async (name, bytes) => (await get()).tag(name, bytes),
    resolve: async (name) => (await get()).resolve(name),
    list: async () => (await get()).list(),
  };
}
