/**
 * `GET /api/v1/diff?...&policy=true` through a real `vexil serve` on a real Git repository served
 * over HTTP: the guards of the base reference's `.vexil/policy.yml` (not the head's loosened one)
 * in the answer, valid against schemas/diff.schema.json, the impact taken for the impact guard;
 * a change within the limits passes; without `policy` the answer is as before; a malformed policy
 * file is a 400 with its located problems, so is a diff where neither side has one, and so is a
 * `policy` value other than true, false or auto; `policy=auto` answers guards only when a side has a policy file.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import tap from 'tap';
import { REPO, serveCli } from '../cli/run-cli.js';
import { gitUnavailableReason, startGitFixture } from '../support/git-fixture.js';
import { testsNeeding } from '../support/requirements.js';

const t = testsNeeding(tap, 'git', gitUnavailableReason());
const validate = new Ajv({ allErrors: true, strict: true }).compile(JSON.parse(readFileSync(join(REPO, 'schemas/diff.schema.json'), 'utf8')) as object);
const fixture = (p: string) => readFileSync(join(REPO, 'fixtures/guards', p), 'utf8');

t.test('GET /api/v1/diff?policy=true: the base reference\'s guards on the change', async (t) => {
  const g = await startGitFixture(t);
  const base = await g.repo.commit('main', { 'features.yml': fixture('base/features.yml'), '.vexil/policy.yml': fixture('base/.vexil/policy.yml') });
  await g.repo.commit('feature', { 'features.yml': fixture('head/features.yml'), '.vexil/policy.yml': fixture('head/.vexil/policy.yml') }, { parent: base });
  await g.repo.commit('feature-ok', { 'features.yml': fixture('head-ok/features.yml'), 'checkout.test.yml': fixture('head-ok/checkout.test.yml') }, { parent: base });
  await g.repo.commit('broken-policy', { '.vexil/policy.yml': 'guards:\n  max_rollout_change: 200\n' }, { parent: base });
  const noPolicy = await g.repo.commit('no-policy', { 'features.yml': fixture('base/features.yml') }, { parent: null });
  await g.repo.commit('no-policy-head', { 'features.yml': fixture('head-ok/features.yml') }, { parent: noPolicy });
  const dir = mkdtempSync(join(tmpdir(), 'vexil-diff-guards-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const config = join(dir, 'vexil.yml');
  writeFileSync(config, [
    'server: { host: 127.0.0.1, http_port: 0 }',
    'log: { level: info, encoding: json }',
    `data_dir: ${join(dir, 'data')}`,
    'storage:',
    '  type: git',
    '  git:',
    `    repository: ${g.url}`,
    `    cache_dir: ${join(dir, 'cache')}`,
    '    poll_interval: 1h',
    '',
  ].join('\n'));
  const { listening } = await serveCli(t, ['serve', '--config', config]);
  const api = async (query: string) => {
    const res = await fetch(`${String(listening.url)}/api/v1/diff?${query}`);
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  const r = await api('base=main&head=feature&policy=true');
  t.equal(r.status, 200, JSON.stringify(r.body));
  t.ok(validate(r.body), JSON.stringify(validate.errors));
  t.equal(r.body.impact.sample.entities, 10_000, 'the impact guard takes the default sample');
  t.match(r.body.guards, { policy: '.vexil/policy.yml', from: 'base', failed: true });
  const findings = r.body.guards.findings as { rule: string; flag?: string; file: string; line: number; message: string }[];
  t.same(findings.map((f) => [f.rule, f.flag ?? null]), [
    ['guard.protected', 'legacy-banner'],
    ['guard.max-rollout-change', 'payment-provider'],
    ['guard.max-impact-share', 'payment-provider'],
    ['guard.impact.unmeasured', null],
  ]);
  t.match(findings[1]!.message, /a move of 40 percentage points; the policy allows at most 20 per change/);
  t.ok(findings.every((f) => f.file === '' && f.line === 0), 'no file positions: the server holds snapshots');

  const asked = await api('base=main&head=feature&policy=true&impact=500');
  t.equal(asked.body.impact.sample.entities, 500, 'the impact asked for is the one measured');
  const ok = await api('base=main&head=feature-ok&policy=true');
  t.equal(ok.status, 200);
  t.same(ok.body.guards, { policy: '.vexil/policy.yml', from: 'base', failed: false, findings: [] });
  const plain = await api('base=main&head=feature');
  t.notOk('guards' in plain.body, 'no guards unless asked');
  t.notOk('impact' in plain.body);
  const off = await api('base=main&head=feature&policy=false');
  t.notOk('guards' in off.body);

  const broken = await api('base=broken-policy&head=feature&policy=true');
  t.equal(broken.status, 400, JSON.stringify(broken.body));
  t.equal(broken.body.code, 9);
  t.match(broken.body.message, /the policy file of base reference "broken-policy" is invalid: \.vexil\/policy\.yml:2:23: error policy\.invalid: `guards\.max_rollout_change` must be <= 100/);
  t.match(broken.body.details, [{ rule: 'policy.invalid', file: '.vexil/policy.yml', line: 2, column: 23 }]);
  const none = await api('base=no-policy&head=no-policy-head&policy=true');
  t.equal(none.status, 400);
  t.match(none.body.message, /neither reference "no-policy" nor "no-policy-head" has \.vexil\/policy\.yml/);
  const headOnly = await api('base=no-policy&head=main&policy=true');
  t.match(headOnly.body.guards, { from: 'head', failed: false });
  const bad = await api('base=main&head=feature&policy=yes');
  t.equal(bad.status, 400);
  t.match(bad.body.message, /policy must be true, false or auto \(got "yes"\)/);

  // policy=auto (the UI's diff page): the guards when a side has a policy file, none (and no refusal) otherwise.
  const auto = await api('base=main&head=feature&policy=auto');
  t.equal(auto.status, 200);
  t.same(auto.body.guards, r.body.guards, 'auto with a policy: the same guards as policy=true');
  const autoNone = await api('base=no-policy&head=no-policy-head&policy=auto');
  t.equal(autoNone.status, 200, JSON.stringify(autoNone.body));
  t.notOk('guards' in autoNone.body, 'auto without a policy: no guards, no refusal');
  const autoBroken = await api('base=broken-policy&head=feature&policy=auto');
  t.equal(autoBroken.status, 400, 'auto still refuses a malformed governing policy');
});
