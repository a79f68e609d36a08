/**
 * Context values as long as the server accepts, reaching number and datetime constraints (the
 * `api` fixture's `internal` segment: email suffix, age >= 18, employee, joined < 2030): they are
 * parsed in time linear in their length (src/evaluation/values.ts) and answer as short ones do.
 * A run of digits that fails to match at its end once made the number parser's regex backtrack
 * quadratically; values.test.ts checks the parsers themselves at 1 MB.
 */
import t from 'tap';
import { MAX_CONTEXT_VALUE_BYTES } from '../../src/http/limits.js';
import { post, startTestServer } from './support.js';

const N = MAX_CONTEXT_VALUE_BYTES;

/** Every constraint of `internal` matches, with each value at the longest length accepted. */
const matching = {
  plan: 'free',
  email: `${'a'.repeat(N - '@example.com'.length)}@example.com`,
  age: `${'0'.repeat(N - 2)}18`,
  employee: 'true',
  joined: `2020-01-01T00:00:00.${'9'.repeat(N - 21)}Z`,
};

for (const fastPath of [true, false]) {
  t.test(`${fastPath ? 'fast path' : 'Koa path'}: context values of ${N} bytes reach the parsers and answer as short ones do`, async (t) => {
    const { url } = await startTestServer(t, { fastPath });
    const evaluate = (context: Record<string, string>) => post(`${url}/evaluate/v1/variant`, { flagKey: 'color', entityId: 'user-1', context });

    const hit = await evaluate(matching);
    t.equal(hit.status, 200, hit.text);
    t.equal(hit.body.reason, 'MATCH_EVALUATION_REASON');
    t.same(hit.body.segmentKeys, ['everyone', 'internal'], 'the long age, email and joined values all matched');

    for (const [property, value] of [
      ['age', `${'1'.repeat(N - 1)}x`], // digits failing at the end: the former quadratic case
      ['age', `${'1'.repeat(N / 2 - 1)}.${'1'.repeat(N / 2 - 1)}e`],
      ['age', `0x${'1'.repeat(N - 3)}p`],
      ['joined', `2020-01-01T00:00:00.${'9'.repeat(N - 21)}x`],
    ] as const) {
      const miss = await evaluate({ ...matching, [property]: value });
      t.equal(miss.status, 200, miss.text);
      t.equal(miss.body.reason, 'DEFAULT_EVALUATION_REASON', `${property} ${value.slice(0, 12)}...${value.slice(-3)}: no match`);
      t.equal(miss.body.variantKey, 'blue');
    }
  });
}
