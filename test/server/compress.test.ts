/**
 * gzip of large API reads (src/server/pipeline/compress.ts) through the real server: a big flag list is
 * compressed when the client accepts gzip and inflates to exactly the uncompressed answer; small
 * answers, clients without gzip, HEAD, errors and evaluations are left as they are.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { pino } from 'pino';
import t from 'tap';
import { loadConfig } from '../../src/config/load.js';
import { COMPRESS_THRESHOLD } from '../../src/server/pipeline/compress.js';
import { startHttpServer } from '../../src/server/listen.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { generateState } from '../support/generate-state.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function raw(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? 'GET', headers: opts.headers ?? {} }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts) }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

t.test('large reads are gzipped for clients that accept it, and only those', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-gzip-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of generateState({ flags: 200, namespaces: 1 })) {
    mkdirSync(dirname(join(dir, f.path)), { recursive: true });
    writeFileSync(join(dir, f.path), f.text);
  }
  const config = loadConfig({ env: {}, cwd: dir, defaultLocalPath: dir });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }) });
  t.teardown(() => store.close());
  await store.start();
  const server = await startHttpServer({ store, config, logger: pino({ level: 'silent' }), host: '127.0.0.1', port: 0 });
  t.teardown(() => server.close());
  const flags = `${server.url}/api/v1/namespaces/default/flags?limit=0`;

  const plain = await raw(flags);
  t.equal(plain.status, 200);
  t.equal(plain.headers['content-encoding'], undefined, 'no Accept-Encoding: as it is');
  t.ok(plain.body.length > COMPRESS_THRESHOLD * 4, `a large answer (${plain.body.length} bytes)`);
  t.equal(Number(plain.headers['content-length']), plain.body.length);

  const gz = await raw(flags, { headers: { 'Accept-Encoding': 'gzip, deflate, br' } });
  t.equal(gz.status, 200);
  t.equal(gz.headers['content-encoding'], 'gzip', 'gzip, even when br is offered');
  t.match(String(gz.headers['vary']), /Accept-Encoding/i);
  t.equal(gz.headers['content-type'], 'application/json; charset=utf-8');
  t.ok(gz.body.length * 5 < plain.body.length, `${gz.body.length} bytes gzipped vs ${plain.body.length}`);
  t.same(gunzipSync(gz.body), plain.body, 'inflates to exactly the uncompressed answer');

  const identity = await raw(flags, { headers: { 'Accept-Encoding': 'gzip;q=0, identity' } });
  t.equal(identity.headers['content-encoding'], undefined, 'gzip refused with q=0');
  const head = await raw(flags, { method: 'HEAD', headers: { 'Accept-Encoding': 'gzip' } });
  t.equal(head.headers['content-encoding'], undefined, 'HEAD: nothing to compress');

  const small = await raw(`${server.url}/api/v1/namespaces`, { headers: { 'Accept-Encoding': 'gzip' } });
  t.ok(small.body.length < COMPRESS_THRESHOLD);
  t.equal(small.headers['content-encoding'], undefined, 'below the threshold: as it is');
  const missing = await raw(`${server.url}/api/v1/namespaces/nope/flags`, { headers: { 'Accept-Encoding': 'gzip' } });
  t.equal(missing.status, 404);
  t.same(JSON.parse(missing.body.toString()), { code: 5, message: 'namespace "nope" not found', details: [] }, 'errors as they are');

  const batch = JSON.stringify({
    requests: Array.from({ length: 100 }, (_, i) => ({ namespaceKey: 'default', flagKey: `flag_${String(i).padStart(6, '0')}`, entityId: `e${i}`, context: {} })),
  });
  const evaluated = await raw(`${server.url}/evaluate/v1/batch`, { method: 'POST', headers: { 'Accept-Encoding': 'gzip', 'Content-Type': 'application/json' }, body: batch });
  t.equal(evaluated.status, 200);
  t.ok(evaluated.body.length > COMPRESS_THRESHOLD, 'a large evaluation answer');
  t.equal(evaluated.headers['content-encoding'], undefined, 'evaluations are never compressed');

  const viaFetch = (await (await fetch(flags)).json()) as { flags: unknown[] };
  t.equal(viaFetch.flags.length, 200, "fetch (which asks for gzip) reads it as usual");
});
