/**
 * The `eventStreams` of an OFREP bulk answer (OFREP 0.3.0, ADR-0008): where an OpenFeature
 * provider listens for `refetchEvaluation` events of the namespace it evaluates, so it refetches
 * when the state changes instead of polling.
 *
 *   [{"type":"sse","endpoint":{"requestUri":"/ofrep/v1/namespaces/<ns>/events?reference=<ref>&since=<etag>"},
 *     "inactivityDelaySec":<n>}]
 *
 * - `endpoint` without `origin`: the provider connects to its own OFREP base URL's origin, the
 *   server it evaluates against, so nothing here depends on Host or forwarding headers.
 * - The URL carries no credential: the stream authenticates as every stream does (cookie, or an
 *   `Authorization` header where the client can send one). `reference` is there because an
 *   EventSource cannot send the reference header the evaluation used; `since` is the namespace's
 *   ETag the answer was made from (the stream's first event then comes only if the state has
 *   moved on since). Both are public facts of the request, not secrets.
 * - `inactivityDelaySec`: `server.stream_inactivity_delay` in whole seconds (at least 1, as the
 *   spec requires): how long a hidden tab keeps its stream before closing it; the provider
 *   reconnects and refetches when the tab is shown again.
 * - Absent when streaming is off (`server.max_streams` 0), and for a browser's request (it has an
 *   `Origin` header) that authenticated with an `Authorization` header: the browser's EventSource
 *   cannot send that header, so its stream would only ever be refused (401), and the provider
 *   would retry it forever. Without `eventStreams` the provider falls back to what it is
 *   configured to do (polling, or refetching on context changes only).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { quote } from '../../http/json-text.js';

/** The stream's route (registered in streams/routes.ts, beside the other streams). */
export const OFREP_EVENTS_ROUTE = '/ofrep/v1/namespaces/:namespace/events';

export interface EventStreamsOptions {
  /** The reference the request named (header, query or environment); undefined: the default. */
  readonly reference: string | undefined;
  readonly namespace: string;
  /** The namespace's ETag (client-snapshot/served.ts snapshotEtag) of the answer. */
  readonly etag: string;
  /** `server.stream_inactivity_delay`, ms. */
  readonly inactivityDelayMs: number;
}

/**
 * Whether a client that made this request can open the stream: false for a browser (an `Origin`
 * header) whose request was authenticated by its `Authorization` header.
 */
export function streamReachable(headers: IncomingHttpHeaders, authenticated: boolean): boolean {
  return !(authenticated && headers.authorization !== undefined && headers.origin !== undefined);
}

/** The path and query of the namespace's event stream. */
export function eventsRequestUri(opts: Pick<EventStreamsOptions, 'reference' | 'namespace' | 'etag'>): string {
  const query = new URLSearchParams();
  if (opts.reference !== undefined) query.set('reference', opts.reference);
  query.set('since', opts.etag);
  return `/ofrep/v1/namespaces/${encodeURIComponent(opts.namespace)}/events?${query.toString()}`;
}

/** The `eventStreams` array as JSON text. */
export function eventStreamsText(opts: EventStreamsOptions): string {
  const seconds = Math.max(1, Math.round(opts.inactivityDelayMs / 1000));
  return `[{"type":"sse","endpoint":{"requestUri":${quote(eventsRequestUri(opts))}},"inactivityDelaySec":${seconds}}]`;
}
