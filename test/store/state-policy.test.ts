/**
 * The policy file a snapshot keeps (src/store/state-policy.ts): read from `.vexil/policy.yml` at the
 * state root only, parsed into a policy or kept as its located problems, its size checked before
 * reading (the bytes are never asked for when the known size is over the limit) and again after,
 * an unreadable file kept as a problem, and readState keeping it with an accepted snapshot (and
 * never refusing a state for it). End to end in test/server/diff-guards.test.ts.
 */
import t from 'tap';
import { MAX_POLICY_FILE_SIZE } from '../../src/state/policy/policy-file.js';
import { readState } from '../../src/store/read-state.js';
import { readStatePolicy, statePolicyOf } from '../../src/store/state-policy.js';
import type { SourceFile } from '../../src/sources/types.js';

function file(path: string, text: string, size?: number): SourceFile {
  const bytes = new TextEncoder().encode(text);
  return { path, contentId: path, ...(size !== undefined ? { size } : {}), bytes: async () => bytes };
}

const STATE = 'namespace: default\nflags:\n  - {key: f, name: f, enabled: true}\n';

t.test('the root .vexil/policy.yml, parsed; other paths ignored', async (t) => {
  t.equal(await readStatePolicy([file('features.yml', STATE), file('sub/.vexil/policy.yml', 'guards: {max_rollout_change: 5}\n')]), undefined);
  const got = await readStatePolicy([file('.vexil/policy.yml', 'guards:\n  max_rollout_change: 5\n  protected: [{namespace: checkout}]\n')]);
  t.ok(got !== undefined && 'policy' in got);
  if (got !== undefined && 'policy' in got) t.same(got.policy.guards, { maxRolloutChange: 5, protected: [{ namespace: 'checkout' }] });
});

t.test('a malformed, oversized or unreadable policy file is kept as its located problems', async (t) => {
  const bad = await readStatePolicy([file('.vexil/policy.yml', 'guards:\n  max_impact_share: 2\n')]);
  t.match(bad, { file: '.vexil/policy.yml', problems: [{ rule: 'policy.invalid', file: '.vexil/policy.yml', line: 2, column: 21 }] });
  let asked = false;
  const huge: SourceFile = { path: '.vexil/policy.yml', contentId: 'x', size: MAX_POLICY_FILE_SIZE + 1, bytes: async () => { asked = true; return new Uint8Array(0); } };
  t.match(await readStatePolicy([huge]), { problems: [{ rule: 'file.too-large' }] });
  t.notOk(asked, 'not read: its known size is over the limit');
  t.match(await readStatePolicy([file('.vexil/policy.yml', `#${'x'.repeat(MAX_POLICY_FILE_SIZE)}\n`)]), { problems: [{ rule: 'file.too-large' }] }, 'no size known: checked on the bytes');
  const gone: SourceFile = { path: '.vexil/policy.yml', contentId: 'y', bytes: () => Promise.reject(new Error('ENOENT')) };
  t.match(await readStatePolicy([gone]), { problems: [{ rule: 'file.unreadable', message: /could not be read: ENOENT/ }] });
});

t.test('readState keeps it with an accepted snapshot; a broken policy never rejects the state', async (t) => {
  const fileSet = (policy: string) => ({ revision: { id: 'r1', ref: 'main' }, files: [file('features.yml', STATE), file('.vexil/policy.yml', policy)] });
  const limits = { maxFileSize: 1 << 20, maxStateSize: 1 << 22 };
  const ok = await readState(fileSet('guards: {max_impact_share: 0.5}\n'), { reference: 'main', ...limits });
  t.ok(ok.snapshot);
  t.match(statePolicyOf(ok.snapshot!), { file: '.vexil/policy.yml', policy: { guards: { maxImpactShare: 0.5 } } });
  const broken = await readState(fileSet('guards: [\n'), { reference: 'main', ...limits });
  t.ok(broken.snapshot, 'the state is served whatever its policy file');
  t.match(statePolicyOf(broken.snapshot!), { problems: [{ rule: 'yaml.syntax' }] });
  const skipped = await readState(fileSet('guards: {max_impact_share: 0.5}\n'), { reference: 'main', policy: false, ...limits });
  t.equal(statePolicyOf(skipped.snapshot!), undefined, 'policy: false reads no policy');
});
