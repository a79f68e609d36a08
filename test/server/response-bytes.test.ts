/**
 * Evaluation responses sized and sent without scanning the text (the fast path's exchange sends a body known
 * to be ASCII as latin1, sized by its length): every response's Content-Length is its byte
 * count and its UTF-8 text is intact, whether the variant's attachment, the request id or an
 * unknown flag key named in an error are ASCII or not (keys of flags and variants are ASCII by
 * the schema), on the fast path and on the Koa routes alike.
 */
import { request } from 'node:http';
import t from 'tap';
import { startTestServer } from './support.js';

function post(url: string, path: string, body: unknown): Promise<{ status: number; length: number; bytes: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, length: Number(res.headers['content-length']), bytes: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const CASES: Array<{ name: string; path: string; body: Record<string, unknown>; expect: Record<string, unknown> }> = [
  { name: 'ASCII variant', path: '/evaluate/v1/variant', body: { flagKey: 'plain', entityId: 'u' }, expect: { variantKey: 'blue', variantAttachment: '{"label":"blue"}' } },
  { name: 'non-ASCII variant and attachment', path: '/evaluate/v1/variant', body: { flagKey: 'farbe', entityId: 'u' }, expect: { variantKey: 'gruen', variantAttachment: '{"label":"Grün 🌿"}' } },
  { name: 'non-ASCII request id', path: '/evaluate/v1/variant', body: { flagKey: 'plain', entityId: 'u', requestId: 'ré-😀' }, expect: { requestId: 'ré-😀' } },
  { name: 'ASCII boolean', path: '/evaluate/v1/boolean', body: { flagKey: 'schalter', entityId: 'u', requestId: 'r' }, expect: { flagKey: 'schalter', enabled: true, requestId: 'r' } },
  { name: 'boolean, non-ASCII request id', path: '/evaluate/v1/boolean', body: { flagKey: 'schalter', entityId: 'u', requestId: 'ü' }, expect: { requestId: 'ü' } },
  { name: 'error naming a non-ASCII flag', path: '/evaluate/v1/variant', body: { flagKey: 'fehlt-ö', entityId: 'u' }, expect: { code: 5 } },
];

for (const fastPath of [true, false]) {
  t.test(`Content-Length is the byte count (fast path ${fastPath})`, async (t) => {
    const { url } = await startTestServer(t, { fixture: 'unicode', fastPath });
    for (const c of CASES) {
      const r = await post(url, c.path, c.body);
      t.equal(r.length, r.bytes.length, `${c.name}: Content-Length ${r.length}`);
      const parsed = JSON.parse(r.bytes.toString('utf8')) as Record<string, unknown>;
      t.match(parsed, c.expect, `${c.name}: text intact`);
    }
  });
}
