/**
 * The stream hub's Prometheus series (vexil_streams_open, vexil_stream_events_total,
 * vexil_streams_closed_total), with the per-protocol children bound once so that writing an event
 * does no label lookup.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { StreamProtocol } from './frames.js';

export interface StreamMetrics {
  readonly open: Record<StreamProtocol, { inc(): void; dec(): void }>;
  readonly events: Record<StreamProtocol, { inc(): void }>;
  readonly closed: Counter<'protocol' | 'reason'>;
}

const METRIC_NAMES = ['vexil_streams_open', 'vexil_stream_events_total', 'vexil_streams_closed_total'] as const;

/** The hub's series in `registry` (a hub without one still counts, unseen). */
export function streamMetrics(registry: Registry | undefined): StreamMetrics {
  const registers = registry === undefined ? [] : [registry];
  // One hub per app and one registry per app; a second hub on a registry takes the names over.
  for (const name of METRIC_NAMES) if (registry?.getSingleMetric(name) !== undefined) registry.removeSingleMetric(name);
  const open = new Gauge({
    name: 'vexil_streams_open',
    help: 'Live-update streams open now, by protocol (ndjson: Flipt client engines; sse: Server-Sent Events; ofrep: OFREP change events).',
    labelNames: ['protocol'] as const,
    registers,
  });
  const events = new Counter({
    name: 'vexil_stream_events_total',
    help: 'States written to live-update streams (the first at connect included), by protocol.',
    labelNames: ['protocol'] as const,
    registers,
  });
  const closed = new Counter({
    name: 'vexil_streams_closed_total',
    help: 'Live-update streams ended, by protocol and reason (client, slow, unauthenticated, gone, shutdown).',
    labelNames: ['protocol', 'reason'] as const,
    registers,
  });
  // Both series from the start, at 0: a dashboard sees "no streams", not "no data".
  open.set({ protocol: 'ndjson' }, 0);
  open.set({ protocol: 'sse' }, 0);
  open.set({ protocol: 'ofrep' }, 0);
  return {
    // Bound once: the per-event path does no label lookup.
    open: { ndjson: open.labels('ndjson'), sse: open.labels('sse'), ofrep: open.labels('ofrep') },
    events: { ndjson: events.labels('ndjson'), sse: events.labels('sse'), ofrep: events.labels('ofrep') },
    closed,
  };
}
