/**
 * The UI benchmark's baseline server (bench/ui.ts): a bare node:http server on loopback answering
 * a few fixed pages from memory, gzip-compressed when the browser accepts it (as vexil serves the
 * UI), with `Cache-Control: no-cache`. Prints {"port": N} once listening; stops on SIGTERM.
 *
 * argv[2] = JSON StaticPagesArgs
 */
import { createServer } from 'node:http';
import { gzipSync } from 'node:zlib';

export interface StaticPagesArgs {
  /** URL path → the page's HTML. */
  pages: Record<string, string>;
}

const { pages } = JSON.parse(process.argv[2]!) as StaticPagesArgs;

const answers = new Map(
  Object.entries(pages).map(([path, html]) => {
    const body = Buffer.from(html, 'utf8');
    return [path, { body, gzip: gzipSync(body, { level: 9 }) }];
  }),
);

const server = createServer((req, res) => {
  const a = answers.get((req.url ?? '/').split('?')[0]!);
  if (a === undefined) {
    // Browsers ask for /favicon.ico unprompted: "no content" rather than an error in the console.
    res.writeHead(req.url === '/favicon.ico' ? 204 : 404, { 'Content-Length': '0' });
    res.end();
    return;
  }
  const gzip = /\bgzip\b/.test(req.headers['accept-encoding'] ?? '');
  const body = gzip ? a.gzip : a.body;
  res.writeHead(200, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Length': String(body.length),
    'Cache-Control': 'no-cache',
    Vary: 'Accept-Encoding',
    ...(gzip ? { 'Content-Encoding': 'gzip' } : {}),
  });
  res.end(body);
});

server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`${JSON.stringify({ port: typeof address === 'object' && address !== null ? address.port : 0 })}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
