/**
 * A loopback HTTP forwarder that records what a client sends (method, path and query, headers)
 * before passing each request unchanged to a real server and its answer unchanged back: tests read
 * what went on the wire (addressing style, signing scope) while the real server still checks and
 * answers it. Request and response bodies are streamed through, never altered.
 */
import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Teardown } from './git-repo.js';

export interface RecordedRequest {
  readonly method: string;
  /** Path and query as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

export interface RecordingProxy {
  /** http://127.0.0.1:PORT */
  readonly endpoint: string;
  readonly requests: RecordedRequest[];
}

export async function startRecordingProxy(t: Teardown, target: string): Promise<RecordingProxy> {
  const to = new URL(target);
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    // The Host header is forwarded as signed (the signature covers it); only the socket changes.
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  t.teardown(() => server.closeAllConnections());
  const { port } = server.address() as AddressInfo;
  return { endpoint: `http://127.0.0.1:${port}`, requests };
}
