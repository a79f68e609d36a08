/**
 * `POST /evaluate/v1/explain` (and its namespaced alias) through the real server: its `result` is
 * the body the variant/boolean endpoint answers for the same request, its explanation names what
 * decided and what failed, errors are the evaluation endpoints' own, it is not counted as an
 * evaluation, a huge flag is refused, namespace-scoped tokens stay in their namespace, and every
 * answer validates against schemas/explain.schema.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import t, { type Test } from 'tap';
import { MAX_EXPLAINED_CHECKS } from '../../src/server/evaluation/explain-response.js';
import { bootstrapTokenFrom, createToken, denied, request, startAuthServer } from '../auth/support.js';
import { post, startTestServer, type JsonResponse } from './support.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(JSON.parse(readFileSync(join(REPO, 'schemas/explain.schema.json'), 'utf8')) as object);

function valid(t: Test, body: unknown): void {
  t.ok(validate(body), `validates against explain.schema.json: ${JSON.stringify(validate.errors)}`);
}

/** The JSON text of an evaluation body without what varies from one request to the next (a generated requestId too). */
function steady(body: Record<string, unknown>): string {
  return JSON.stringify({ ...body, requestId: '', requestDurationMillis: 0, timestamp: '' });
}

t.test('explain API', async (t) => {
  const { url, dir, store, server } = await startTestServer(t);
  const ev = `${url}/evaluate/v1`;

  /** explain and the flag type's own endpoint, for one body; checks the two agree. */
  async function both(t: Test, body: Record<string, unknown>, endpoint: 'variant' | 'boolean', prefix = ev) {
    const e = await post(`${prefix}/explain`, body);
    const r = await post(`${prefix}/${endpoint}`, body);
    t.equal(e.status, 200, `explain ${e.status === 200 ? '' : e.text}`);
    t.equal(r.status, 200, `${endpoint} ${r.status === 200 ? '' : r.text}`);
    if (typeof body.requestId === 'string') t.equal(e.body.result.requestId, body.requestId, 'the body\'s requestId');
    else t.not(e.body.result.requestId, '', 'a generated requestId');
    valid(t, e.body);
    t.same(Object.keys(e.body), ['flagKey', 'namespaceKey', 'flagType', 'result', 'explanation']);
    t.equal(steady(e.body.result), steady(r.body), 'result is the evaluation endpoint body, field for field and in order');
    return e.body;
  }

  t.test('variant flag: the rule and distribution that decided', async (t) => {
    const body = { namespaceKey: 'default', flagKey: 'color', entityId: 'user-1', context: { plan: 'beta' }, requestId: 'req-1' };
    const e = await both(t, body, 'variant');
    t.match(e, { flagKey: 'color', namespaceKey: 'default', flagType: 'VARIANT_FLAG_TYPE' });
    t.match(e.result, { match: true, variantKey: 'red', requestId: 'req-1', segmentKeys: ['beta-users'] });
    t.same(e.explanation.decision, { by: 'rule', rank: 1, outcome: 'distribution' });
    const rule = e.explanation.rules[0];
    t.match(rule, { rank: 1, decided: true, bucket: { variantKey: 'red' } });
    t.same(rule.segments.segments[0].constraints[0], {
      type: 'STRING_COMPARISON_TYPE', property: 'plan', operator: 'eq', expected: 'beta', actual: 'beta', matched: true,
    });
    t.equal(e.explanation.ruleCount, 2);
    t.equal(e.explanation.rules.length, 1, 'rules after the deciding one are not evaluated');
  });

  t.test('variant flag: the constraints that failed', async (t) => {
    const body = { flagKey: 'color', entityId: 'user-1', context: { plan: 'free', email: 'a@elsewhere.org', age: '30' } };
    const e = await both(t, body, 'variant');
    t.same(e.explanation.decision, { by: 'no-rule-matched' });
    t.match(e.result, { match: false, reason: 'DEFAULT_EVALUATION_REASON', variantKey: 'blue' });
    const [first, second] = e.explanation.rules;
    t.same(first.segments.segments[0].constraints[0], {
      type: 'STRING_COMPARISON_TYPE', property: 'plan', operator: 'eq', expected: 'beta', actual: 'free', matched: false,
    });
    const internal = second.segments.segments.find((s: { key: string }) => s.key === 'internal');
    t.match(internal, { matched: false, matchType: 'ALL_MATCH_TYPE' });
    t.match(internal.constraints, [
      { property: 'email', operator: 'suffix', expected: '@example.com', actual: 'a@elsewhere.org', matched: false },
      { property: 'age', operator: 'gte', actual: '30', matched: true },
      { property: 'employee', actual: null, matched: false },
      { property: 'joined', actual: null, matched: false },
    ]);
    t.equal(second.segments.operator, 'AND_SEGMENT_OPERATOR');
  });

  t.test('boolean flag: the rollout that decided', async (t) => {
    const e = await both(t, { flagKey: 'new-checkout', entityId: 'u', context: { plan: 'beta' } }, 'boolean');
    t.match(e, { flagType: 'BOOLEAN_FLAG_TYPE', namespaceKey: 'default' });
    t.same(e.explanation.decision, { by: 'rollout', rank: 1, type: 'segment' });
    t.match(e.result, { enabled: true, reason: 'MATCH_EVALUATION_REASON', segmentKeys: ['beta-users'] });
    const other = await both(t, { flagKey: 'new-checkout', entityId: 'u', context: { plan: 'free' } }, 'boolean');
    t.match(other.explanation.rollouts[0], { rank: 1, type: 'segment', decided: false, segments: { matched: false } });
    t.match(other.explanation.rollouts[1], { rank: 2, type: 'threshold', threshold: { percentage: 50 } });
  });

  t.test('namespaced alias and snake_case', async (t) => {
    const e = await both(t, { flagKey: 'color', entityId: 'u' }, 'variant', `${ev}/namespaces/production`);
    t.equal(e.namespaceKey, 'production');
    t.equal(e.result.variantKey, e.explanation.result.variantKey);
    const snake = await post(`${ev}/explain`, { namespace_key: 'production', flag_key: 'color', entity_id: 'u', request_id: 'snake' });
    t.equal(snake.status, 200);
    t.match(snake.body, { namespaceKey: 'production', result: { requestId: 'snake' } });
  });

  t.test('property: over entity ids and contexts, result agrees with the explanation and with /evaluate/v1', async (t) => {
    const contexts = [
      {},
      { plan: 'beta' },
      { plan: 'free', email: 'someone@example.com', age: '30', employee: 'true', joined: '2020-01-01T00:00:00Z' },
      { email: 'x@example.com', age: '12', employee: 'true', joined: '2020-01-01T00:00:00Z' },
    ];
    let checked = 0;
    const outcomes = new Set<string>();
    for (let i = 0; i < 12; i++) {
      for (const context of contexts) {
        for (const [flagKey, endpoint] of [['color', 'variant'], ['new-checkout', 'boolean']] as const) {
          const body = { flagKey, entityId: `entity-${i * 7919}`, context, requestId: `p-${checked}` };
          const e = await both(t, body, endpoint);
          const x = e.explanation;
          // The explanation's own result is the evaluator's, and the decision accounts for it.
          for (const key of Object.keys(x.result)) t.same(e.result[key], x.result[key], key);
          if (x.flagType === 'VARIANT_FLAG_TYPE') {
            const decided = x.rules.filter((r: { decided: boolean }) => r.decided);
            if (x.decision.by === 'rule') {
              t.equal(decided.length, 1);
              t.equal(decided[0].rank, x.decision.rank);
              t.same(e.result.segmentKeys, decided[0].segments.matchedKeys);
              if (x.decision.outcome === 'distribution') {
                t.equal(e.result.variantKey, decided[0].bucket.variantKey);
                t.equal(e.result.match, true);
              } else t.equal(e.result.variantKey, x.defaultVariant);
            } else {
              t.equal(decided.length, 0);
              t.equal(e.result.match, false);
              t.equal(e.result.variantKey, x.defaultVariant);
            }
            outcomes.add(`${flagKey}:${x.decision.by}:${e.result.variantKey}`);
          } else {
            const decided = x.rollouts.filter((r: { decided: boolean }) => r.decided);
            if (x.decision.by === 'rollout') {
              t.equal(decided.length, 1);
              t.equal(e.result.enabled, decided[0].value);
            } else {
              t.equal(decided.length, 0);
              t.equal(e.result.enabled, x.enabled);
              t.equal(e.result.reason, 'DEFAULT_EVALUATION_REASON');
            }
            outcomes.add(`${flagKey}:${x.decision.by}:${x.decision.type ?? ''}:${e.result.enabled}`);
          }
          checked++;
        }
      }
    }
    t.equal(checked, 96);
    t.ok(outcomes.size >= 5, `several different decisions were exercised: ${[...outcomes].join(' ')}`);
  });

  t.test('errors are those of the evaluation endpoints', async (t) => {
    const cases: Array<[string, unknown, 'variant' | 'boolean']> = [
      ['unknown flag', { flagKey: 'nope', entityId: 'u' }, 'variant'],
      ['unknown namespace', { namespaceKey: 'nowhere', flagKey: 'color' }, 'variant'],
      ['unknown reference', { flagKey: 'color', reference: 'no-such-ref' }, 'variant'],
      ['flagKey missing', { entityId: 'u' }, 'variant'],
      ['flagKey not a string', { flagKey: 5 }, 'boolean'],
      ['context value not a string', { flagKey: 'color', context: { plan: 1 } }, 'variant'],
      ['context not an object', { flagKey: 'color', context: [] }, 'variant'],
      ['body an array', [], 'variant'],
      ['body not JSON', '{"flagKey":', 'variant'],
      ['body a string', '"color"', 'boolean'],
    ];
    for (const [name, body, endpoint] of cases) {
      const e = await post(`${ev}/explain`, body);
      const r = await post(`${ev}/${endpoint}`, body);
      t.equal(e.status, r.status, `${name}: status ${r.status}`);
      t.ok(e.status >= 400 && e.status < 500, name);
      t.same(e.body, r.body, `${name}: the same JSON error body`);
      t.same(Object.keys(e.body), ['code', 'message', 'details'], name);
    }
    const notFound = await post(`${ev}/explain`, { flagKey: 'nope' });
    t.equal(notFound.status, 404);
    t.equal(notFound.body.code, 5);
    const malformed = await post(`${ev}/explain`, '{"flagKey":');
    t.equal(malformed.status, 400);
    t.equal(malformed.body.code, 3);
    const mismatch = await post(`${ev}/namespaces/production/explain`, { namespaceKey: 'default', flagKey: 'color' });
    const mismatchVariant = await post(`${ev}/namespaces/production/variant`, { namespaceKey: 'default', flagKey: 'color' });
    t.equal(mismatch.status, 400);
    t.same(mismatch.body, mismatchVariant.body, 'path/body namespace disagreement as the variant alias');
  });

  t.test('not counted as an evaluation', async (t) => {
    const counted = async () => {
      const text = await server.app.vexil.metrics.registry.getSingleMetricAsString('vexil_evaluations_total');
      let total = 0;
      for (const line of text.split('\n')) if (line.startsWith('vexil_evaluations_total')) total += Number(line.split(' ').at(-1));
      return total;
    };
    const before = await counted();
    for (let i = 0; i < 3; i++) t.equal((await post(`${ev}/explain`, { flagKey: 'color', entityId: `u${i}` })).status, 200);
    t.equal((await post(`${ev}/explain`, { flagKey: 'nope' })).status, 404);
    t.equal(await counted(), before, 'explain leaves vexil_evaluations_total alone');
    t.equal((await post(`${ev}/variant`, { flagKey: 'color', entityId: 'u' })).status, 200);
    t.equal(await counted(), before + 1, 'while an evaluation is counted');
  });

  t.test('a flag too large to explain is refused; one just within the bound is explained', async (t) => {
    // One segment of 100 constraints under N rules: N × (1 rule + 1 segment + 100 constraints) checks.
    const constraints = Array.from({ length: 100 }, (_, i) => `      - { type: STRING_COMPARISON_TYPE, property: p${i}, operator: eq, value: v }`).join('\n');
    const flag = (key: string, rules: number) =>
      `  - key: ${key}\n    name: ${key}\n    enabled: true\n    variants:\n      - key: v\n    rules:\n${'      - segment: wide\n'.repeat(rules)}`;
    t.ok(100 * 102 > MAX_EXPLAINED_CHECKS && 98 * 102 <= MAX_EXPLAINED_CHECKS, 'the two flags sit either side of the bound');
    writeFileSync(
      join(dir, 'huge.features.yml'),
      `version: "1.4"\nnamespace: huge\nflags:\n${flag('big', 100)}${flag('large', 98)}segments:\n  - key: wide\n    name: wide\n    match_type: ALL_MATCH_TYPE\n    constraints:\n${constraints}\n`,
    );
    await store.refresh!();
    t.ok(store.get()!.namespaces.has('huge'), 'the state with the huge flags is served');
    const e = await post(`${ev}/explain`, { namespaceKey: 'huge', flagKey: 'big', entityId: 'u' });
    t.equal(e.status, 400);
    t.equal(e.body.code, 9);
    t.match(e.body.message, /flag "big" is too large to explain: its trace would show 10200 segment and constraint checks \(at most 10000\)/);
    t.equal((await post(`${ev}/variant`, { namespaceKey: 'huge', flagKey: 'big', entityId: 'u' })).status, 200, 'evaluating it is unaffected');
    const within = await post(`${ev}/explain`, { namespaceKey: 'huge', flagKey: 'large', entityId: 'u' });
    t.equal(within.status, 200);
    t.equal(within.body.explanation.rules.length, 98, 'no rule matched: every rule is shown');
    t.ok(within.text.length < 1_500_000, `the largest answer stays near 1 MB (${within.text.length} bytes)`);
  });
});

