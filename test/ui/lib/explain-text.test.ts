/**
 * The console's words for an explanation (src/ui/lib/explain-text.ts), fed with real answers: the
 * server's own explain builder (the one `POST /evaluate/v1/explain` sends) over the examples/ state,
 * round-tripped through JSON as the browser receives it.
 */
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { explainResponse } from '../../../src/server/evaluation/explain-response.js';
import { parseEvaluationRequest } from '../../../src/server/evaluation/validate-request.js';
import { createLocalSource, LOCAL_REFERENCE } from '../../../src/sources/local.js';
import { readState } from '../../../src/store/read-state.js';
import type { Snapshot } from '../../../src/model/snapshot.js';
import { constraintText, decisionText, resultFields, traceSteps } from '../../../src/ui/lib/explain-text.js';
import type { ExplainResponse } from '../../../src/ui/types.js';
import { STATE_LIMITS } from '../../support/config-defaults.js';

const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url));

async function examples(): Promise<Snapshot> {
  const source = createLocalSource({ ...STATE_LIMITS, path: EXAMPLES });
  const rev = (await source.refs()).get(LOCAL_REFERENCE)!;
  const result = await readState(await source.files(rev), { ...STATE_LIMITS, reference: LOCAL_REFERENCE });
  if (result.snapshot === undefined) throw new Error(JSON.stringify(result.problems));
  return result.snapshot;
}

