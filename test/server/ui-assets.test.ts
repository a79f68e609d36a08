/**
 * The web UI's static files through the real server (src/server/ui-assets.ts): index.html for
 * every page address, content-hashed assets with long caching, gzip, ETags, the security headers,
 * 404 for unknown assets, `ui.enabled: false`, and the UI's addresses staying public when
 * authentication is required (while the API behind them does not).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import t from 'tap';
import { startHttpServer } from '../../src/server/listen.js';
import { UI_DIRECTORY, loadUiAssets } from '../../src/server/ui-assets.js';
import { startAuthServer } from '../auth/support.js';
import { startTestStore, startTestServer } from './support.js';

const BUILT_INDEX = join(UI_DIRECTORY, 'index.html');

function builtScriptPath(): string {
  const html = readFileSync(BUILT_INDEX, 'utf8');
  const m = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html);
  if (!m) throw new Error(`no script in ${BUILT_INDEX}`);
  return m[1]!;
}

t.test('the built UI: index.html at every page address, assets cached for good', async (t) => {
  t.ok(loadUiAssets() !== undefined, `${BUILT_INDEX} exists (npm run build:ui, run by prepare and scripts/test.sh)`);
  const s = await startTestServer(t);
  for (const path of ['/', '/ui', '/ui/', '/ui/namespaces/default/flags', '/ui/namespaces/default/flags/color', '/ui/status', '/ui/login']) {
    const res = await fetch(`${s.url}${path}`);
    t.equal(res.status, 200, path);
    t.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', `${path}: html`);
    t.equal(res.headers.get('cache-control'), 'no-cache', `${path}: revalidated, so a new build shows at once`);
    t.match(res.headers.get('content-security-policy'), /default-src 'none'; script-src 'self'/, `${path}: CSP`);
    t.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    t.equal(res.headers.get('x-content-type-options'), 'nosniff');
    t.match(await res.text(), /<div id="app"><\/div>/, `${path}: the app's mount point`);
  }

  const script = builtScriptPath();
  const js = await fetch(`${s.url}${script}`, { headers: { 'Accept-Encoding': 'identity' } });
  t.equal(js.status, 200);
  t.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.equal(js.headers.get('content-encoding'), null, 'identity asked: not compressed');
  const plain = Buffer.from(await js.arrayBuffer());
  t.same(plain, readFileSync(join(UI_DIRECTORY, script.slice('/ui/'.length))), 'the built file');
  const etag = js.headers.get('etag')!;
  t.match(etag, /^"[A-Za-z0-9_-]+"$/);

  // Node's fetch would inflate a gzip body by itself: read it raw.
  const { request } = await import('node:http');
  const gz = await new Promise<{ status: number; encoding: string | undefined; body: Buffer }>((resolve, reject) => {
    request(`${s.url}${script}`, { headers: { 'Accept-Encoding': 'gzip, br' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: res.headers['content-encoding'], body: Buffer.concat(parts) }));
    })
      .on('error', reject)
      .end();
  });
  t.equal(gz.status, 200);
  t.equal(gz.encoding, 'gzip');
  t.ok(gz.body.length < plain.length, `gzip ${gz.body.length} < ${plain.length} bytes`);
  t.same(gunzipSync(gz.body), plain, 'gzip inflates to the file');

  const again = await fetch(`${s.url}${script}`, { headers: { 'If-None-Match': etag } });
  t.equal(again.status, 304, 'unchanged: 304');
  const head = await fetch(`${s.url}${script}`, { method: 'HEAD' });
  t.equal(head.status, 200, 'HEAD');

  const missing = await fetch(`${s.url}/ui/assets/no-such-file.js`);
  t.equal(missing.status, 404);
  t.same(await missing.json(), { code: 5, message: 'Not Found', details: [] }, 'unknown asset: the API 404, not index.html');
  const traversal = await fetch(`${s.url}/ui/assets/..%2F..%2Fpackage.json`);
  t.equal(traversal.status, 404, 'no file-system path is ever taken from a request');
  const post = await fetch(`${s.url}/ui/namespaces`, { method: 'POST' });
  t.equal(post.status, 404, 'only GET and HEAD');
});

t.test('ui.enabled: false: / and /ui answer 404 like any unknown path', async (t) => {
  const { config, store } = await startTestStore(t);
  config.ui.enabled = false;
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  for (const path of ['/', '/ui/namespaces', builtScriptPath()]) {
    const res = await fetch(`${server.url}${path}`);
    t.equal(res.status, 404, path);
    t.same(await res.json(), { code: 5, message: 'Not Found', details: [] });
  }
  const api = await fetch(`${server.url}/api/v1/namespaces`);
  t.equal(api.status, 200, 'the API is unaffected');
});

t.test('a UI folder is read once at start: types, gzip only when smaller, nothing outside assets/', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-ui-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
  writeFileSync(join(dir, 'assets', 'app-1.css'), `body{color:red}\n`.repeat(100));
  writeFileSync(join(dir, 'assets', 'logo-2.png'), Buffer.from([0x89, 0x50, 0x4e, 0x47]));
  writeFileSync(join(dir, 'assets', 'data-3.bin'), 'x');
  writeFileSync(join(dir, 'secret.txt'), 'not served');
  const ui = loadUiAssets(dir)!;
  t.same([...ui.assets.keys()].sort(), ['app-1.css', 'data-3.bin', 'logo-2.png']);
  t.equal(ui.assets.get('app-1.css')!.type, 'text/css; charset=utf-8');
  t.ok(ui.assets.get('app-1.css')!.gzip, 'repetitive CSS compresses');
  t.equal(ui.assets.get('logo-2.png')!.gzip, undefined, 'images are not gzipped');
  t.equal(ui.assets.get('data-3.bin')!.type, 'application/octet-stream');
  t.equal(loadUiAssets(join(dir, 'assets')), undefined, 'no index.html: no UI');

  const { config, store } = await startTestStore(t);
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0, ui });
  t.teardown(() => server.close());
  t.equal((await fetch(`${server.url}/ui/secret.txt`)).headers.get('content-type'), 'text/html; charset=utf-8', 'a page address, not the file');
  t.equal(await (await fetch(`${server.url}/ui/anything`)).text(), '<!doctype html><title>t</title>');
  t.equal((await fetch(`${server.url}/ui/assets/app-1.css`)).status, 200);
});

t.test('authentication required: the UI (login page included) is public, the API behind it is not', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n' });
  for (const path of ['/', '/ui/login', '/ui/namespaces/default/flags', builtScriptPath()]) {
    const res = await fetch(`${s.url}${path}`);
    t.equal(res.status, 200, `${path} without a token`);
  }
  t.equal((await fetch(`${s.url}/api/v1/namespaces`)).status, 401, 'the API still asks for a token');
  t.equal((await fetch(`${s.url}/meta/snapshots`)).status, 401);
  t.equal((await fetch(`${s.url}/ui/login`, { method: 'POST' })).status, 401, 'only GET/HEAD of UI paths are public');
});
