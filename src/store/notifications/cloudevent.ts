/**
 * The webhook sink's request: a CloudEvents 1.0 event in structured content mode (the HTTP
 * binding's: the whole event, attributes and `data`, is the JSON body, sent as
 * `application/cloudevents+json`), and its headers. Written here rather than by the CloudEvents SDK
 * (whose engines stop short of the Node.js versions vexil supports); the attributes are the
 * specification's: the required `specversion` ("1.0"), `id`, `source` (a URI-reference), `type`,
 * and the optional `time` (RFC 3339), `datacontenttype`, `subject`.
 *
 * The signature: `X-Vexil-Signature: sha256=<hex HMAC-SHA256 of the exact body bytes, keyed by the
 * sink's secret>`, as GitHub signs its webhooks, so receivers verify the bytes they got before
 * parsing them. The body is written once, when the event is queued, and sent as stored: every
 * attempt carries the same bytes, the same `id` and the same `X-Vexil-Delivery`.
 */
import { createHmac } from 'node:crypto';

export const CLOUDEVENTS_CONTENT_TYPE = 'application/cloudevents+json';
export const SIGNATURE_HEADER = 'x-vexil-signature';
export const DELIVERY_HEADER = 'x-vexil-delivery';

export const EVENT_TYPES = {
  served: 'io.vexil.revision.served',
  rejected: 'io.vexil.revision.rejected',
} as const;

export interface CloudEventInput {
  readonly id: string;
  /** URI-reference of what produced the event (server.public_url, or `/vexil`). */
  readonly source: string;
  readonly type: string;
  /** RFC 3339. */
  readonly time: string;
  /** The reference the event is about (absent for audit events). */
  readonly subject?: string;
  readonly data: unknown;
}

/** The structured-mode body: the event as one JSON object. */
export function cloudEventBody(e: CloudEventInput): string {
  return JSON.stringify({
    specversion: '1.0',
    id: e.id,
    source: e.source,
    type: e.type,
    time: e.time,
    ...(e.subject !== undefined ? { subject: e.subject } : {}),
    datacontenttype: 'application/json',
    data: e.data,
  });
}

/** `sha256=` and the hex HMAC-SHA256 of `body` (UTF-8 bytes) keyed by `secret`. */
export function signature(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}
