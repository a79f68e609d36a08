/**
 * The bytes of the two live-update protocols. Pure: every frame is built once per state of a
 * (reference, namespace) and the same Buffer is written to each of its subscribers.
 *
 * NDJSON (Flipt v2's client stream, flipt-auth-and-clients.md §4a, §6): one line
 * `{"result":<snapshot document>}` per state. The Rust engine of Flipt's client SDKs splits the
 * body on "\n" and parses each line as JSON; a line that does not parse becomes an error its
 * evaluations then report. So nothing else may ever end a line: the heartbeat is one space,
 * which JSON allows before the next line's object.
 *
 * Server-Sent Events (WHATWG HTML §9.2): a state is an event of the default type (`message`, so
 * `EventSource.onmessage` sees it) whose `id` is the ETag (a reconnecting EventSource sends it
 * back as `Last-Event-ID`) and whose data is one line of JSON. Comments (`:` lines) say
 * "connected" and keep idle connections alive; `event: gone` says the namespace stopped being
 * served before the stream ends.
 *
 * OFREP change events (OFREP 0.3.0, ADR-0008) are Server-Sent Events of the same kind: type
 * `message` (the ADR has providers read the JSON's `type`, never the SSE event name), `id` the
 * ETag, data `{"type":"refetchEvaluation","etag":"<etag>"}`. A provider answers one by asking
 * the bulk endpoint again with `?flagConfigEtag=<etag>`. They carry no flag data: the provider
 * re-evaluates through the bulk endpoint, with its own context.
 */
import { quote } from '../../http/json-text.js';

/** The live-update protocols. `ofrep`: OFREP change events (`refetchEvaluation`), Server-Sent Events like `sse`. */
export type StreamProtocol = 'ndjson' | 'sse' | 'ofrep';

/**
 * The NDJSON stream's type: what Flipt v2's gateway sends and its OpenAPI document names for the
 * stream (`application/json`). The Rust engine reads the body whatever its type.
 */
export const NDJSON_CONTENT_TYPE = 'application/json';
export const SSE_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/** What a state event describes. */
export interface StreamState {
  readonly reference: string;
  readonly namespace: string;
  /** The namespace's snapshot ETag (client-snapshot/served.ts): equal ETags, equal state. */
  readonly etag: string;
  /** The revision of the snapshot the state was read from. */
  readonly revision: string;
}

/** `{"result":<document>}` and the newline, around the compact document bytes. */
export function ndjsonLine(document: Buffer): Buffer {
  return Buffer.concat([NDJSON_OPEN, document, NDJSON_CLOSE]);
}
const NDJSON_OPEN = Buffer.from('{"result":');
const NDJSON_CLOSE = Buffer.from('}\n');

/** JSON whitespace: the next line's parser skips it, and a proxy sees traffic. */
export const NDJSON_HEARTBEAT = Buffer.from(' ');

/**
 * `id: <etag>` and `data: {"reference","namespace","etag","revision"[,"snapshot"]}`. The ETag is
 * hex and JSON text never holds a raw newline, so each field is one line as SSE requires.
 */
export function sseStateEvent(state: StreamState, document?: Buffer): Buffer {
  const head =
    `id: ${state.etag}\ndata: {"reference":${quote(state.reference)},"namespace":${quote(state.namespace)},` +
    `"etag":"${state.etag}","revision":${quote(state.revision)}`;
  if (document === undefined) return Buffer.from(`${head}}\n\n`);
  return Buffer.concat([Buffer.from(`${head},"snapshot":`), document, SSE_EVENT_CLOSE]);
}
const SSE_EVENT_CLOSE = Buffer.from('}\n\n');

/** The last event of a stream whose namespace (or whole reference) is no longer served. */
export function sseGoneEvent(reference: string, namespace: string, message: string): Buffer {
  return Buffer.from(
    `event: gone\ndata: {"reference":${quote(reference)},"namespace":${quote(namespace)},"message":${quote(message)}}\n\n`,
  );
}

/**
 * OFREP's `refetchEvaluation`: `id: <etag>` and the ETag in the data; without an ETag (the
 * namespace is no longer served) only the type, so the provider's refetch meets the failure.
 */
export function ofrepRefetchEvent(etag?: string): Buffer {
  if (etag === undefined) return Buffer.from(`data: {"type":"refetchEvaluation"}\n\n`);
  return Buffer.from(`id: ${etag}\ndata: {"type":"refetchEvaluation","etag":"${etag}"}\n\n`);
}

/** The first bytes of every SSE stream: whether or not a state event follows, the client knows it is connected. */
export const SSE_CONNECTED = Buffer.from(': connected\n\n');

export const SSE_HEARTBEAT = Buffer.from(': heartbeat\n\n');
