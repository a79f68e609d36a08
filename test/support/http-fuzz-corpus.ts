/**
 * A seeded corpus of malformed HTTP requests against the fixture `api` state of test/server:
 * evaluation and management paths with random segments, percent-encodings and queries, and
 * bodies that are truncated, mutated, nested too deep, too large, not UTF-8 or not JSON at all.
 * The same seed always gives the same requests, so a test that replays the corpus through two
 * servers (test/server/fast-path.test.ts) sends both exactly the same bytes, and a failure in
 * test/server/fuzz.test.ts names a reproducible case.
 *
 * With `clientRoutes`, a second corpus (the same seed gives other requests) aims at the routes
 * client SDKs use: OFREP single-flag evaluations (POST, with namespace / reference / environment
 * headers) and the client snapshot's GET and HEAD on both its paths (with If-None-Match forms,
 * environment headers, `?reference=`). Without it the corpus is what it always was.
 */
import { mulberry32 } from './prng.js';

export const FUZZ_SEED = 0x5eed1e55;
export const FUZZ_CASES = 1000;

export interface FuzzRequest {
  method: string;
  /** Sent as written (test/server/support.ts rawRequest), query included. */
  path: string;
  body?: string | Buffer;
  /** Request headers (client routes only). */
  headers?: Record<string, string>;
}

export interface FuzzCorpusOptions {
  /** Aim at the OFREP and client snapshot routes instead (see above). */
  clientRoutes?: boolean;
}

const VALID = { namespaceKey: 'default', flagKey: 'color', entityId: 'u', context: { plan: 'beta' }, requestId: 'r' };
const ODD_VALUES: unknown[] = [null, 0, -1, 1e308, true, false, '', 'x'.repeat(1000), [], [1, 'a'], {}, { a: { b: {} } }, '\u0000', '\ud800', '💥'];

const PATH_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-_.~!$&\'()*+,;=:@/%?#[]';

const ROUTES = [
  '/evaluate/v1/variant',
  '/evaluate/v1/boolean',
  '/evaluate/v1/batch',
  '/evaluate/v1/namespaces/default/variant',
  '/api/v1/namespaces/default/flags',
  '/api/v1/namespaces/default/segments/internal/constraints',
  '/api/v1/namespaces/default/flags/new-checkout/rollouts',
  '/api/v1/namespaces/default/flags/color/rules/x/distributions',
];
const GETS = ['/api/v1/namespaces', '/api/v1/namespaces/{s}/flags', '/api/v1/flags/{s}', '/api/v1/namespaces/default/flags/{s}/rules/{s}', '/{s}/{s}', '/meta/{s}'];
const QUERY_NAMES = ['limit', 'offset', 'pageToken', 'page_token', 'reference', 'pretty', '{s}'];

const CLIENT_POSTS = ['/ofrep/v1/evaluate/flags/color', '/ofrep/v1/evaluate/flags/new-checkout', '/ofrep/v1/evaluate/flags/{s}'];
const CLIENT_GETS = [
  '/internal/v1/evaluation/snapshot/namespace/default',
  '/internal/v1/evaluation/snapshot/namespace/production',
  '/internal/v1/evaluation/snapshot/namespace/{s}',
  '/client/v2/environments/default/namespaces/default/snapshot',
  '/client/v2/environments/{s}/namespaces/default/snapshot',
  '/client/v2/environments/default/namespaces/{s}/snapshot',
  '/client/v2/environments/{s}/namespaces/{s}/snapshot',
];
/** Header names a client route reads, both spellings; values from CLIENT_HEADER_VALUES or random. */
const CLIENT_HEADER_NAMES = [
  'x-flipt-namespace',
  'x-svc-namespace',
  'x-flipt-reference',
  'x-svc-reference',
  'x-flipt-environment',
  'x-svc-environment',
  'if-none-match',
];
const CLIENT_HEADER_VALUES = ['default', 'production', 'staging', 'local', 'nope', '', '*', 'W/"x"', '"a", "b"', ' , ,'];

