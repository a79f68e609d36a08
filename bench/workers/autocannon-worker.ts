/**
 * The load generator in its own process (plain node, no loader hooks): autocannon's programmatic
 * API, one URL, fixed POST body. Prints one JSON line with the figures the report uses.
 *
 * argv[2] = JSON {url, connections, durationSec, body}
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
}

const args = JSON.parse(process.argv[2]) as { url: string; connections: number; durationSec: number; body: string };
const r = await autocannon({
  url: args.url,
  connections: args.connections,
  duration: args.durationSec,
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: args.body,
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
};
process.stdout.write(`${JSON.stringify(line)}\n`);
