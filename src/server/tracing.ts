/**
 * The process's OpenTelemetry tracing (`tracing.*`, docs/tracing.md): the SDK (@opentelemetry/sdk-node)
 * with one OTLP/HTTP exporter (JSON, or protobuf when OTEL_EXPORTER_OTLP_PROTOCOL says http/protobuf) behind a batch span processor, a parent-based ratio sampler,
 * and the W3C trace-context propagator; no auto-instrumentation (the server makes its own spans,
 * pipeline/request-span.ts), and a context manager that follows synchronous calls only
 * (sync-context.ts). Off (`tracing.enabled` false): nothing is loaded or registered and
 * `startTracing` returns undefined, so the server is built without a tracer.
 *
 * Bounds, whatever the collector does: spans wait in the processor's queue (OTEL_BSP_MAX_QUEUE_SIZE,
 * 2048 by the SDK's default) and the exporter sends at most its concurrency limit of requests at once,
 * each bounded by OTEL_EXPORTER_OTLP_TIMEOUT (the SDK's 10 s by default); a span that finds the queue
 * full, or whose export fails, is dropped and counted in `vexil_tracing_spans_dropped_total`
 * {reason="queue_full"|"export_failed"}. Requests never wait on any of it: ending a span is a push
 * onto the queue. `shutdown()` flushes what is queued for at most SHUTDOWN_FLUSH_MS, then lets go.
 *
 * Standard variables: OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT when `tracing.otlp.endpoint` is unset,
 * OTEL_EXPORTER_OTLP_(TRACES_)HEADERS beside `tracing.otlp.headers` (the config's win on a clash),
 * OTEL_EXPORTER_OTLP_TIMEOUT and _COMPRESSION, OTEL_SERVICE_NAME over `tracing.service_name`,
 * OTEL_TRACES_SAMPLER(_ARG) instead of `tracing.sampling_ratio`, OTEL_RESOURCE_ATTRIBUTES.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import type { core as SdkCore, tracing as SdkTracing } from '@opentelemetry/sdk-node';
import type { Counter, Registry } from 'prom-client';
import client from 'prom-client';
import type { Logger } from 'pino';
import type { TracingConfig } from '../config/types.js';
import { VERSION } from '../version.js';
import { PRESAMPLED, type RequestTracing } from './pipeline/request-span.js';
import { SyncContextManager } from './sync-context.js';

/** How long shutdown waits for queued spans to be exported. */
export const SHUTDOWN_FLUSH_MS = 3000;

export interface Tracing {
  /** The tracer the server's spans come from, and how requests are sampled (pipeline/request-span.ts). */
  readonly requests: RequestTracing;
  /** Adds `vexil_tracing_spans_dropped_total` to a metrics registry (the server's). */
  registerMetrics(registry: Registry): void;
  /** Flushes (bounded) and stops the SDK, and unregisters its global tracer, context and propagator. */
  shutdown(): Promise<void>;
}

export interface StartTracingOptions {
  readonly config: TracingConfig;
  readonly logger: Pick<Logger, 'warn' | 'info'>;
  /** The environment the OTEL_* variables are read from (default: process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

function positiveInt(text: string | undefined): number | undefined {
  const n = text === undefined ? NaN : Number(text);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}


/**
 * OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL: `http/json` (vexil's
 * default when neither is set) or `http/protobuf`; anything else (`grpc`) is refused before
 * anything starts: vexil exports over OTLP/HTTP only.
 */
function exportProtocol(env: NodeJS.ProcessEnv): 'http/json' | 'http/protobuf' {
  const name = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL !== undefined ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL';
  const value = (env[name] ?? '').trim();
  if (value === '' || value === 'http/json') return 'http/json';
  if (value === 'http/protobuf') return 'http/protobuf';
  throw new Error(`${name}=${JSON.stringify(value.slice(0, 64))}: vexil exports traces over OTLP/HTTP, as http/json or http/protobuf`);
}

export async function startTracing(opts: StartTracingOptions): Promise<Tracing | undefined> {
  const { config, logger } = opts;
  if (!config.enabled) return undefined;
  const env = opts.env ?? process.env;
  const protocol = exportProtocol(env);
  const [{ NodeSDK, tracing, core }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    protocol === 'http/protobuf' ? import('@opentelemetry/exporter-trace-otlp-proto') : import('@opentelemetry/exporter-trace-otlp-http'),
  ]);

