/**
 * Prometheus metrics of one app instance, in their own registry (not prom-client's global one,
 * so several apps can live in one process, e.g. in tests).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { SnapshotStore } from '../store/types.js';

export interface ServerMetrics {
  readonly registry: Registry;
  observeRequest(labels: { method: string; route: string; status: number }, seconds: number): void;
  countEvaluation(labels: { namespace: string; flag: string; type: string; reason: string }): void;
  /** Stop listening to the store. */
  dispose(): void;
}

export function createServerMetrics(store: SnapshotStore, opts: { defaultMetrics?: boolean } = {}): ServerMetrics {
  const registry = new Registry();
  if (opts.defaultMetrics !== false) collectDefaultMetrics({ register: registry });

  const requestDuration = new Histogram({
    name: 'vexil_http_request_duration_seconds',
    help: 'HTTP request latency by method, matched route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const evaluations = new Counter({
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

  const unsubscribe = store.subscribe((event) => {
    switch (event.type) {
      case 'swap':
        reloads.inc({ reference: event.reference });
        break;
      case 'rejected':
        failures.inc({ reference: event.reference, kind: 'rejected' });
        break;
      case 'error':
        failures.inc({ reference: event.reference, kind: 'error' });
        break;
    }
  });

  // Labelled children, kept per label set: prom-client hashes the label object on every
  // observe()/inc(), which showed in the request profile. The label sets are bounded (routes x
  // statuses; namespaces x flags x reasons of the served state), as the series themselves are.
  type Observer = { observe(v: number): void };
  type Incrementer = { inc(): void };
  const requestChildren = new Map<string, Observer>();
  const evaluationChildren = new Map<string, Incrementer>();

  return {
    registry,
    observeRequest: (labels, seconds) => {
      const key = `${labels.method} ${labels.status} ${labels.route}`;
      let child = requestChildren.get(key);
      if (child === undefined) {
        child = requestDuration.labels({ method: labels.method, route: labels.route, status: String(labels.status) });
        requestChildren.set(key, child);
      }
      child.observe(seconds);
    },
    countEvaluation: (labels) => {
      const key = `${labels.namespace}\u0000${labels.flag}\u0000${labels.type}\u0000${labels.reason}`;
      let child = evaluationChildren.get(key);
      if (child === undefined) {
        child = evaluations.labels({ namespace: labels.namespace, flag: labels.flag, type: labels.type, reason: labels.reason });
        evaluationChildren.set(key, child);
      }
      child.inc();
    },
    dispose: unsubscribe,
  };
}