t.test('namespace-scoped tokens: explain only in their namespace', async (t) => {
  const s = await startAuthServer(t, { yaml: 'authentication:\n  required: true\n  methods:\n    token:\n      enabled: true\n' });
  const boot = bootstrapTokenFrom(s.logs)!;
  const prod = (await createToken(s.url, boot, { name: 'prod', namespaceKey: 'production' })).clientToken;
  const call = (path: string, body: unknown): Promise<JsonResponse> => request(`${s.url}${path}`, { token: prod, body });

  t.equal((await call('/evaluate/v1/explain', { namespaceKey: 'production', flagKey: 'color' })).status, 200);
  t.equal((await call('/evaluate/v1/namespaces/production/explain', { flagKey: 'color' })).status, 200, 'the path names it');
  for (const [path, body] of [
    ['/evaluate/v1/explain', { namespaceKey: 'default', flagKey: 'color' }],
    ['/evaluate/v1/explain', { flagKey: 'color' }],
    ['/evaluate/v1/namespaces/default/explain', { flagKey: 'color' }],
    ['/evaluate/v1/namespaces/production/explain', { namespaceKey: 'default', flagKey: 'color' }],
  ] as const) {
    const r = await call(path, body);
    t.equal(r.status, 403, `${path} ${JSON.stringify(body)}`);
    t.same(r.body, denied('production'));
  }
  const anonymous = await request(`${s.url}/evaluate/v1/explain`, { body: { flagKey: 'color' } });
  t.equal(anonymous.status, 401, 'authentication required as for the evaluation section');
});
