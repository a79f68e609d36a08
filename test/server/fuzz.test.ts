/**
 * 1,000 malformed requests (bodies, paths, queries) from a seeded PRNG: never a 5xx, and every
 * error answer is the catalogue's JSON body.
 */
import t from 'tap';
import { isErrorBody, rawRequest, startTestServer } from './support.js';
import { mulberry32 } from '../support/prng.js';

const SEED = 0x5eed1e55;
const CASES = 1000;

const rand = mulberry32(SEED);
const int = (n: number) => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;

const VALID = { namespaceKey: 'default', flagKey: 'color', entityId: 'u', context: { plan: 'beta' }, requestId: 'r' };
const ODD_VALUES: unknown[] = [null, 0, -1, 1e308, true, false, '', 'x'.repeat(1000), [], [1, 'a'], {}, { a: { b: {} } }, '\u0000', '\ud800', '💥'];

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

const PATH_CHARS = 'abcdefghijklmnopqrstuvwxyz0123456789-_.~!$&\'()*+,;=:@/%?#[]';
function randomSegment(): string {
  let s = '';
  const n = 1 + int(12);
  for (let i = 0; i < n; i++) s += rand() < 0.1 ? `%${int(256).toString(16).padStart(2, '0')}` : rand() < 0.05 ? '%' : PATH_CHARS[int(PATH_CHARS.length)];
  return s;
}

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

function query(): string {
  if (rand() < 0.4) return '';
  const parts: string[] = [];
  for (let i = 0, n = 1 + int(4); i < n; i++) {
    const name = pick(QUERY_NAMES).replace('{s}', randomSegment());
    parts.push(`${name}=${pick(['-1', '0', '10', '99999999999', 'abc', '%zz', '%', randomSegment()])}`);
  }
  return `?${parts.join('&')}`;
}

t.test(`fuzz: ${CASES} malformed requests, never a 5xx`, async (t) => {
  const { url } = await startTestServer(t);
  let failures = 0;
  const statuses = new Map<number, number>();
  for (let i = 0; i < CASES; i++) {
    const isPost = rand() < 0.65;
    const method = isPost ? pick(['POST', 'POST', 'POST', 'PUT']) : pick(['GET', 'GET', 'DELETE', 'PATCH']);
    const path = isPost
      ? pick(ROUTES) + (rand() < 0.1 ? `/${randomSegment()}` : '') + query()
      : pick(GETS).replace(/\{s\}/g, () => randomSegment()) + query();
    const payload = isPost ? body() : undefined;
    const res = await rawRequest(url, { method, path, ...(payload !== undefined ? { body: payload } : {}) });
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    let parsed: unknown;
    try {
      parsed = JSON.parse(res.text);
    } catch {
      parsed = undefined;
    }
    const ok = res.status < 500 && (res.status < 400 || isErrorBody(parsed)) && (method === 'HEAD' || parsed !== undefined);
    if (!ok) {
      failures++;
      if (failures <= 5) t.fail(`case ${i}: ${method} ${path} → ${res.status} ${res.text.slice(0, 200)}`);
    }
  }
  t.equal(failures, 0, 'every answer is < 500 with a JSON body (the catalogue shape for errors)');
  t.ok((statuses.get(400) ?? 0) > CASES / 4, `mostly 400s: ${JSON.stringify([...statuses])}`);
});
