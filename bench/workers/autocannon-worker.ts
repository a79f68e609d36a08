/**
 * The load generator in its own process (plain node, no loader hooks): autocannon's programmatic
 * API, one URL, the same request on every connection (default: POST of `body` as JSON). Prints one
 * JSON line with the figures the report uses.
 *
 * argv[2] = JSON AutocannonArgs
 */
import { createRequire } from 'node:module';

interface Histogram {
  average: number;
  mean: number;
  p50: number;
  p99: number;
  total: number;
}
interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  throughput: Histogram;
  errors: number;
  timeouts: number;
  non2xx: number;
  duration: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;

// autocannon ships no type declarations; it is CommonJS, so require it with a local type.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

export interface AutocannonLine {
  url: string;
  reqPerSec: number;
  totalRequests: number;
  p50Ms: number;
  p99Ms: number;
  avgLatencyMs: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  durationSec: number;
  /** Answers per HTTP status (autocannon counts a 304 among the non-2xx). */
  statusCounts: Record<string, number>;
}

export interface AutocannonArgs {
  url: string;
  connections: number;
  durationSec: number;
  /** Default POST. */
  method?: string;
  /** Default (without `method`): `content-type: application/json`. */
  headers?: Record<string, string>;
  body?: string;
}

const args = JSON.parse(process.argv[2]) as AutocannonArgs;
const r = await autocannon({
  url: args.url,
  connections: args.connections,
  duration: args.durationSec,
  method: args.method ?? 'POST',
  headers: args.headers ?? (args.method === undefined ? { 'content-type': 'application/json' } : {}),
  ...(args.body !== undefined ? { body: args.body } : {}),
});
const line: AutocannonLine = {
  url: args.url,
  reqPerSec: r.requests.average,
  totalRequests: r.requests.total,
  p50Ms: r.latency.p50,
  p99Ms: r.latency.p99,
  avgLatencyMs: r.latency.average,
  non2xx: r.non2xx,
  errors: r.errors,
  timeouts: r.timeouts,
  durationSec: r.duration,
  statusCounts: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([status, { count }]) => [status, count])),
};
process.stdout.write(`${JSON.stringify(line)}\n`);
