/**
 * The checks of served snapshots (src/store/served-checks.ts) through a real store on a local
 * folder: computed on the first ask and kept with the snapshot (the same answer, not a second
 * computation) until the clock hour turns; a new snapshot gets its own; the state's policy file (its
 * checks and `rules:` severities apply as in `vexil validate`); a folder that moved on since the snapshot
 * was built is a 503-style refusal, not the checks of other files.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { VexilError } from '../../src/errors.js';
import { createLocalSource } from '../../src/sources/local.js';
import { createSnapshotStore } from '../../src/store/snapshot-store.js';
import { REPO } from '../cli/run-cli.js';
import { STATE_LIMITS, STORE_DEFAULTS } from '../support/config-defaults.js';

const GROWTH = readFileSync(join(REPO, 'test/ui/fixtures/main/growth.features.yml'), 'utf8');

function folder(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'vexil-served-checks-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'growth.features.yml'), GROWTH);
  return dir;
}

t.test('computed once per snapshot and clock hour, off the build', async (t) => {
  const dir = folder(t);
  let now = Date.parse('2026-11-27T10:15:00Z');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }), now: () => new Date(now) });
  t.teardown(() => store.close());
  await store.start();
  const snapshot = store.get()!;
  t.same(snapshot.warnings, [], 'the build itself does not run the checks');

  const first = await store.checks(snapshot);
  t.equal(first.reference, 'local');
  t.equal(first.revision, snapshot.revision);
  t.equal(first.checkedAt, '2026-11-27T10:15:00.000Z');
  t.same(
    first.checks.map((c) => [c.rule, `${c.line}:${c.column}`, c.namespace, c.flag ?? '', c.segment ?? '']),
    [
      ['flag.rollouts.no-effect', '15:5', 'growth', 'beta-access', ''],
      ['rollout.unreachable', '16:9', 'growth', 'beta-access', ''],
      ['flag.expired', '20:7', 'growth', 'beta-access', ''],
      ['variant.unserved', '28:15', 'growth', 'colors', ''],
      ['rule.distributions.incomplete', '31:9', 'growth', 'colors', ''],
      ['rule.unreachable', '34:9', 'growth', 'colors', ''],
      ['segment.unmatchable', '60:9', 'growth', '', 'beta-users'],
    ],
  );
  t.ok(first.checks.every((c) => c.file === 'growth.features.yml' && c.severity === 'warning' && c.hint !== undefined && c.hint !== ''));

  now += 30 * 60_000;
  t.equal(await store.checks(snapshot), first, 'the same hour: the kept answer');
  now += 31 * 60_000;
  const later = await store.checks(snapshot);
  t.not(later, first, 'the next hour: computed again ("today" moved)');
  t.equal(later.checkedAt, '2026-11-27T11:16:00.000Z');
  t.same(later.checks, first.checks);

  const [a, b] = await Promise.all([store.checks(snapshot), store.checks(snapshot)]);
  t.equal(a, b, 'concurrent asks share one computation');
});

t.test('the state\'s own policy file: its checks and severities', async (t) => {
  const dir = folder(t);
  mkdirSync(join(dir, '.vexil'));
  writeFileSync(join(dir, '.vexil/policy.yml'), 'rules:\n  flag.expired: "off"\n  rule.unreachable: error\nmetadata:\n  required: [team]\n');
  const store = createSnapshotStore({
    ...STORE_DEFAULTS,
    source: createLocalSource({ ...STATE_LIMITS, path: dir }),
    now: () => new Date('2026-11-27T10:00:00Z'),
  });
  t.teardown(() => store.close());
  await store.start();
  const served = await store.checks(store.get()!);
  const rules = served.checks.map((c) => `${c.rule} ${c.severity}`);
  t.notOk(rules.includes('flag.expired warning'), '`off` drops the rule');
  t.ok(rules.includes('rule.unreachable error'), 'a severity raised');
  t.ok(served.checks.some((c) => c.flag === 'onboarding-tour' && /team/.test(c.message)), 'the policy\'s own checks run (required metadata)');
});

t.test('a policy file that does not parse: the catalogue\'s checks and severities', async (t) => {
  const dir = folder(t);
  mkdirSync(join(dir, '.vexil'));
  writeFileSync(join(dir, '.vexil/policy.yml'), 'rules: [not, a, map\n');
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source: createLocalSource({ ...STATE_LIMITS, path: dir }), now: () => new Date('2026-11-27T10:00:00Z') });
  t.teardown(() => store.close());
  await store.start();
  const served = await store.checks(store.get()!);
  t.ok(served.checks.some((c) => c.rule === 'flag.expired' && c.severity === 'warning'), 'the default severities');
});

t.test('a folder that moved on since the snapshot: refused, not checked against other files', async (t) => {
  const dir = folder(t);
  const source = createLocalSource({ ...STATE_LIMITS, path: dir });
  const store = createSnapshotStore({ ...STORE_DEFAULTS, source });
  t.teardown(() => store.close());
  await store.start();
  const old = store.get()!;
  writeFileSync(join(dir, 'growth.features.yml'), GROWTH.replace('{variant: blue, rollout: 30}', '{variant: blue, rollout: 50}'));
  // What the source lists now is another revision than the snapshot's.
  const listed = await source.refs();
  t.not(listed.get('local')!.id, old.revision);
  const refused = await store.checks(old).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(refused instanceof VexilError, String(refused));
  t.match(refused, { code: 14, message: /reference "local" changed since revision .*: its new state is being loaded/, headers: { 'Retry-After': '1' } });
});
