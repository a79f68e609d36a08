/**
 * A client snapshot request, as both HTTP paths serve it (the hot routes of hot.ts, on Koa and on
 * the fast path): which reference it reads, and what it is answered for a namespace of that
 * reference's snapshot. Keeping the decisions here keeps the two paths' answers identical.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { notFound } from '../../errors.js';
import type { Config } from '../../config/types.js';
import type { Snapshot } from '../../model/snapshot.js';
import { ifNoneMatchHits } from '../pipeline/conditional.js';
import { environmentReference, requestReference } from '../pipeline/environments.js';
import { servedSnapshot } from './served.js';

/**
 * The reference a snapshot request reads; undefined = the default reference. `pathEnvironment`
 * is the environment of the v2 path (`/client/v2/environments/{environment}/...`), undefined on
 * the v1 path.
 *
 * v1: `?reference=`, else the environment of `X-Flipt-Environment` / `X-Svc-Environment`, else
 * the default. v2: `?reference=` when given, else the path's environment; the path's environment
 * is checked even when `?reference=` overrides it (an unknown one is a misconfigured client either
 * way). Throws 404 for an unknown environment, 400 for header twins that disagree.
 */
export function clientSnapshotReference(
  pathEnvironment: string | undefined,
  query: ReadonlyMap<string, string>,
  headers: IncomingHttpHeaders,
  environments: Config['environments'],
): string | undefined {
  if (pathEnvironment === undefined) return requestReference(query, headers, environments);
  const fromEnvironment = environmentReference(environments, pathEnvironment);
  const reference = query.get('reference');
  return reference !== undefined && reference !== '' ? reference : fromEnvironment;
}

export interface ClientSnapshotAnswer {
  readonly etag: string;
  /** The request's If-None-Match names the ETag: 304 with no body. */
  readonly notModified: boolean;
  /** The document: the cached compact bytes, or indented text under `?pretty`. */
  readonly body: Buffer | string;
}

/** The answer for namespace `namespaceKey` of `snapshot`; throws 404 (in Flipt's wording) when it has none. */
export function clientSnapshotAnswer(
  snapshot: Snapshot,
  namespaceKey: string,
  ifNoneMatch: string | string[] | undefined,
  pretty: boolean,
): ClientSnapshotAnswer {
  const ns = snapshot.namespaces.get(namespaceKey);
  if (ns === undefined) throw notFound(`getting flags: namespace "${namespaceKey}" not found`);
  const { etag, body } = servedSnapshot(snapshot, ns);
  if (ifNoneMatchHits(ifNoneMatch, etag)) return { etag, notModified: true, body };
  return { etag, notModified: false, body: pretty ? JSON.stringify(JSON.parse(body.toString('utf8')), null, 2) : body };
}
