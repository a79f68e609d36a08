/**
 * The authentication store's availability as Prometheus metrics, read from the auth service when
 * scraped (no per-request work): `vexil_auth_store_available` (1 answering, 0 unavailable as this
 * process last saw it) and `vexil_auth_store_outage_accepted_total` (tokens accepted from the
 * lookup cache while the store was unavailable). No labels: nothing about a token or the database
 * address is exposed.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { StoreStatus } from '../../auth/store-health.js';

export function registerAuthStoreMetrics(registry: Registry, status: () => StoreStatus): void {
  // One app per registry normally; a second registration (a shared registry) keeps the first.
  if (registry.getSingleMetric('vexil_auth_store_available') !== undefined) return;
  new Gauge({
    name: 'vexil_auth_store_available',
    help: 'Whether the authentication store (token database) answered when last asked: 1 yes, 0 no (requests needing it answer 503).',
    registers: [registry],
    collect() {
      this.set(status().available ? 1 : 0);
    },
  });
  new Counter({
    name: 'vexil_auth_store_outage_accepted_total',
    help: 'Client tokens accepted from the lookup cache while the authentication store was unavailable (authentication.storage.postgres.outage_grace).',
    registers: [registry],
    collect() {
      this.reset();
      const n = status().graceAccepted;
      if (n > 0) this.inc(n);
    },
  });
}
