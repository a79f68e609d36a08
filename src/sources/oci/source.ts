/**
 * The OCI backend: serves the bundle one registry tag (or digest) points at, as ONE reference
 * named after the tag (or the digest).
 *
 * - `refs()` is one manifest HEAD: the manifest digest is the revision, so an unchanged tag costs
 *   one request per poll and nothing is read or parsed.
 * - `files(rev)` reads the manifest by digest, downloads only the layers the bundle store lacks
 *   (each verified against its digest), then tags the bundle in the store, so a restart while the
 *   registry is down serves it (`cachedRefs()`). A file's content id is its layer digest: the
 *   store's parse cache re-parses only the layers that changed.
 * - Sizes are checked from the manifest before anything is downloaded: a config blob over
 *   MAX_BUNDLE_CONFIG_SIZE refuses the bundle (a located problem, nothing downloaded); a layer
 *   over `maxFileSize`, or layers adding up to more than `maxStateSize`, are not downloaded (the
 *   state reader refuses them from their declared sizes). The registry client never reads more
 *   bytes than a descriptor declares.
 * - Any failure throws: the snapshot store keeps serving the last good snapshot and reports it.
 */
import type { Problem } from '../../model/problem.js';
import { EMPTY_JSON_DIGEST, manifestCreated, readBundleManifest } from './bundle-format.js';
import { formatOciReference, referenceName } from './reference.js';
import { RegistryError, type BundleStore, type Descriptor, type OciReference, type RegistryClient } from './types.js';
import type { FileSet, Revision, Source, SourceFile } from '../types.js';
import type { RuleId } from '../../state/rules.js';

export interface OciSourceOptions {
  readonly reference: OciReference;
  readonly client: RegistryClient;
  readonly store: BundleStore;
  /** The name served (default: the tag, or the digest of a pinned reference). */
  readonly referenceName?: string;
  /** Layers downloaded at once (default 4). */
  readonly concurrency?: number;
  /**
   * `storage.max_file_size`: a layer the manifest says is larger is not downloaded (the store
   * reports it as a located problem from its size), and such a bundle is not tagged locally.
   */
  readonly maxFileSize: number;
  /** `storage.max_state_size`: layers adding up to more are not downloaded (the store refuses them from their sizes). */
  readonly maxStateSize: number;
}

/**
 * A bundle's config blob is `{}` (or a few hundred bytes of JSON): a manifest declaring a larger
 * one is refused before it is downloaded, whatever size it claims.
 */
export const MAX_BUNDLE_CONFIG_SIZE = 1024 * 1024;

export interface OciSource extends Source {
  readonly kind: 'oci';
  /** The reference served under. */
  readonly name: string;
  cachedRefs(): Promise<Map<string, Revision>>;
}

/** The bundle store name of a remote reference: `host[:port]/name:tag` or `host[:port]/name@digest`. */
export function bundleNameOf(ref: OciReference): string {
  const base = `${ref.registry}/${ref.repository}`;
  return ref.digest !== undefined ? `${base}@${ref.digest}` : `${base}:${ref.tag ?? 'latest'}`;
}