  const drops = new client.Counter({
    name: 'vexil_tracing_spans_dropped_total',
    help: 'Spans not exported: the export queue was full, or the export failed (collector down, refused, timed out).',
    labelNames: ['reason'] as const,
    registers: [],
  });
  drops.inc({ reason: 'queue_full' }, 0);
  drops.inc({ reason: 'export_failed' }, 0);

  const exporter = new OTLPTraceExporter({
    ...(config.otlp.endpoint !== undefined ? { url: `${config.otlp.endpoint.replace(/\/+$/, '')}/v1/traces` } : {}),
    headers: config.otlp.headers,
  });
  const maxQueueSize = positiveInt(env.OTEL_BSP_MAX_QUEUE_SIZE) ?? 2048;
  const scheduledDelayMillis = positiveInt(env.OTEL_BSP_SCHEDULE_DELAY);
  // Spans in the batch processor's queue, counted as it counts them: + on a sampled end it keeps,
  // - when it hands a batch to the exporter. A sampled end that finds it full is a drop.
  let queued = 0;
  const counting: SdkTracing.SpanExporter = {
    export(spans: SdkTracing.ReadableSpan[], done: (r: SdkCore.ExportResult) => void) {
      queued -= spans.length;
      exporter.export(spans, (result) => {
        if (result.code !== core.ExportResultCode.SUCCESS) drops.inc({ reason: 'export_failed' }, spans.length);
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };
  const batch = new tracing.BatchSpanProcessor(counting, {
    maxQueueSize,
    ...(scheduledDelayMillis !== undefined ? { scheduledDelayMillis } : {}),
  });
  let stopped = false;
  const processor: SdkTracing.SpanProcessor = {
    onStart: (span, parent) => batch.onStart(span, parent),
    onEnd(span) {
      if (!stopped && (span.spanContext().traceFlags & 1) === 1) {
        if (queued >= maxQueueSize) drops.inc({ reason: 'queue_full' });
        else queued++;
      }
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
  };

  // Parent-based, roots by the trace id's ratio; a request span whose draw was made already
  // (PRESAMPLED, pipeline/request-span.ts) is recorded without a second draw.
  const ratioSampler = new tracing.ParentBasedSampler({ root: new tracing.TraceIdRatioBasedSampler(config.sampling_ratio) });
  const sampler: SdkTracing.Sampler = {
    shouldSample: (ctx, traceId, name, kind, attributes, links) =>
      ctx.getValue(PRESAMPLED) === true
        ? { decision: tracing.SamplingDecision.RECORD_AND_SAMPLED }
        : ratioSampler.shouldSample(ctx, traceId, name, kind, attributes, links),
    toString: () => `PresampledOr{${ratioSampler.toString()}}`,
  };
  const ownSampler = !env.OTEL_TRACES_SAMPLER;
  const sdk = new NodeSDK({
    ...(env.OTEL_SERVICE_NAME ? {} : { serviceName: config.service_name }),
    ...(ownSampler ? { sampler } : {}),
    spanProcessors: [processor],
    // Context follows synchronous calls only (sync-context.ts: AsyncLocalStorage's hooks cost every request on Node 20).
    contextManager: new SyncContextManager(),
    // Traces only: vexil's metrics are Prometheus' (/metrics) and its logs pino's, so the SDK's
    // metric reader and log exporter (on by default, both OTLP) are not made.
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [],
  });
  sdk.start();
  logger.info(
    { endpoint: config.otlp.endpoint ?? env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? '(SDK default)', samplingRatio: config.sampling_ratio },
    'tracing on: exporting spans over OTLP/HTTP',
  );
  let shutting: Promise<void> | undefined;
  return {
    requests: { tracer: trace.getTracer('vexil', VERSION), rootRatio: ownSampler ? config.sampling_ratio : undefined },
    registerMetrics(registry) {
      registry.registerMetric(drops as Counter<'reason'>);
    },
    shutdown() {
      shutting ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const bounded = new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), SHUTDOWN_FLUSH_MS);
          timer.unref();
        });
        const outcome = await Promise.race([sdk.shutdown().then(() => 'done' as const, (err: unknown) => err), bounded]);
        clearTimeout(timer);
        stopped = true;
        if (outcome === 'timeout') logger.warn({ timeoutMs: SHUTDOWN_FLUSH_MS }, 'tracing: spans still queued at shutdown were dropped');
        else if (outcome !== 'done') logger.warn({ err: String(outcome) }, 'tracing: the last export at shutdown failed');
        trace.disable();
        context.disable();
        propagation.disable();
      })();
      return shutting;
    },
  };
}
