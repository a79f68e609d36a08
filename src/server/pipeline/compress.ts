/**
 * gzip for the large read answers of the API (a namespace's full flag list is ~1 KB per flag:
 * 9.5 MB for 10,000 flags, 0.4 MB gzipped), through koa-compress. Only JSON bodies of GET requests
 * under /api/v1/ and /meta/ at or above 8 KB, only when the client accepts gzip; level 1, which
 * gives most of the gain for a fraction of the CPU, compressed on the zlib thread pool as it is
 * written. Everything else is untouched: the evaluation paths (small answers, most of them on the
 * node:http fast path), the client snapshots (ETag-validated, served by the fast path), the
 * streams, and the UI's files (compressed once at start, src/server/ui-assets.ts).
 */
import compress from 'koa-compress';
import type { Middleware } from 'koa';
import type { AppState } from '../../http/context.js';

/** Answers smaller than this go as they are: compressing them saves too little to matter. */
export const COMPRESS_THRESHOLD = 8192;

export function compressLargeReads(): Middleware<AppState> {
  const gzip = compress({
    threshold: COMPRESS_THRESHOLD,
    filter: (type) => type === 'application/json',
    gzip: { level: 1 },
    deflate: false,
    br: false,
    // Not in Node 20's zlib (koa-compress skips it there); off so that Node 22+ behaves the same.
    ...({ zstd: false } as object),
  });
  return (ctx, next) => {
    if (ctx.method !== 'GET' || !(ctx.path.startsWith('/api/v1/') || ctx.path.startsWith('/meta/'))) return next();
    return gzip(ctx as never, next) as Promise<void>;
  };
}
