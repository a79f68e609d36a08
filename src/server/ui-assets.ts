/**
 * The web UI's static files (built by Vite into dist/ui at `npm ci`), served from memory: read
 * once at start, gzip variants made once, never a file-system path taken from a request. Pages
 * (`/`, `/ui`, `/ui/<anything but assets>`) answer index.html, which boots the client-side router;
 * `/ui/assets/<name>` answers a content-hashed file, cacheable for a year.
 *
 * Every UI answer carries a strict Content-Security-Policy (same-origin scripts, styles and API
 * calls only, no framing) so a flag description or attachment the UI shows can never run as code.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Middleware } from 'koa';
import { isUiPath } from '../http/ui-paths.js';
import type { AppState } from '../http/context.js';

/** dist/ui of this package, from src/server (tsx) and from dist/server (built) alike. */
export const UI_DIRECTORY = fileURLToPath(new URL('../../dist/ui/', import.meta.url));

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
};

interface Asset {
  readonly body: Buffer;
  /** Only when smaller than the body. */
  readonly gzip?: Buffer;
  readonly type: string;
  readonly etag: string;
  readonly cacheControl: string;
}

export interface UiAssets {
  /** index.html, for every page address. */
  readonly index: Asset;
  /** `/ui/assets/<name>` → file. */
  readonly assets: ReadonlyMap<string, Asset>;
}

function asset(body: Buffer, type: string, cacheControl: string): Asset {
  const zipped = type.startsWith('text/') || type === 'image/svg+xml' || type === 'application/json' ? gzipSync(body, { level: 9 }) : undefined;
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, type, etag, cacheControl, ...(zipped !== undefined && zipped.length < body.length ? { gzip: zipped } : {}) };
}

/** Reads a built UI folder; undefined when it has no index.html (the UI was not built). */
export function loadUiAssets(directory: string = UI_DIRECTORY): UiAssets | undefined {
  const indexPath = join(directory, 'index.html');
  if (!existsSync(indexPath)) return undefined;
  const index = asset(readFileSync(indexPath), CONTENT_TYPES['.html']!, 'no-cache');
  const assets = new Map<string, Asset>();
  const assetDir = join(directory, 'assets');
  if (existsSync(assetDir)) {
    for (const name of readdirSync(assetDir)) {
      const file = join(assetDir, name);
      if (!statSync(file).isFile()) continue;
      const type = CONTENT_TYPES[extname(name)] ?? 'application/octet-stream';
      // Vite names every asset after its content hash: a name never gets other bytes.
      assets.set(name, asset(readFileSync(file), type, 'public, max-age=31536000, immutable'));
    }
  }
  return { index, assets };
}

function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().split(';');
    if (coding?.trim().toLowerCase() !== 'gzip') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return q === undefined || Number(q.slice(2)) > 0;
  }
  return false;
}

function send(ctx: Parameters<Middleware<AppState>>[0], a: Asset): void {
  for (const [k, v] of Object.entries(SECURITY_HEADERS)) ctx.set(k, v);
  ctx.set('Cache-Control', a.cacheControl);
  ctx.set('ETag', a.etag);
  ctx.vary('Accept-Encoding');
  ctx.type = a.type;
  if (ctx.get('If-None-Match') === a.etag) {
    ctx.status = 304;
    return;
  }
  ctx.status = 200;
  if (a.gzip !== undefined && acceptsGzip(ctx.get('Accept-Encoding') || undefined)) {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = a.gzip;
  } else {
    ctx.body = a.body;
  }
}

/** Answers GET/HEAD of UI paths; anything else goes on (404 for an unknown asset). */
export function uiMiddleware(ui: UiAssets): Middleware<AppState> {
  return async (ctx, next) => {
    if ((ctx.method !== 'GET' && ctx.method !== 'HEAD') || !isUiPath(ctx.path)) return next();
    if (ctx.path.startsWith('/ui/assets/')) {
      const a = ui.assets.get(ctx.path.slice('/ui/assets/'.length));
      if (a === undefined) return next();
      send(ctx, a);
      return;
    }
    send(ctx, ui.index);
  };
}
