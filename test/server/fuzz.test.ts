/**
 * 1,000 malformed requests (bodies, paths, queries) from a seeded PRNG
 * (test/support/http-fuzz-corpus.ts): never a 5xx, and every error answer is the catalogue's
 * JSON body. test/server/fast-path.test.ts replays the same corpus through the fast path and the
 * Koa path and compares their answers.
 */
import t from 'tap';
import { isErrorBody, rawRequest, startTestServer } from './support.js';
import { FUZZ_CASES, httpFuzzCorpus } from '../support/http-fuzz-corpus.js';

t.test(`fuzz: ${FUZZ_CASES} malformed requests, never a 5xx`, async (t) => {
  const { url } = await startTestServer(t);
  let failures = 0;
  const statuses = new Map<number, number>();
  for (const [i, { method, path, body }] of httpFuzzCorpus().entries()) {
    const res = await rawRequest(url, { method, path, ...(body !== undefined ? { body } : {}) });
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
  t.ok((statuses.get(400) ?? 0) > FUZZ_CASES / 4, `mostly 400s: ${JSON.stringify([...statuses])}`);
});
