/**
 * The HTTP server around the Koa app: listens on `config.server.host`/`http_port`, answers what
 * Node handles before Koa (an `Expect` other than 100-continue, unparsable requests) with the
 * same JSON error body, and shuts down gracefully.
 */
import { STATUS_CODES, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { Code, VexilError } from '../errors.js';
import { parseListenAddress } from '../config/listen-address.js';
import { REQUEST_TIMEOUT_MS } from '../config/semantic.js';
import { createApp, type AppDeps, type VexilApp } from './app.js';
import { createCorsPolicy } from './pipeline/cors.js';
import { serializeErrorBody, toErrorResponse } from './pipeline/errors.js';
import { createFastPath } from './fast-path/serve.js';
import { createHealth } from './pipeline/health.js';
import { createServerMetrics } from './pipeline/metrics.js';
import { startMetricsListener, type MetricsListener } from './meta/metrics-listener.js';
import { revisionFor } from './pipeline/request-log.js';
import type { Tracing } from './tracing.js';

export { createApp, type AppDeps, type VexilApp, type VersionInfo } from './app.js';

export interface StartHttpServerOptions extends AppDeps {
  /** Overrides `config.server.host` / `config.server.http_port` (port 0 = any free port). */
  host?: string;
  port?: number;
  /** How long close() waits for in-flight requests before cutting connections (default 10 s). */
  shutdownTimeoutMs?: number;
  /**
   * Answer the hot routes (server/hot-routes.ts: evaluation, OFREP single flag, client snapshot)
   * on the node:http fast path (fast-path/; default true).
   */
  fastPath?: boolean;
  /** Started tracing (tracing.ts): both HTTP paths trace requests, its drop counter joins the metrics. */
  tracing?: Tracing;
}

export interface RunningHttpServer {
  /** `http://host:port`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  readonly server: Server;
  readonly app: VexilApp;
  /** Whether the hot routes are answered by the node:http fast path (fast-path/). */
  readonly fastPath: boolean;
  /** The `server.metrics_address` listener's `http://host:port`, when configured. */
  readonly metricsUrl?: string;
  /**
   * Graceful stop: `/health` turns NOT_SERVING, no new connections are accepted, in-flight
   * requests finish (responses carry `Connection: close`), live-update streams end, idle
   * connections are closed; after the timeout the rest are cut. Does not close the store.
   */
  close(): Promise<void>;
}

function rawErrorResponse(err: VexilError, revision: string): { status: number; headers: Record<string, string>; body: string } {
  const res = toErrorResponse(err);
  const body = serializeErrorBody(res.body);
  return {
    status: res.status,
    body,
    headers: {
      ...res.headers,
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': String(Buffer.byteLength(body)),
      'X-Vexil-Revision': revision,
    },
  };
}

/** How long a refused client may go on sending before the connection closes: idle gap, and in all. */
const LINGER_IDLE_MS = 100;
const LINGER_MAX_MS = 2000;

/**
 * Closes a connection whose request was refused before it was read to its end (a 431 for 1 MB of
 * headers) without losing the answer: closing a socket with unread bytes makes the kernel send a
 * reset, and the client then drops the answer it has not read yet (seen on Node.js 24 and 26 when
 * the socket was ended at once; Node.js 20 delivered the answer). What the client still sends is
 * read and dropped until it pauses for LINGER_IDLE_MS, and for LINGER_MAX_MS at most; then the
 * connection ends once the answer is written.
 */
function closeAfterLinger(socket: Socket): void {
  let idle: NodeJS.Timeout | undefined;
  const stop = () => {
    clearTimeout(idle);
    clearTimeout(cap);
    socket.removeListener('data', bump);
  };
  const close = () => {
    stop();
    socket.destroySoon();
  };
  const bump = () => {
    clearTimeout(idle);
    idle = setTimeout(close, LINGER_IDLE_MS).unref();
  };
  const cap = setTimeout(close, LINGER_MAX_MS).unref();
  socket.on('data', bump);
  socket.once('close', stop);
  socket.resume();
  bump();
}

function clientErrorFor(err: NodeJS.ErrnoException): VexilError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new VexilError(Code.ResourceExhausted, 'request header fields too large', { httpStatus: 431 });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new VexilError(Code.DeadlineExceeded, 'request timeout', { httpStatus: 408 });
    case 'HPE_INVALID_METHOD':
      return new VexilError(Code.InvalidArgument, 'unsupported HTTP method', { httpStatus: 400 });
    default:
      return new VexilError(Code.InvalidArgument, 'malformed HTTP request');
  }
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startHttpServer(opts: StartHttpServerOptions): Promise<RunningHttpServer> {
  const health = opts.health ?? createHealth();
  const ownMetrics = opts.metrics === undefined;
  const metrics = opts.metrics ?? createServerMetrics(opts.store);
  const requestTracing = opts.tracing?.requests;
  opts.tracing?.registerMetrics(metrics.registry);
  const app = createApp({ ...opts, health, metrics, ...(requestTracing !== undefined ? { requestTracing } : {}) });
  const { store, logger } = opts;

  const koa = app.callback();
  const cors = createCorsPolicy(opts.config.cors);
  const fast =
    opts.fastPath !== false
      ? createFastPath({
          routes: app.vexil.hotRoutes,
          store,
          metrics,
          health,
          logger,
          ...(opts.authGate !== undefined ? { gate: opts.authGate } : {}),
          requests: opts.config.log.requests,
          hideRevision: opts.config.authentication.required,
          cookie: (req, res, name) => app.createContext(req, res).cookies.get(name),
          ...(cors !== undefined ? { cors } : {}),
          ...(requestTracing !== undefined ? { tracing: requestTracing } : {}),
        })
      : undefined;
  const server = createServer(
    // Idle keep-alive connections outlive a load balancer's idle timeout (60 s for most), so the
    // load balancer closes them first and never sends a request on one vexil is closing (a 502).
    {
      keepAliveTimeout: opts.config.server.keep_alive_timeout,
      headersTimeout: opts.config.server.headers_timeout,
      requestTimeout: REQUEST_TIMEOUT_MS,
    },
    fast === undefined
      ? koa
      : (req, res) => {
          if (!fast(req, res)) void koa(req, res);
        },
  );
  server.keepAliveTimeout = opts.config.server.keep_alive_timeout;

  // Node answers an Expect it does not know with a bare 417; ours carries the JSON body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const expect = req.headers.expect ?? '';
    const r = rawErrorResponse(
      new VexilError(Code.InvalidArgument, `unsupported Expect header "${expect}": only 100-continue is supported`, { httpStatus: 417 }),
      revisionFor({}, store, opts.config.authentication.required),
    );
    const head = Object.entries({ ...r.headers, Connection: 'close' }).flat();
    cors?.appendResponseHeaders(head, req.headers.origin);
    res.writeHead(r.status, head);
    res.end(r.body);
  });

  // Requests Node cannot parse never reach Koa; answer them in the catalogue's shape too.
  const answered = new WeakSet<Socket>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    // The parser reports again for bytes read while lingering: the answer has gone already.
    if (answered.has(socket)) return;
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const r = rawErrorResponse(clientErrorFor(err), revisionFor({}, store, opts.config.authentication.required));
    const head = [`HTTP/1.1 ${r.status} ${STATUS_CODES[r.status] ?? 'Bad Request'}`];
    for (const [k, v] of Object.entries(r.headers)) head.push(`${k}: ${v}`);
    // The request was not parsed, so its Origin is unknown: only `*` can be answered.
    const corsHead = cors?.withoutOrigin ?? [];
    for (let i = 0; i < corsHead.length; i += 2) head.push(`${corsHead[i]}: ${corsHead[i + 1]}`);
    head.push('Connection: close');
    answered.add(socket);
    socket.write(`${head.join('\r\n')}\r\n\r\n${r.body}`);
    closeAfterLinger(socket);
    logger.debug({ code: err.code, status: r.status }, 'client error');
  });

  const host = opts.host ?? opts.config.server.host;
  const wantedPort = opts.port ?? opts.config.server.http_port;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(wantedPort, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : wantedPort;
  const url = `http://${formatHost(host)}:${port}`;
  logger.debug({ url }, 'http server listening');
  let metricsListener: MetricsListener | undefined;
  if (opts.config.server.metrics_address !== undefined) {
    const parsed = parseListenAddress(opts.config.server.metrics_address);
    try {
      if (typeof parsed === 'string') throw new Error(`server.metrics_address: ${parsed}`);
      metricsListener = await startMetricsListener({
        address: parsed,
        defaultHost: host,
        metrics,
        logger,
        keepAliveTimeoutMs: opts.config.server.keep_alive_timeout,
      });
    } catch (err) {
      server.close();
      server.closeAllConnections();
      throw err;
    }
  }

  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      health.serving = false;
      // Streams never finish on their own: end them now so that their connections drain like the rest.
      app.vexil.streams.endAll();
      const timeoutMs = opts.shutdownTimeoutMs ?? 10_000;
      // Keep-alive sockets become idle as their last response ends; close them as they do.
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      const cut = setTimeout(() => {
        logger.warn({ timeoutMs }, 'shutdown timeout: closing remaining connections');
        server.closeAllConnections();
      }, timeoutMs);
      const metricsClosed = metricsListener?.close();
      server.close(() => {
        clearInterval(sweep);
        clearTimeout(cut);
        app.vexil.dispose();
        if (ownMetrics) metrics.dispose();
        logger.info('http server closed');
        void (metricsClosed ?? Promise.resolve()).then(resolve);
      });
      server.closeIdleConnections();
      logger.info('no longer accepting connections; draining requests');
    });
    return closing;
  };

  return {
    url,
    port,
    server,
    app,
    fastPath: fast !== undefined,
    ...(metricsListener !== undefined ? { metricsUrl: metricsListener.url } : {}),
    close,
  };
}
