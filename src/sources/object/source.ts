/**
 * The object-store backend: the state files under a bucket prefix, as one reference.
 *
 * - `refs()` is one listing (all pages); the revision id is a hash of the sorted (key, ETag)
 *   pairs, so an unchanged bucket gives the same id and the store does nothing more.
 * - `files(rev)` reuses the listing `refs()` took for that id (no second listing) and downloads,
 *   before returning, the index file and the state files it selects whose ETag is not already
 *   held: an unchanged object is never downloaded twice, and a failed download fails the build
 *   (reported as an error, retried on the next poll) instead of rejecting the revision.
 * - Each download is pinned to the listed ETag: an object replaced between listing and download
 *   fails the build rather than mixing two versions of the state.
 * - The bytes of the current objects are kept in memory (the state's size), dropped as soon as a
 *   listing no longer shows that key with that ETag. Sizes come from the listing: an object over
 *   `maxFileSize`, or state files adding up to more than `maxStateSize`, are not downloaded (the
 *   store refuses the revision from those sizes).
 */
import { createHash } from 'node:crypto';
import { INDEX_FILE_NAMES, selectStateFiles, type StateFile } from '../../state/load.js';
import type { ObjectEntry, ObjectProvider } from './provider.js';
import type { FileSet, Revision, Source, SourceFile } from '../types.js';

export { ObjectStoreError, type ObjectEntry, type ObjectProvider } from './provider.js';

/** The only reference an object-store source has. */
export const OBJECT_REFERENCE = 'object';

export interface ObjectSourceOptions {
  readonly provider: ObjectProvider;
  /** Where the state lives, for messages (`s3://bucket/prefix`), without credentials. */
  readonly description: string;
  /** Default OBJECT_REFERENCE. */
  readonly referenceName?: string;
  /** `storage.max_file_size`: objects larger are not downloaded ahead (the store refuses them by size). */
  readonly maxFileSize: number;
  /** Downloads in flight at once (default 8). */
  readonly concurrency?: number;
  /** `storage.max_state_size`: state files adding up to more are not downloaded ahead (the store refuses them by size). */
  readonly maxStateSize: number;
}

export interface ObjectSourceStats {
  /** refs() listings made. */
  readonly listings: number;
  /** Objects downloaded. */
  readonly downloads: number;
  /** Objects whose bytes are held (the current state). */
  readonly cached: number;
}

export interface ObjectSource extends Source {
  readonly kind: 'object';
  readonly description: string;
  readonly reference: string;
  readonly provider: ObjectProvider;
  stats(): ObjectSourceStats;
}

interface Listing {
  readonly revision: Revision;
  readonly entries: readonly ObjectEntry[];
}

/** Listings kept for files(): the latest and the one before (a build may lag one poll). */
const LISTINGS_KEPT = 2;

export function createObjectSource(opts: ObjectSourceOptions): ObjectSource {
  const { provider, description } = opts;
  const reference = opts.referenceName ?? OBJECT_REFERENCE;
  const { maxFileSize, maxStateSize } = opts;
  const concurrency = Math.max(1, opts.concurrency ?? 8);
  const listings = new Map<string, Listing>();
  /** key → bytes of the object with that ETag. */
  const held = new Map<string, { etag: string; bytes: Uint8Array }>();
  let listingCount = 0;
  let downloads = 0;

  async function list(): Promise<Listing> {
    const entries = [...(await provider.list())].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    listingCount++;
    const listing: Listing = { revision: revisionOf(reference, entries), entries };
    listings.delete(listing.revision.id);
    listings.set(listing.revision.id, listing);
    while (listings.size > LISTINGS_KEPT) listings.delete(listings.keys().next().value as string);
    // Keep only the bytes of objects as they are now (a build still reading an older listing
    // pinned its bytes in files(), or downloads again pinned to the old ETag).
    const current = new Map(entries.map((e) => [e.key, e.etag]));
    for (const [key, h] of held) if (current.get(key) !== h.etag) held.delete(key);
    return listing;
  }

  async function bytesOf(e: ObjectEntry): Promise<Uint8Array> {
    const h = held.get(e.key);
    if (h !== undefined && h.etag === e.etag) return h.bytes;
    const bytes = await provider.get(e.key, e.etag, e.size);
    downloads++;
    held.set(e.key, { etag: e.etag, bytes });
    return bytes;
  }

  /** Downloads what the state needs and is not held yet; throws on the first failure. */
  async function download(entries: readonly ObjectEntry[]): Promise<void> {
    const byKey = new Map(entries.map((e) => [e.key, e]));
    let index: StateFile | undefined;
    for (const name of INDEX_FILE_NAMES) {
      const e = byKey.get(name);
      if (e === undefined) continue;
      if (e.size <= maxFileSize) index = { path: name, bytes: await bytesOf(e) };
      break;
    }
    const selected = selectStateFiles(
      entries.map((e) => e.key),
      index,
    ).paths;
    const fitting = selected.map((p) => byKey.get(p)).filter((e): e is ObjectEntry => e !== undefined && e.size <= maxFileSize);
    const stateSize = fitting.reduce((sum, e) => sum + e.size, index?.bytes.byteLength ?? 0);
    if (stateSize > maxStateSize) return;
    const todo = fitting.filter((e) => held.get(e.key)?.etag !== e.etag);
    let next = 0;
    const worker = async () => {
      while (next < todo.length) await bytesOf(todo[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, todo.length) }, worker));
  }

  return {
    kind: 'object',
    description,
    reference,
    provider,
    async refs() {
      const listing = await list();
      return new Map([[reference, listing.revision]]);
    },
    async files(rev) {
      // A revision this source did not list lately (should not happen): list again and serve what is there now.
      const listing = listings.get(rev.id) ?? (await list());
      await download(listing.entries);
      const files: SourceFile[] = listing.entries.map((e) => {
        // Pinned now: a listing made meanwhile (a request for an unknown reference) may drop it from `held`.
        const h = held.get(e.key);
        const ready = h !== undefined && h.etag === e.etag ? h.bytes : undefined;
        return {
          path: e.key,
          contentId: `${e.key}@${e.etag}`,
          size: e.size,
          bytes: () => (ready !== undefined ? Promise.resolve(ready) : bytesOf(e)),
        };
      });
      return { revision: listing.revision, files } satisfies FileSet;
    },
    stats: () => ({ listings: listingCount, downloads, cached: held.size }),
    async close() {
      held.clear();
      listings.clear();
      await provider.close?.();
    },
  };
}

/** sha256 over the sorted (key, ETag) pairs; `at` = the newest modification time listed. */
function revisionOf(ref: string, sorted: readonly ObjectEntry[]): Revision {
  const hash = createHash('sha256');
  let newest: string | undefined;
  for (const e of sorted) {
    hash.update(`${e.key}\0${e.etag}\n`);
    if (e.lastModified !== undefined && (newest === undefined || e.lastModified > newest)) newest = e.lastModified;
  }
  return { id: hash.digest('hex'), ref, ...(newest !== undefined ? { meta: { at: newest } } : {}) };
}
