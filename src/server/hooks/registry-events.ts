/**
 * A CNCF distribution registry's notification (`application/vnd.docker.distribution.events.v1+json`):
 * an envelope `{"events": [...]}` whose events carry `id`, `action` (push, pull, delete, mount)
 * and `target` (`repository`, `tag`, `digest`, `mediaType`). The registry signs nothing: it sends
 * the headers its `notifications.endpoints` entry configures, so the delivery is authenticated by
 * `Authorization: Bearer <token>` compared in constant time.
 *
 * Only a push of the served tag of the served repository moves what vexil serves (blob pushes and
 * manifests pushed by digest do not move the tag; a reference pinned to a digest never moves);
 * every other event is acknowledged and ignored. The delivery id is the first such push event's
 * id: the registry retries an envelope with the same events.
 */
import { invalidArgument } from '../../errors.js';
import { asJsonObject, parseJsonBytes } from '../../http/body.js';
import type { Delivery, IncomingHeaders } from './request.js';
import { badSignature } from './request.js';
import { singleHeader, tokenMatches } from './signature.js';

/** What the OCI backend serves: `storage.oci.repository` parsed. */
export interface ServedRepository {
  readonly repository: string;
  /** Undefined when the reference is pinned to a digest. */
  readonly tag?: string;
}

function bearer(headers: IncomingHeaders): string | undefined {
  const value = singleHeader(headers['authorization']);
  const m = value !== undefined ? /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(value) : null;
  return m?.[1];
}

const asObject = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

export function registryDelivery(token: Buffer, headers: IncomingHeaders, body: Buffer, served: ServedRepository): Delivery {
  if (!tokenMatches(token, bearer(headers))) throw badSignature('Authorization');
  const events = asJsonObject(parseJsonBytes(body)).events;
  if (!Array.isArray(events)) throw invalidArgument('invalid notification: "events" must be an array');
  let matched: { id?: string } | undefined;
  events.forEach((item, i) => {
    const event = asObject(item);
    const target = asObject(event?.target);
    if (event === undefined || target === undefined || typeof event.action !== 'string') {
      throw invalidArgument(`invalid notification: events[${i}] must be an object with "action" and "target"`);
    }
    const tag = target.tag;
    if (
      matched === undefined &&
      event.action === 'push' &&
      target.repository === served.repository &&
      served.tag !== undefined &&
      typeof tag === 'string' &&
      tag === served.tag
    ) {
      matched = typeof event.id === 'string' && event.id !== '' && event.id.length <= 128 ? { id: event.id } : {};
    }
  });
  if (matched === undefined) {
    return { event: { kind: 'ignored', reason: `no push of ${served.repository}${served.tag !== undefined ? `:${served.tag}` : ''} in the notification` } };
  }
  return { ...(matched.id !== undefined ? { id: matched.id } : {}), event: { kind: 'push' } };
}
