/**
 * `cluster.coordination.*` into an engine and the coordinator's timings. Leadership is asked for
 * (or renewed) five times per poll interval, between 200 ms and 10 s apart, and a Redis lease lasts
 * three of those steps, so a leader that dies is replaced within one poll interval: at once on
 * PostgreSQL (its session's lock goes with it), within the lease and one step on Redis.
 */
import type { CoordinationConfig } from '../../config/types.js';
import type { CoordinationEngine } from './engine.js';
import { createPostgresEngine } from './postgres-engine.js';
import { createRedisEngine } from './redis-engine.js';

export interface CoordinationSetup {
  readonly engine: CoordinationEngine;
  readonly tickMs: number;
  readonly backstopMs: number;
  readonly maxLagMs?: number;
}

/** Undefined when coordination is off (type none). */
export function coordinationFromConfig(config: CoordinationConfig, pollIntervalMs: number | undefined): CoordinationSetup | undefined {
  if (config.type === 'none') return undefined;
  // The config check refuses coordination for storage that is not polled; this only guards other callers.
  if (pollIntervalMs === undefined) throw new Error(`cluster.coordination.type ${config.type} needs a polled storage backend`);
  const tickMs = Math.min(10_000, Math.max(200, Math.round(pollIntervalMs / 5)));
  const common = { tickMs, backstopMs: config.backstop_interval, ...(config.max_lag !== undefined ? { maxLagMs: config.max_lag } : {}) };
  if (config.type === 'postgres') {
    return { engine: createPostgresEngine({ url: requireUrl(config.postgres.url, 'postgres') }), ...common };
  }
  return { engine: createRedisEngine({ url: requireUrl(config.redis.url, 'redis'), leaseMs: 3 * tickMs }), ...common };
}

function requireUrl(url: string | undefined, type: string): string {
  // The config check refuses a missing URL at start; this only guards other callers.
  if (url === undefined) throw new Error(`cluster.coordination.${type}.url is required when cluster.coordination.type is ${type}`);
  return url;
}