/** `count` requests from `seed`: about two thirds POST/PUT with a body, the rest GET/DELETE/PATCH. */
export function httpFuzzCorpus(count = FUZZ_CASES, seed = FUZZ_SEED, opts: FuzzCorpusOptions = {}): FuzzRequest[] {
  const rand = mulberry32(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;

  function mutateValue(v: unknown, depth = 0): unknown {
    if (depth > 3 || rand() < 0.3) return pick(ODD_VALUES);
    if (Array.isArray(v)) return v.map((x) => mutateValue(x, depth + 1));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const r = rand();
        if (r < 0.15) continue; // drop the field
        const key = r < 0.25 ? `${k}_` : r < 0.3 ? '__proto__' : k;
        out[key] = rand() < 0.5 ? mutateValue(x, depth + 1) : x;
      }
      if (rand() < 0.2) out[pick(['constructor', 'toString', 'x', 'context'])] = pick(ODD_VALUES);
      return out;
    }
    return pick(ODD_VALUES);
  }

  function randomBytes(n: number): Buffer {
    const b = Buffer.alloc(n);
    for (let i = 0; i < n; i++) b[i] = int(256);
    return b;
  }

  function body(): string | Buffer {
    const valid = JSON.stringify(rand() < 0.3 ? { requests: [VALID, VALID] } : VALID);
    switch (int(9)) {
      case 0:
        return valid.slice(0, int(valid.length)); // truncation
      case 1:
        return JSON.stringify(mutateValue(VALID)); // type swaps, dropped fields
      case 2:
        return JSON.stringify({ requests: [mutateValue(VALID), mutateValue(VALID)], requestId: mutateValue('x'), reference: mutateValue('') });
      case 3:
        return randomBytes(int(200)); // garbage, often invalid UTF-8
      case 4: {
        const d = 50 + int(5000);
        return `${pick(['[', '{"a":'])}`.repeat(d) + ']'.repeat(int(d));
      }
      case 5:
        return JSON.stringify({ ...VALID, context: { big: 'y'.repeat(int(1_300_000)) } }); // huge strings, some over the limit
      case 6: {
        const chars = valid.split('');
        for (let i = 0; i < 3; i++) chars[int(chars.length)] = pick(['"', '{', '}', ',', ':', '\\', '\u0000', 'é']);
        return chars.join('');
      }
      case 7:
        return pick(['', ' ', 'null', '[]', '"str"', '42', 'true', '{}', '{"requests":null}', '\ufeff{}']);
      default:
        return Buffer.concat([Buffer.from(valid.slice(0, 20)), randomBytes(int(50))]);
    }
  }

  function randomSegment(): string {
    let s = '';
    const n = 1 + int(12);
    for (let i = 0; i < n; i++) s += rand() < 0.1 ? `%${int(256).toString(16).padStart(2, '0')}` : rand() < 0.05 ? '%' : PATH_CHARS[int(PATH_CHARS.length)];
    return s;
  }

  function query(): string {
    if (rand() < 0.4) return '';
    const parts: string[] = [];
    for (let i = 0, n = 1 + int(4); i < n; i++) {
      const name = pick(QUERY_NAMES).replace('{s}', randomSegment());
      parts.push(`${name}=${pick(['-1', '0', '10', '99999999999', 'abc', '%zz', '%', randomSegment()])}`);
    }
    return `?${parts.join('&')}`;
  }

  function clientHeaders(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (let i = 0, n = int(4); i < n; i++) headers[pick(CLIENT_HEADER_NAMES)] = rand() < 0.7 ? pick(CLIENT_HEADER_VALUES) : randomSegment();
    return headers;
  }

  function clientRequest(): FuzzRequest {
    if (rand() < 0.5) {
      const path = pick(CLIENT_POSTS).replace(/\{s\}/g, () => randomSegment()) + (rand() < 0.1 ? `/${randomSegment()}` : '') + query();
      const valid = JSON.stringify({ context: { targetingKey: 'u', plan: pick(['beta', 1, true, null, {}]) } });
      const payload = rand() < 0.3 ? valid : body();
      // A GET goes without a body: Node's client sends one unframed (no chunked encoding for GET).
      return rand() < 0.25 ? { method: 'GET', path, headers: clientHeaders() } : { method: 'POST', path, body: payload, headers: clientHeaders() };
    }
    const path = pick(CLIENT_GETS).replace(/\{s\}/g, () => randomSegment()) + query();
    return { method: pick(['GET', 'GET', 'GET', 'HEAD', 'POST']), path, headers: clientHeaders() };
  }

  const corpus: FuzzRequest[] = [];
  if (opts.clientRoutes === true) {
    for (let i = 0; i < count; i++) corpus.push(clientRequest());
    return corpus;
  }
  for (let i = 0; i < count; i++) {
    const isPost = rand() < 0.65;
    const method = isPost ? pick(['POST', 'POST', 'POST', 'PUT']) : pick(['GET', 'GET', 'DELETE', 'PATCH']);
    const path = isPost
      ? pick(ROUTES) + (rand() < 0.1 ? `/${randomSegment()}` : '') + query()
      : pick(GETS).replace(/\{s\}/g, () => randomSegment()) + query();
    corpus.push(isPost ? { method, path, body: body() } : { method, path });
  }
  return corpus;
}
