/**
 * The client snapshot as served: the document's bytes and its ETag, made once per snapshot and
 * namespace (on the first request) and kept with the snapshot, so that every later request is a
 * lookup and a write.
 *
 * The ETag is 40 lower-case hex characters without quotes, as Flipt sends it (its clients compare
 * the header text exactly). It is the SHA-1 of the reference name and of the namespace's content
 * (the document without its build timestamps), so:
 * - two references never share an ETag, even for equal content (Flipt's ignores the reference,
 *   so a client switching branches can get a false 304);
 * - a namespace whose content did not change keeps its ETag across reloads (another namespace
 *   edited, a new commit touching other files), across restarts, and across the workers of
 *   `server.workers` > 1, which each build their own snapshots: clients keep getting 304s.
 * The body carries the snapshot's build time in createdAt/updatedAt (as the management API
 * does); clients do not read them, so a 304 across a rebuild loses nothing.
 */
import { hash } from 'node:crypto';
import type { Namespace, Snapshot } from '../../model/snapshot.js';
import { snapshotDocumentText } from './document.js';

export interface ServedSnapshot {
  readonly etag: string;
  /** Compact JSON. */
  readonly body: Buffer;
}

/**
 * SHA-1 of the content, per namespace object: the build cache shares an unchanged namespace's
 * object between snapshots of one reference and across references (state/build.ts), so the
 * content is serialised and hashed once for all of them.
 */
const contentDigests = new WeakMap<Namespace, string>();
const served = new WeakMap<Snapshot, Map<string, ServedSnapshot>>();

function contentDigest(ns: Namespace): string {
  let digest = contentDigests.get(ns);
  if (digest === undefined) {
    digest = hash('sha1', snapshotDocumentText(ns), 'hex');
    contentDigests.set(ns, digest);
  }
  return digest;
}

/** The ETag of `ns` as served from `reference`. */
export function snapshotEtag(reference: string, ns: Namespace): string {
  // The digest has a fixed length at the end, so no two (reference, digest) pairs give one text.
  return hash('sha1', `${reference}\u0000${contentDigest(ns)}`, 'hex');
}

/** The served form of namespace `ns` of `snapshot` (`ns` must be one of its namespaces). */
export function servedSnapshot(snapshot: Snapshot, ns: Namespace): ServedSnapshot {
  let byNamespace = served.get(snapshot);
  if (byNamespace === undefined) {
    byNamespace = new Map();
    served.set(snapshot, byNamespace);
  }
  let entry = byNamespace.get(ns.key);
  if (entry === undefined) {
    entry = { etag: snapshotEtag(snapshot.reference, ns), body: Buffer.from(snapshotDocumentText(ns, snapshot.builtAt)) };
    byNamespace.set(ns.key, entry);
  }
  return entry;
}