export function createOciSource(opts: OciSourceOptions): OciSource {
  const { reference, client, store } = opts;
  const name = opts.referenceName ?? referenceName(reference);
  const storeName = bundleNameOf(reference);
  const described = formatOciReference(reference);
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  /** Manifest digest → creation time, for revisions listed after a pull. */
  const createdOf = new Map<string, string>();

  const revision = (id: string): Revision => {
    const at = createdOf.get(id);
    return { id, ref: name, ...(at !== undefined ? { meta: { at } } : {}) };
  };

  async function manifestBytes(digest: string): Promise<Uint8Array> {
    if (await store.hasBlob(digest)) {
      try {
        return await store.readBlob(digest);
      } catch {
        // corrupt copy (removed by readBlob): fetch it again
      }
    }
    const got = await client.getManifest({ ...withoutTag(reference), digest });
    return got.bytes;
  }

  async function ensureBlob(d: Descriptor): Promise<void> {
    if (await store.hasBlob(d.digest)) return;
    if (d.digest === EMPTY_JSON_DIGEST) {
      await store.writeBlob(new TextEncoder().encode('{}'));
      return;
    }
    const bytes = await client.getBlob(withoutTag(reference), d);
    await store.writeBlob(bytes);
  }

  async function readLayer(d: Descriptor): Promise<Uint8Array> {
    try {
      return await store.readBlob(d.digest);
    } catch {
      // Removed or corrupted since the pull: fetch it again (verified by the client).
      const bytes = await client.getBlob(withoutTag(reference), d);
      await store.writeBlob(bytes);
      return bytes;
    }
  }

  return {
    kind: 'oci',
    name,

    async refs() {
      // A digest never moves: once its manifest is local there is nothing to ask the registry.
      if (reference.digest !== undefined && (await store.hasBlob(reference.digest))) {
        return new Map([[name, revision(reference.digest)]]);
      }
      const found = await client.resolve(reference);
      if (found === undefined) throw new RegistryError('not-found', `${described}: the registry has no such ${reference.digest !== undefined ? 'manifest' : 'tag'}`, 404);
      return new Map([[name, revision(found.digest)]]);
    },

    async files(rev: Revision): Promise<FileSet> {
      const bytes = await manifestBytes(rev.id);
      let read;
      try {
        read = readBundleManifest(bytes);
      } catch (err) {
        throw new Error(`${described} (${rev.id}) is not a readable bundle: ${err instanceof Error ? err.message : String(err)}`);
      }
      const config = read.manifest.config;
      if (config.size > MAX_BUNDLE_CONFIG_SIZE) return { revision: revision(rev.id), files: [], problems: [configTooLarge(config)] };
      const fits = (d: Descriptor) => d.size <= opts.maxFileSize;
      const layers = read.layers.map((l) => l.descriptor);
      const fitting = layers.filter(fits);
      const stateSize = fitting.reduce((sum, d) => sum + d.size, 0);
      const withinState = stateSize <= opts.maxStateSize;
      const needed: Descriptor[] = [config, ...(withinState ? fitting : [])];
      await inBatches(needed, concurrency, ensureBlob);
      // Tagged only once every blob is local: the store never names a bundle it cannot serve.
      if (withinState && fitting.length === layers.length) await store.tag(storeName, bytes);
      const created = manifestCreated(read.manifest);
      if (created !== undefined) createdOf.set(rev.id, created);
      const files: SourceFile[] = read.layers.map((l) => ({
        path: l.path,
        contentId: l.descriptor.digest,
        size: l.descriptor.size,
        bytes: () => readLayer(l.descriptor),
      }));
      return { revision: revision(rev.id), files };
    },

    async cachedRefs() {
      const digest = await store.resolve(storeName);
      if (digest !== undefined) {
        if (!createdOf.has(digest)) {
          const created = await store
            .readBlob(digest)
            .then((b) => manifestCreated(readBundleManifest(b).manifest))
            .catch(() => undefined);
          if (created !== undefined) createdOf.set(digest, created);
        }
        return new Map([[name, revision(digest)]]);
      }
      if (reference.digest !== undefined && (await store.hasBlob(reference.digest))) return new Map([[name, revision(reference.digest)]]);
      return new Map();
    },
  };
}

function configTooLarge(config: Descriptor): Problem {
  return {
    severity: 'error',
    rule: 'bundle.config-too-large' satisfies RuleId,
    file: '',
    line: 0,
    column: 0,
    message: `the bundle's manifest declares a config blob of ${config.size} bytes (${config.digest}), over the limit of ${MAX_BUNDLE_CONFIG_SIZE} bytes: not downloaded`,
    hint: 'push a bundle built by `vexil bundle build` or `flipt bundle build` (its config is `{}`)',
  };
}

function withoutTag(ref: OciReference): OciReference {
  const { tag: _tag, ...rest } = ref;
  return rest;
}

async function inBatches<T>(items: readonly T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(size, items.length) }, worker));
}
