/**
 * The listener of `server.metrics_address`: `GET /metrics` (and `HEAD`) for a scraper on a
 * private network, without authentication, and nothing else (404 / 405 with the usual JSON error
 * body). With it, the main port has no `/metrics`, so the metrics (namespace and flag keys,
 * reference names) never reach the address clients use. Bounds: one route, the same registry as
 * the main listener's, closed with it.
 */
import { createServer, type Server } from 'node:http';
import type { Logger } from 'pino';
import { Code, VexilError, notFound } from '../../errors.js';
import type { ListenAddress } from '../../config/listen-address.js';
import { serializeErrorBody, toErrorResponse } from '../pipeline/errors.js';
import type { ServerMetrics } from '../pipeline/metrics.js';

export interface MetricsListener {
  /** `http://host:port`. */
  readonly url: string;
  readonly server: Server;
  close(): Promise<void>;
}

function formatHost(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}

export async function startMetricsListener(opts: {
  address: ListenAddress;
  /** The main listener's host, for `:port`. */
  defaultHost: string;
  metrics: ServerMetrics;
  logger: Logger;
  keepAliveTimeoutMs: number;
}): Promise<MetricsListener> {
  const { metrics } = opts;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    const refuse = (err: VexilError) => {
      const r = toErrorResponse(err);
      const body = serializeErrorBody(r.body);
      res.writeHead(r.status, { ...r.headers, 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
    };
    if (path !== '/metrics') return refuse(notFound('Not Found'));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return refuse(new VexilError(Code.Unimplemented, 'Method Not Allowed', { httpStatus: 405, headers: { Allow: 'HEAD, GET' } }));
    }
    metrics.registry.metrics().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': metrics.registry.contentType, 'Content-Length': Buffer.byteLength(text) });
        res.end(req.method === 'HEAD' ? undefined : text);
      },
      (err: unknown) => {
        opts.logger.error({ err }, 'collecting metrics failed');
        refuse(new VexilError(Code.Internal, 'internal error'));
      },
    );
  });
  server.keepAliveTimeout = opts.keepAliveTimeoutMs;
  const host = opts.address.host ?? opts.defaultHost;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.address.port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : opts.address.port;
  const url = `http://${formatHost(host)}:${port}`;
  opts.logger.info({ url }, 'metrics listening');
  return {
    url,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
