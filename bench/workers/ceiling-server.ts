/**
 * The HTTP ceiling: a bare node:http server that answers every request with the same fixed
 * answer, keep-alive, on loopback. Whatever vexil does on top of this (routing, validation,
 * evaluation, logging, metrics) is what the ratio measures. Prints {"port": N} once listening;
 * stops on SIGTERM. A request with a body (POST) is read to its end first; any other is answered
 * at once, as a bare server would.
 *
 * Two kinds of answer:
 * - `bodyBytes`: a fixed JSON body of that size (the size of vexil's answer), with Content-Type
 *   and Content-Length (the evaluation ceiling of bench/http.ts and bench/ofrep.ts);
 * - `replay`: a given status, header list and body file, sent as they are (bench/snapshot.ts: the
 *   same headers and bytes as vexil's answer, e.g. a 304 with its ETag and request id).
 *
 * With `workers` > 1 it is the clustered ceiling: node:cluster workers sharing the port (the same
 * round-robin hand-off `vexil serve` uses with `server.workers`); the primary prints the port.
 *
 * argv[2] = JSON CeilingArgs
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export interface CeilingArgs {
  bodyBytes?: number;
  replay?: {
    status: number;
    /** Flat [name, value, ...] list, written as it is. */
    headers: string[];
    /** The body's bytes (none when absent). */
    bodyFile?: string;
  };
  workers?: number;
}

const { bodyBytes = 0, replay, workers = 1 } = JSON.parse(process.argv[2]) as CeilingArgs;

function fixedJson(): { status: number; headers: string[] | Record<string, string>; body: Buffer | undefined } {
  const skeleton = '{"match":true,"segmentKeys":["segment1"],"reason":"MATCH_EVALUATION_REASON","pad":""}';
  const body = Buffer.from(skeleton.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, bodyBytes - skeleton.length))}"`));
  // A header object, as this ceiling has written since session 1 (keeps the http figures comparable).
  return { status: 200, headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) }, body };
}

const answer: { status: number; headers: string[] | Record<string, string>; body: Buffer | undefined } =
  replay !== undefined
    ? { status: replay.status, headers: replay.headers, body: replay.bodyFile !== undefined ? readFileSync(replay.bodyFile) : undefined }
    : fixedJson();

const respond = (res: ServerResponse) => {
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
};

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  if (req.method === 'GET' || req.method === 'HEAD') {
    respond(res);
    return;
  }
  req.on('data', () => {});
  req.on('end', () => respond(res));
});
server.keepAliveTimeout = 60_000;
const ready = (port: number) => process.stdout.write(`${JSON.stringify({ port, bodyBytes: answer.body?.length ?? 0 })}\n`);
if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', (_w, addr) => {
    if (++listening === workers) ready(addr.port);
  });
  for (let i = 0; i < workers; i++) cluster.fork();
  process.on('SIGTERM', () => {
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    cluster.on('exit', () => {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0);
    });
  });
} else {
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    if (cluster.isPrimary) ready(typeof addr === 'object' && addr ? addr.port : 0);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
