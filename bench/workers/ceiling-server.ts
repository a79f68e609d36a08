/**
 * The HTTP ceiling: a bare node:http server that reads the request body and answers every request
 * with the same fixed JSON body (the size of vexil's answer), keep-alive, on loopback. Whatever
 * vexil does on top of this (routing, validation, evaluation, logging, metrics) is what the ratio
 * measures. Prints {"port": N} once listening; stops on SIGTERM.
 *
 * With `workers` > 1 it is the clustered ceiling: node:cluster workers sharing the port (the same
 * round-robin hand-off `vexil serve` uses with `server.workers`); the primary prints the port.
 *
 * argv[2] = JSON {bodyBytes, workers?}
 */
import cluster from 'node:cluster';
import { createServer } from 'node:http';

const { bodyBytes, workers = 1 } = JSON.parse(process.argv[2]) as { bodyBytes: number; workers?: number };
const skeleton = '{"match":true,"segmentKeys":["segment1"],"reason":"MATCH_EVALUATION_REASON","pad":""}';
const body = Buffer.from(skeleton.replace('"pad":""', `"pad":"${'x'.repeat(Math.max(0, bodyBytes - skeleton.length))}"`));
const headers = { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(body.length) };

const server = createServer((req, res) => {
  req.on('data', () => {});
  req.on('end', () => {
    res.writeHead(200, headers);
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
if (workers > 1 && cluster.isPrimary) {
  let listening = 0;
  cluster.on('listening', (_w, addr) => {
    if (++listening === workers) process.stdout.write(`${JSON.stringify({ port: addr.port, bodyBytes: body.length })}\n`);
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
    if (cluster.isPrimary) process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0, bodyBytes: body.length })}\n`);
  });
  process.on('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}
