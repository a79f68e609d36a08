/**
 * Prometheus metrics of one app instance, in their own registry (not prom-client's global one,
 * so several apps can live in one process, e.g. in tests).
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { SnapshotStore } from '../../store/types.js';
import { LabelledCounter, LabelledHistogram, type CounterSeries, type HistogramSeries } from './labelled-metrics.js';

export type { CounterSeries, HistogramSeries } from './labelled-metrics.js';

/**
 * The `reference` label of the snapshot counters once the store has dropped a reference (idle, or
 * gone from the source): its counts move here and its own series go, so the series are as many
 * as the references kept, whatever names requests make the store build over time. `~` cannot
 * appear in a Git reference name (nor an OCI tag), so no real reference is ever labelled so.
 */
export const OTHER_REFERENCE = '~other';

export interface ServerMetrics {
  readonly registry: Registry;
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  countEvaluation(labels: { namespace: string; flag: string; type: string; reason: string }): void;
  /** The series observeRequest would observe for these labels (callers may keep it). */
  requestSeries(labels: { method: string; route: string; status: number }): HistogramSeries;
  /** The series countEvaluation would count for these labels (callers may keep it). */
  evaluationSeries(labels: { namespace: string; flag: string; type: string; reason: string }): CounterSeries;
  /** Stop listening to the store. */
  dispose(): void;
}

export function createServerMetrics(store: SnapshotStore, opts: { defaultMetrics?: boolean } = {}): ServerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  const requestDuration = new LabelledHistogram({
    name: 'vexil_http_request_duration_seconds',
    help: 'HTTP request latency by method, matched route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const evaluations = new LabelledCounter({
    name: 'vexil_evaluations_total',
    help: 'Flag evaluations by namespace, flag, type (variant, boolean, error) and reason.',
    labelNames: ['namespace', 'flag', 'type', 'reason'] as const,
    registers: [registry],
  });
  const reloads = new Counter({
    name: 'vexil_snapshot_reloads_total',
    help: 'Snapshots swapped in, by reference.',
    labelNames: ['reference'] as const,
    registers: [registry],
  });
  const failures = new Counter({
    name: 'vexil_snapshot_reload_failures_total',
    help: 'Reloads that kept the previous snapshot, by reference and kind (rejected: invalid state; error: backend failure).',
    labelNames: ['reference', 'kind'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'vexil_snapshot_age_seconds',
    help: 'Seconds since the served snapshot of each reference was loaded.',
    labelNames: ['reference'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const now = Date.now();
      for (const s of store.status()) {
        if (s.loadedAt === undefined) continue;
        const at = Date.parse(s.loadedAt);
        if (Number.isFinite(at)) this.set({ reference: s.reference }, Math.max(0, (now - at) / 1000));
      }
    },
  });

  if (store.coordination !== undefined) {
    const coordination = store.coordination.bind(store);
    new Gauge({
      name: 'vexil_coordination_healthy',
      help: 'cluster.coordination: 1 while the engine answers, 0 while this replica polls the source on its own.',
      registers: [registry],
      collect() {
        this.set(coordination().healthy ? 1 : 0);
      },
    });
    new Gauge({
      name: 'vexil_coordination_role',
      help: 'cluster.coordination: 1 for the role this replica has now (leader, follower or standalone), 0 for the others.',
      labelNames: ['role'] as const,
      registers: [registry],
      collect() {
        const now = coordination().role;
        for (const role of ['leader', 'follower', 'standalone'] as const) this.set({ role }, role === now ? 1 : 0);
      },
    });
  }

  // What each kept reference has counted, to move it under OTHER_REFERENCE when it is dropped.
  const counts = new Map<string, { reloads: number; rejected: number; error: number }>();
  const countsOf = (reference: string) => {
    let c = counts.get(reference);
    if (c === undefined) counts.set(reference, (c = { reloads: 0, rejected: 0, error: 0 }));
    return c;
  };
  const fold = (reference: string) => {
    const c = counts.get(reference);
    if (c === undefined) return;
    counts.delete(reference);
    if (c.reloads > 0) {
      reloads.remove({ reference });
      reloads.inc({ reference: OTHER_REFERENCE }, c.reloads);
    }
    for (const kind of ['rejected', 'error'] as const) {
      if (c[kind] === 0) continue;
      failures.remove({ reference, kind });
      failures.inc({ reference: OTHER_REFERENCE, kind }, c[kind]);
    }
  };

  const unsubscribe = store.subscribe((event) => {
    switch (event.type) {
      case 'swap':
        reloads.inc({ reference: event.reference });
        countsOf(event.reference).reloads++;
        break;
      case 'rejected':
      case 'error': {
        const kind = event.type;
        failures.inc({ reference: event.reference, kind });
        countsOf(event.reference)[kind]++;
        break;
      }
      case 'dropped':
        fold(event.reference);
        break;
    }
  });

  // One series object per label set, found through nested maps keyed by the label values
  // themselves: those strings (route patterns, flag keys, reasons) are mostly the same string
  // objects each time, whose hashes V8 keeps, where a joined key would be a new string to build
  // and hash per request. The request metrics are the only per-request work here
  // (labelled-metrics.ts says why they are not prom-client's own). The label sets are bounded
  // (routes x statuses x methods; namespaces x flags x reasons of the served state), as the
  // series themselves are.
  const requestSeries = new Map<string, Map<number, Map<string, HistogramSeries>>>();
  const evaluationSeries = new Map<string, Map<string, Map<string, Map<string, CounterSeries>>>>();

  const requestSeriesOf = (labels: { method: string; route: string; status: number }): HistogramSeries => {
    let byStatus = requestSeries.get(labels.route);
    if (byStatus === undefined) requestSeries.set(labels.route, (byStatus = new Map()));
    let byMethod = byStatus.get(labels.status);
    if (byMethod === undefined) byStatus.set(labels.status, (byMethod = new Map()));
    let series = byMethod.get(labels.method);
    if (series === undefined) {
      series = requestDuration.series({ method: labels.method, route: labels.route, status: String(labels.status) });
      byMethod.set(labels.method, series);
    }
    return series;
  };
  const evaluationSeriesOf = (labels: { namespace: string; flag: string; type: string; reason: string }): CounterSeries => {
    let byFlag = evaluationSeries.get(labels.namespace);
    if (byFlag === undefined) evaluationSeries.set(labels.namespace, (byFlag = new Map()));
    let byType = byFlag.get(labels.flag);
    if (byType === undefined) byFlag.set(labels.flag, (byType = new Map()));
    let byReason = byType.get(labels.type);
    if (byReason === undefined) byType.set(labels.type, (byReason = new Map()));
    let series = byReason.get(labels.reason);
    if (series === undefined) {
      series = evaluations.series({ namespace: labels.namespace, flag: labels.flag, type: labels.type, reason: labels.reason });
      byReason.set(labels.reason, series);
    }
    return series;
  };

  return {
    registry,
    observeRequest: (labels, seconds) => requestSeriesOf(labels).observe(seconds),
    countEvaluation: (labels) => evaluationSeriesOf(labels).inc(),
    requestSeries: requestSeriesOf,
    evaluationSeries: evaluationSeriesOf,
    dispose: unsubscribe,
  };
}
