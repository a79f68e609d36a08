/**
 * The policy's checks on a snapshot (src/state/policy/policy-checks.ts), run by the loader with the
 * semantic checks: each rule on fixtures/policy/state, the near misses quiet (a matching flag whose
 * number metadata is matched as written, a matching segment key), nothing without a policy, and
 * an empty policy adding nothing.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { load } from '../../../src/state/load.js';
import { EMPTY_POLICY, readPolicy, type Policy } from '../../../src/state/policy/policy-file.js';
import { policyChecks } from '../../../src/state/policy/policy-checks.js';
import { stateFile } from '../../support/state-fixture.js';
import { REPO } from '../../cli/run-cli.js';

const STATE = `${REPO}fixtures/policy/state`;
const read = readPolicy('policy.yml', readFileSync(`${STATE}/.vexil/policy.yml`));
const policy = (read as { policy: Policy }).policy;
const files = [stateFile(STATE, 'flags.features.yml')];
const today = new Date('2026-11-27T00:00:00Z');

t.test('each policy rule, at its place; near misses quiet', async (t) => {
  const snapshot = load(files, { reference: 'main', revision: 'r1' }).snapshot!;
  const reports = policyChecks(snapshot, policy);
  t.same(reports.map((r) => [r.rule, r.place]), [
    ['policy.key.pattern', { kind: 'flag', flag: 'Beta_Access', field: 'key' }],
    ['policy.metadata.pattern', { kind: 'flag', flag: 'Beta_Access', field: 'metadata', key: 'owner' }],
    ['policy.metadata.required', { kind: 'flag', flag: 'no-expires', field: 'metadata-map' }],
    ['policy.metadata.required', { kind: 'flag', flag: 'no-metadata', field: 'key' }],
    ['policy.key.pattern', { kind: 'segment', segment: 'beta_users' }],
  ]);
  t.ok(reports.every((r) => r.severity === 'error' && r.namespace === 'default'));
  t.same(policyChecks(snapshot, EMPTY_POLICY), []);
});

t.test('through the loader: located with the semantic checks, only when a policy is given', async (t) => {
  const withPolicy = load(files, { reference: 'main', revision: 'r1', checks: { today, policy } });
  t.same(withPolicy.problems.filter((p) => p.rule.startsWith('policy.')).map((p) => `${p.line}:${p.column} ${p.rule}`), [
    '7:10 policy.key.pattern', '12:7 policy.metadata.pattern', '15:10 policy.metadata.required', '24:5 policy.metadata.required', '37:10 policy.key.pattern',
  ]);
  const without = load(files, { reference: 'main', revision: 'r1', checks: { today } });
  t.same(without.problems.filter((p) => p.rule.startsWith('policy.')), []);
});

t.test("a namespace's own demands add to and replace the top level's, in that namespace only", async (t) => {
  const dir = `${REPO}fixtures/policy/namespaces`;
  const own = readPolicy('policy.yml', readFileSync(`${dir}/.vexil/policy.yml`));
  if (!('policy' in own)) return t.fail(JSON.stringify(own.problems));
  const snapshot = load([stateFile(dir, 'flags.features.yml')], { reference: 'main', revision: 'r1' }).snapshot!;
  const reports = policyChecks(snapshot, own.policy);
  t.same(reports.map((r) => [r.namespace, r.rule, r.place]), [
    ['checkout', 'policy.key.pattern', { kind: 'flag', flag: 'payment-provider', field: 'key' }],
    ['checkout', 'policy.metadata.required', { kind: 'flag', flag: 'payment-provider', field: 'metadata-map' }],
  ]);
  t.match(reports[0]!.message, /pattern `\^checkout-\[a-z0-9-\]\+\$`/);
  t.match(reports[1]!.message, /has no `ticket` in its metadata/);
});