t.test('explain trace in words', async (t) => {
  const snapshot = await examples();
  const explain = (body: Record<string, unknown>) => JSON.parse(JSON.stringify(explainResponse(parseEvaluationRequest(body), snapshot, 0))) as ExplainResponse;

  t.test('a variant rule decided by its bucket', async (t) => {
    const r = explain({ flagKey: 'color-theme', entityId: 'u-1', context: { beta_opt_in: 'true', plan: 'pro', platform: 'ios' } });
    t.same(resultFields(r), [
      { label: 'Variant', value: 'dark' },
      { label: 'Match', value: 'true' },
      { label: 'Reason', value: 'MATCH_EVALUATION_REASON' },
      { label: 'Segments', value: 'beta-testers, mobile-users' },
      { label: 'Attachment', value: '{"background":"#111111","foreground":"#eeeeee"}' },
    ]);
    t.match(decisionText(r), /^Rule 2 decided: segments beta-testers, mobile-users matched, bucket \d+ is in dark \[0, 500\)\.$/);
    const steps = traceSteps(r);
    t.same(steps.map((s) => [s.title, s.outcome]), [['Rule 1', 'not matched'], ['Rule 2', 'decided'], ['Rule 3', 'not evaluated']]);
    t.equal(steps[0]!.subject, 'segment internal-users');
    t.same(steps[0]!.segments[0]!.constraints[0], { matched: false, text: 'entity id ends with "@example.com"; got "u-1"' });
    t.equal(steps[1]!.subject, 'segments beta-testers AND mobile-users');
    t.same(steps[1]!.segments.map((s) => [s.key, s.matched, s.match]), [['beta-testers', true, 'all constraints'], ['mobile-users', true, 'any constraint']]);
    t.same(steps[1]!.segments[1]!.constraints, [
      { matched: true, text: 'platform is "ios"; got "ios"' },
      { matched: false, text: 'platform is "android"; got "ios"' },
    ]);
    const b = steps[1]!.bucket!;
    t.same(b.ranges.map((x) => [x.variantKey, x.range, x.hit]), [['dark', '[0, 500)', true], ['light', '[500, 1000)', false]]);
    t.equal(b.outside, false);
  });

  t.test('no rule matched: the failed constraints and the default variant', async (t) => {
    const r = explain({ flagKey: 'color-theme', entityId: 'u-1', context: { plan: 'free' } });
    t.equal(decisionText(r), 'No rule matched (3 rules): the default variant light.');
    t.same(resultFields(r).slice(0, 4).map((f) => f.value), ['light', 'false', 'DEFAULT_EVALUATION_REASON', '(none)']);
    const beta = traceSteps(r)[1]!.segments[0]!;
    t.same(beta.constraints, [
      { matched: false, text: 'beta_opt_in is true; not in the context', missingKey: 'beta_opt_in' },
      { matched: false, text: 'plan is one of [pro, enterprise]; got "free"' },
    ]);
    const internal = traceSteps(r)[0]!.segments[0]!.constraints;
    t.ok(internal.length > 0 && internal.every((c) => c.missingKey === undefined), 'an entity-id constraint reads the entity id: never a missing context key');
  });

  t.test('a boolean flag: rollouts, the threshold bucket, the fall-through', async (t) => {
    const r = explain({ flagKey: 'new-search', entityId: 'u-7', context: {} });
    t.same(resultFields(r).map((f) => f.label), ['Value', 'Reason', 'Segments']);
    t.match(decisionText(r), /^No rollout matched \(2 rollouts\): the flag's enabled value, false\.$/);
    const steps = traceSteps(r);
    t.same(steps.map((s) => [s.title, s.subject]), [['Rollout 1', 'segment internal-users → true'], ['Rollout 2', 'threshold 25% → true']]);
    t.match(steps[1]!.threshold, /^bucket \d+ (<|≥) 25$/);
    const staff = explain({ flagKey: 'new-search', entityId: 'ann@example.com', context: {} });
    t.equal(decisionText(staff), 'Rollout 1 decided: segment internal-users matched → true.');
    t.same(traceSteps(staff).map((s) => s.outcome), ['decided', 'not evaluated']);
    t.equal(traceSteps(staff)[1]!.title, 'Rollout 2');
  });
});

t.test('hand-made explanations: disabled flag, outside every distribution, several rules left', async (t) => {
  const base = { flagKey: 'f', namespaceKey: 'default', flagType: 'VARIANT_FLAG_TYPE' as const };
  const result = { match: false, segmentKeys: [], reason: 'FLAG_DISABLED_EVALUATION_REASON' as const, variantKey: '', variantAttachment: '', requestId: 'r', requestDurationMillis: 0, timestamp: '', flagKey: 'f' };
  const explanation = {
    namespaceKey: 'default',
    flagKey: 'f',
    entityId: 'e',
    enabled: false,
    flagType: 'VARIANT_FLAG_TYPE' as const,
    rules: [],
    ruleCount: 4,
    defaultVariant: '',
    // The explanation's own copy of the result (the console shows `result`, the evaluator's answer).
    result: { flagKey: 'f', match: false, segmentKeys: [], reason: 'FLAG_DISABLED_EVALUATION_REASON' as const, variantKey: '', variantAttachment: '' },
  };
  const disabled: ExplainResponse = { ...base, result, explanation: { ...explanation, decision: { by: 'flag-disabled' } } };
  t.equal(decisionText(disabled), 'The flag is disabled: no variant (the flag has no default variant).');
  t.same(traceSteps(disabled), [], 'no rule evaluated');
  t.same(resultFields(disabled).find((f) => f.label === 'Variant'), { label: 'Variant', value: '(none)' });

  const set = { operator: 'OR_SEGMENT_OPERATOR' as const, segments: [{ key: 's', matchType: 'ALL_MATCH_TYPE' as const, matched: true, constraints: [] }], matched: true, matchedKeys: ['s'] };
  const outside: ExplainResponse = {
    ...base,
    result: { ...result, reason: 'DEFAULT_EVALUATION_REASON' },
    explanation: {
      ...explanation,
      enabled: true,
      defaultVariant: 'off',
      rules: [{ rank: 1, segments: set, decided: true, bucket: { value: 900, distributions: [{ variantKey: 'on', from: 0, to: 300 }], variantKey: null } }],
      decision: { by: 'rule', rank: 1, outcome: 'outside-distributions' },
    },
  };
  t.equal(decisionText(outside), 'Rule 1 decided: segment s matched, but bucket 900 is outside every distribution (they cover [0, 300)): no match, the default variant off.');
  const steps = traceSteps(outside);
  t.equal(steps[0]!.bucket!.outside, true);
  t.equal(steps[0]!.segments[0]!.match, 'no constraints: matches everyone');
  t.same(steps[1], { title: 'Rules 2–4', subject: 'after the deciding one', outcome: 'not evaluated', segments: [] });
});

t.test('constraint wording', async (t) => {
  t.equal(constraintText({ type: 'NUMBER_COMPARISON_TYPE', property: 'age', operator: 'gte', expected: '18', actual: '30', matched: true }), 'age ≥ 18; got "30"');
  t.equal(constraintText({ type: 'STRING_COMPARISON_TYPE', property: 'email', operator: 'notempty', expected: '', actual: null, matched: false }), 'email is not empty; not in the context');
});
