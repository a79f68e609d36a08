/**
 * The ETag of an OFREP bulk answer, so a polling client gets 304 while nothing it would see
 * changed (the OFREP spec's `If-None-Match` on bulk evaluation).
 *
 * A bulk answer is a function of the namespace's content as served from a reference, and of the
 * request: its context (the entity id is in it, as `targetingKey`) and the flags it names. So the
 * ETag is the SHA-1 of the namespace's client-snapshot ETag (client-snapshot/served.ts: reference
 * and content; it stays the same across reloads that leave the namespace unchanged) and of the
 * request in a canonical form (context keys sorted). Computing it needs no evaluation: a 304 costs
 * a hash of the request. A client that changes its context, its flag list, its namespace or its
 * reference never gets a 304 for the old answer.
 *
 * Sent quoted, as HTTP writes entity tags (If-None-Match matching, pipeline/conditional.ts, accepts the
 * quoted, weak and bare forms alike).
 */
import { hash } from 'node:crypto';
import type { Namespace, Snapshot } from '../../model/snapshot.js';
import { snapshotEtag } from '../client-snapshot/served.js';
import type { OfrepBulkRequest } from './request.js';

export function bulkEtag(snapshot: Snapshot, ns: Namespace, req: OfrepBulkRequest): string {
  const keys = Object.keys(req.context).sort();
  const context = keys.map((k) => [k, req.context[k]]);
  const canonical = JSON.stringify([snapshotEtag(snapshot.reference, ns), req.flags ?? null, context]);
  return `"${hash('sha1', canonical, 'hex')}"`;
}
