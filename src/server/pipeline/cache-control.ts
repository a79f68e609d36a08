/**
 * `Cache-Control` of successful snapshot reads, so a CDN or proxy in front of vexil can help:
 *
 * - A read whose URL names a pinned commit (`?reference=<commit id>`, store.isPinned) reads content
 *   that never changes: `public, max-age=31536000, immutable` (a year, the longest lifetime caches
 *   honour), or `private, ...` when the request presented a credential, which a shared cache must
 *   not reuse for other callers. Only the URL counts: a commit reached through an environment
 *   (a header, or the v2 path's environment name) can be remapped by configuration, so the same
 *   URL would later mean other content.
 * - A client snapshot of a branch, tag or environment: `no-cache` with its ETag, so a cache stores
 *   it but revalidates each time, and vexil answers 304 while the namespace is unchanged.
 * - Other reads of a moving reference get no header (the management API: clients read it rarely).
 */
import type { SnapshotStore } from '../../store/types.js';

export const IMMUTABLE_PUBLIC = 'public, max-age=31536000, immutable';
export const IMMUTABLE_PRIVATE = 'private, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

/**
 * The header for a successful read; `revalidate`: what a read of a moving reference gets
 * (undefined: no header).
 */
export function readCacheControl(
  store: SnapshotStore,
  query: ReadonlyMap<string, string>,
  credentialed: boolean,
  revalidate: string | undefined,
): string | undefined {
  const reference = query.get('reference');
  if (reference !== undefined && reference !== '' && store.isPinned(reference)) return credentialed ? IMMUTABLE_PRIVATE : IMMUTABLE_PUBLIC;
  return revalidate;
}
