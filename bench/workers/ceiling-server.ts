/**
 * The HTTP ceiling: a bare node:http server that reads the request body and answers every request
 * with the same fixed JSON body (the size of vexil's answer), keep-alive, on loopback. Whatever
 * vexil does on top of this (routing, validation, evaluation, logging, metrics) is what the ratio
 * measures. Prints {"port": N} once listening; stops on SIGTERM.
 *
 * argv[2] = JSON {bodyBytes}
 */
import { createServer } from 'node:http';

const { bodyBytes } = JSON.parse(process.argv[2]) as { bodyBytes: number };
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
server.listen(0, '127.0.0.1', () => {
  const addr = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof addr === 'object' && addr ? addr.port : 0, bodyBytes: body.length })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
